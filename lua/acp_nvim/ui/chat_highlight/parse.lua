-- An item's text parsed (with the whole items drawn just before it, in a batch) and its captures set as
-- extmarks, a slice of the tick's budget at a time; a text no markdown capture can match, or one the parsers must
-- not get (ui/parse_guard.lua), is drawn plain without a parse.

local M = {}

local api = vim.api
local changes = require("acp_nvim.ui.chat_highlight.changes")
local items = require("acp_nvim.ui.chat.items")
local refused = require("acp_nvim.ui.parse_guard").refused
local state = require("acp_nvim.ui.chat_highlight.state")

---@class AcpChatHighlightJob
---@field entries AcpChatItem[] the items parsed, in buffer order (several: a batch of whole items)
---@field from integer first row parsed, relative to the first item
---@field rows integer rows parsed
---@field text string
---@field parser vim.treesitter.LanguageTree|nil nil for plain text, which is not parsed
---@field open_row integer|nil plain text: the row of its last paragraph (what `open_block_row` gives a parse)
---@field parsed boolean|nil
---@field failed boolean|nil
---@field iters {query: vim.treesitter.Query, lang: string, iter: function}[]|nil
---@field base integer|nil buffer row of `from` when the captures started to be applied
---@field returned boolean|nil parse() has returned: a callback after that comes from a later tick

local hl_ids = {} ---@type table<string, integer>

--- Whether the lines close every code fence they open: only such an item may be parsed with the items after
--- it (an open fence would take them in).
---@param lines string[]
---@return boolean
local function fences_closed(lines)
  local open = false
  for _, line in ipairs(lines) do
    if line:find("^ ? ? ?```") or line:find("^ ? ? ?~~~") then
      open = not open
    end
  end
  return not open
end

---@param lang string
---@param name string
---@return integer
local function hl_id(lang, name)
  local key = name .. "." .. lang
  local id = hl_ids[key]
  if id == nil then
    id = api.nvim_get_hl_id_by_name("@" .. key)
    hl_ids[key] = id
  end
  return id
end

--- The first row of the block still open at the end of the parsed text (the last top-level block, inside the
--- last heading's section): what a later append can still change.
---@param job AcpChatHighlightJob
---@return integer
local function open_block_row(job)
  if job.parser == nil then
    return job.open_row or 0
  end
  local tree = job.parser:trees()[1]
  if tree == nil then
    return 0
  end
  local node = tree:root()
  while true do
    local count = node:named_child_count()
    if count == 0 then
      break
    end
    local last = node:named_child(count - 1)
    if last == nil then
      break
    end
    node = last
    if last:type() ~= "section" then
      break
    end
  end
  local row = node:start()
  return row
end

---@param job AcpChatHighlightJob
local function start_captures(job)
  local iters = {}
  assert(job.parser ~= nil, "a plain text job has its (empty) captures already")
  -- Parents first, as Neovim's highlighter does: an injected language's captures are set later and win.
  job.parser:for_each_tree(function(tstree, ltree)
    local lang = ltree:lang()
    local q = state.query_of(lang)
    if q then
      iters[#iters + 1] = { query = q, lang = lang, iter = q:iter_captures(tstree:root(), job.text) }
    end
  end)
  job.iters = iters
end

--- Applies captures until done (true) or the deadline (false).
---@param chat AcpChat
---@param job AcpChatHighlightJob
---@param deadline number
---@return boolean
local function apply_captures(chat, job, deadline)
  local buf = chat.buf
  local first = items.item_range(chat, job.entries[1])
  if first == nil then
    return true
  end
  local base = first + job.from
  if job.base == nil then
    job.base = base
    api.nvim_buf_clear_namespace(buf, state.ns, base, base + job.rows)
  end
  local set = api.nvim_buf_set_extmark
  local opts = { strict = false }
  local iters = job.iters or {}
  local n = 0
  while iters[1] ~= nil do
    local capture = iters[1]
    local id, node, metadata, match = capture.iter()
    if id == nil then
      table.remove(iters, 1)
    else
      local name = capture.query.captures[id]
      if name:sub(1, 1) ~= "_" and name ~= "spell" and name ~= "nospell" then
        local capture_meta = metadata[id]
        local sr, sc, er, ec
        if capture_meta and capture_meta.range then
          sr, sc, er, ec =
            capture_meta.range[1], capture_meta.range[2], capture_meta.range[3], capture_meta.range[4]
        else
          sr, sc, er, ec = node:range()
        end
        opts.end_row, opts.end_col = base + er, ec
        opts.hl_group = hl_id(capture.lang, name)
        opts.priority = tonumber(metadata.priority or capture_meta and capture_meta.priority) or 100
        opts.conceal = metadata.conceal or capture_meta and capture_meta.conceal or nil
        local url = capture_meta and capture_meta.url
        if type(url) == "number" and match then
          local other = match:captures()[url]
          url = other and other[1] and vim.treesitter.get_node_text(other[1], job.text) or nil
        end
        opts.url = type(url) == "string" and url or nil
        set(buf, state.ns, base + sr, sc, opts)
        if metadata.conceal_lines or capture_meta and capture_meta.conceal_lines then
          set(buf, state.ns, base + sr, 0, { end_row = base + er, conceal_lines = "", strict = false })
        end
      end
      n = n + 1
      if n % 64 == 0 and vim.uv.hrtime() > deadline then
        return false
      end
    end
  end
  return true
end

--- Whether no capture of the markdown and markdown_inline queries can match `text`: none of the characters
--- inline syntax starts with (emphasis, code, links, autolinks and HTML, entities, escapes, tables, headings),
--- no line that starts a list, a quote, a setext underline, a thematic break, front matter or indented code,
--- no hard line break. Conservative: `snake_case` is not plain. (`@spell` on paragraphs is not applied.)
---@param text string
---@return boolean
local function plain(text)
  if text:find("[`*_~%[%]<>#|\\&]") or text:find("  \n") or text:find("  $") then
    return false
  end
  local lines = "\n" .. text
  return not (
    lines:find("\n[ \t]*[-+=]")
    or lines:find("\n[ \t]*%d+[.)]")
    or lines:find("\n    ")
    or lines:find("\n\t")
  )
end

--- The row of the last paragraph of plain `lines` (after their last blank line), 0-based.
---@param lines string[]
---@return integer
local function last_paragraph_row(lines)
  for i = #lines, 1, -1 do
    if lines[i]:find("^%s*$") then
      return i
    end
  end
  return 0
end

--- Starts parsing `entry` from row `from` (relative to it), with the whole items drawn just before it when it is
--- parsed whole; nil when there is nothing to parse or the block is deferred.
---@param chat AcpChat
---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@param first integer the item's first row
---@param from integer
---@param resume fun(chat: AcpChat) continues the highlighting once an asynchronous parse is done
---@return AcpChatHighlightJob|nil
local function start_job(chat, st, entry, first, from, resume)
  local buf = chat.buf
  local _, last = items.item_range(chat, entry)
  local row = first + from
  if last == nil or row > last then
    return nil
  end
  local size = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, row)
  if not changes.parsable_now(st, entry, from, size) then
    return nil
  end
  local entries = { entry }
  local chunks = { api.nvim_buf_get_lines(buf, row, last + 1, false) }
  -- A text the parsers must not get (ui/parse_guard.lua) is parsed with no other: the items beside it keep
  -- their highlights.
  -- The item's own text, joined and judged once: alone in the job it is the text parsed.
  local own, own_refused
  if from == 0 then
    own = table.concat(chunks[1], "\n")
    own_refused = refused(own)
  end
  if from == 0 and not own_refused then
    -- The whole items changed just before it, while they fit in a batch.
    while row > 0 and size < state.batch_bytes do
      local prev, prev_first = items.item_at(chat, row - 1)
      -- Only items in view: a batch reaching above it would parse what nobody sees yet, in ticks taken
      -- from the user.
      if
        prev == nil
        or not changes.changed(st, prev_first, row)
        or not changes.seen(changes.in_view(buf), row - 1)
      then
        break
      end
      local prev_size = api.nvim_buf_get_offset(buf, row) - api.nvim_buf_get_offset(buf, prev_first)
      local lines = api.nvim_buf_get_lines(buf, prev_first, row, false)
      if
        size + prev_size > state.batch_bytes
        or not fences_closed(lines)
        or refused(table.concat(lines, "\n"))
      then
        break
      end
      table.insert(entries, 1, prev)
      table.insert(chunks, 1, lines)
      st.settled[prev], st.deferred[prev] = nil, nil
      changes.cut(st, prev_first, row)
      row, size = prev_first, size + prev_size
    end
  end
  local lines = #chunks == 1 and chunks[1] or vim.iter(chunks):flatten():totable()
  -- Too many rows to parse (M.max_parsed_rows, in state.lua): plain, without even joining them.
  local alone = #chunks == 1 and own ~= nil
  local text = #lines > state.max_parsed_rows and "" or (alone and own or table.concat(lines, "\n"))
  local function refuse()
    if alone then
      return own_refused
    end
    return refused(text)
  end
  if text == "" or plain(text) or refuse() then
    -- No capture of the markdown queries can match it: no parse (its fixed cost alone, ~0.5 ms, was most of
    -- the drawing of a typed prompt); the rows' old highlights are cleared as a parse's captures would be.
    -- Or it would crash or stall the parser (ui/parse_guard.lua), or is too large: drawn plain the same way.
    return {
      entries = entries,
      from = #entries == 1 and from or 0,
      rows = #lines,
      text = text,
      parsed = true,
      returned = true,
      iters = {},
      open_row = last_paragraph_row(lines),
    }
  end
  local ok, parser = pcall(vim.treesitter.get_string_parser, text, "markdown")
  if not ok then
    return nil
  end
  ---@type AcpChatHighlightJob
  local job =
    { entries = entries, from = #entries == 1 and from or 0, rows = #lines, text = text, parser = parser }
  -- Parsed in slices of a few ms on the next ticks when it takes longer (Neovim's asynchronous parse); a small
  -- text is parsed at once and the callback runs before parse() returns.
  -- Injections (inline markdown, code in its language) only for a text of a few thousand rows: each cell of a
  -- table and each line of a quote is a region of its own, and Neovim adds a parse's regions in one step (a
  -- 24,000-row table's 48,000 held the loop for 115 ms at a time, a parse without them 17 ms at most).
  parser:parse(#lines <= state.max_injected_rows, function(err)
    job.parsed, job.failed = true, err ~= nil
    if st.job == job and job.returned then
      resume(chat)
    end
  end)
  job.returned = true
  return job
end

--- The block still open at the end of the job's last item, relative to that item: where its next parse starts.
---@param chat AcpChat
---@param job AcpChatHighlightJob
---@return integer
local function settled_row(chat, job)
  local item_range = items.item_range
  local text_first = item_range(chat, job.entries[1]) + job.from
  local last_first = item_range(chat, job.entries[#job.entries])
  return math.max(text_first + open_block_row(job) - last_first, 0)
end

M.start_captures = start_captures
M.apply_captures = apply_captures
M.start_job = start_job
M.settled_row = settled_row

return M

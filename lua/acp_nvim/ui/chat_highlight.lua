-- Markdown highlighting of the chat at any size: tree-sitter captures turned into extmarks, item by item, at a
-- cost proportional to what changed.
--
-- Neovim's own highlighter (vim.treesitter.start) parses the buffer as one document: in a 1.2 MB markdown
-- buffer, LanguageTree:parse of the one line a chunk changed took ~0.9 s (Neovim 0.11, measured), so the chat
-- used to turn it off past 64 KiB. Here each chat item is parsed on its own with a string parser (injections
-- included: code blocks in their language, inline markdown), its captures are kept as extmarks in one
-- namespace, and only what changed is parsed again: a finished block never is; the block still open at the end
-- of an item (the paragraph or code block being streamed) is, from its first line. Only rows in view are
-- highlighted (the windows showing the chat, and a margin): a replay of thousands of items parsed in the
-- background held the main loop for 10-25 ms at a time for seconds after it (a parse's first slice, freeing
-- its trees), while a reader sees one screen of it; the rest is highlighted as it is scrolled to. Whole items
-- in view are parsed in batches, newest first, once the chat is quiet, 2 ms per main-loop tick.

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_nvim_markdown")
M.ns = ns

-- Work per main-loop tick; what is left runs on the next ticks, after the input that came in meanwhile.
M.budget_ns = 2e6
-- An open block larger than chat.highlight_max_bytes is parsed again only once the chat has not changed for
-- this long (re-parsing a 700 KB streamed paragraph per frame would cost more than the frame), and what one
-- tick's budget leaves undone waits for it too: a replay of thousands of items is highlighted once it is drawn,
-- not in ticks taken from the drawing.
M.pause_ms = 300
-- Whole items drawn together (a replayed history) are parsed together, up to this many bytes: most of what a
-- parse of a small item costs is fixed (a markdown_inline parser alone takes ~0.25 ms to create), so 400
-- items of a day's work parse 2.6x faster in batches than one by one (16 KiB batches; 8 KiB keep each slice
-- short).
M.batch_bytes = 8 * 1024
-- A block larger than this is not highlighted at all (it keeps what it had when smaller): such a block is one
-- paragraph of 100,000 streamed words, and its trees (hundreds of thousands of nodes) cost tens of ms to free
-- whenever the garbage collector gets to them, a stall in whatever runs then. Nothing a chat holds in
-- practice is that large; the size of the chat itself is no limit.
M.max_block_bytes = 256 * 1024
-- A parse of more rows than this is of the markdown blocks alone (see start_job).
M.max_injected_rows = 2000
-- A text of more rows than this is not parsed at all (drawn plain): the tree of a 24,000-row table took the
-- garbage collector 40-80 ms to free, a stall in whatever ran then (a later drain, another parse's step).
M.max_parsed_rows = 8000
-- Rows above and below a window's view highlighted with it, at least: what a scroll of a few lines or a
-- page shows next is ready (half the window's height when that is more).
M.margin_rows = 20

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

---@class AcpChatHighlightState
---@field ranges integer[][] rows changed and not highlighted yet ({first, stop}, 0-based, stop exclusive),
---  the newest last: taken from the end, an item at a time, so that a replay of thousands costs each tick
---  only what it highlights
---@field settled table<AcpChatItem, integer> rows of the item before this one are highlighted for good
---@field last_change integer when the buffer last changed (vim.uv.now)
---@field deferred table<AcpChatItem, integer> large open blocks waiting for the chat to pause, from this row
---@field job AcpChatHighlightJob|nil
---@field scheduled boolean|nil
---@field timer uv.uv_timer_t|nil
---@field items table|nil the chat's items table the state is about (a reset replaces it)
---@field chat AcpChat|nil the chat, for the autocommands that bring rows into view
---@field views integer[][]|nil the rows in view, during one refresh (see in_view)

---@type table<integer, AcpChatHighlightState>
local states = {}

local hl_ids = {} ---@type table<string, integer>
local queries = {} ---@type table<string, vim.treesitter.Query|false>

---@param lang string
---@return vim.treesitter.Query|false
local function query_of(lang)
  local q = queries[lang]
  if q == nil then
    local ok, found = pcall(vim.treesitter.query.get, lang, "highlights")
    q = ok and found or false
    queries[lang] = q
  end
  return q
end

local available = nil ---@type boolean|nil
--- Whether the markdown parser and its highlight query are there (bundled with Neovim 0.10+).
---@return boolean
function M.available()
  if available == nil then
    local ok, added = pcall(vim.treesitter.language.add, "markdown")
    available = ok and added ~= false and query_of("markdown") ~= false
  end
  return available
end

-- The queries a chat's first parse needs besides markdown's highlights (compiled by M.available), one per tick
-- from the chat's creation on: compiled at the first highlight they held that tick ~10 ms more (markdown_inline's
-- highlights alone ~6 ms), in the middle of the first streamed answer.
local warm_up = {
  { "markdown", "injections" },
  { "markdown_inline", "highlights" },
  { "markdown_inline", "injections" },
}
local warmed = false

local warm_done = false

local function warm_next(i)
  local lang, name = warm_up[i][1], warm_up[i][2]
  if name == "highlights" then
    query_of(lang)
  else
    -- Held (in `queries`, by another key than a language's highlights), so that Neovim's weak cache of
    -- queries cannot let them go before the parses that need them.
    local ok, query = pcall(vim.treesitter.query.get, lang, name)
    queries[lang .. ":" .. name] = ok and query or false
  end
  if warm_up[i + 1] == nil then
    warm_done = true
    return
  end
  vim.schedule(function()
    warm_next(i + 1)
  end)
end

--- Whether the queries of a first parse are compiled (tests).
---@return boolean
function M.warmed()
  return warm_done
end

local function weak()
  return setmetatable({}, { __mode = "k" })
end

--- Rows changed: kept as a few ranges that later changes move, so that they still name the right rows when
--- the items are looked up (after the drain: an item's extmark exists only once it is drawn).
---@param st AcpChatHighlightState
---@param first integer
---@param last_old integer
---@param last_new integer
local function note_change(st, first, last_old, last_new)
  st.last_change = vim.uv.now()
  local delta = last_new - last_old
  local ranges = st.ranges
  for i = 1, #ranges do
    local r = ranges[i]
    if r[1] >= last_old then
      r[1], r[2] = r[1] + delta, r[2] + delta
    elseif r[2] > first then
      r[2] = r[2] >= last_old and r[2] + delta or math.min(r[2], last_new)
    end
  end
  local stop = math.max(last_new, first + 1)
  local last = ranges[#ranges]
  if last ~= nil and last[1] <= stop and first <= last[2] then
    last[1], last[2] = math.min(last[1], first), math.max(last[2], stop)
  elseif #ranges >= 64 then
    -- Changes all over the chat (never from a stream), or the rows out of view left between the parts
    -- scrolled through: one range over all of them. The rows already highlighted in it are highlighted again
    -- when seen (redundant, not wrong); keeping the closest ranges apart instead cost a sort on every change
    -- of a replay.
    local lo, hi = first, stop
    for _, r in ipairs(ranges) do
      lo, hi = math.min(lo, r[1]), math.max(hi, r[2])
    end
    st.ranges = { { lo, hi } }
  else
    ranges[#ranges + 1] = { first, stop }
  end
end

--- Removes rows [a, b) from the changed ranges (they are being highlighted), splitting a range around them.
---@param st AcpChatHighlightState
---@param a integer
---@param b integer
local function cut(st, a, b)
  local ranges = st.ranges
  local i = 1
  while ranges[i] ~= nil do
    local r = ranges[i]
    if r[2] <= a or r[1] >= b then
      i = i + 1
    elseif r[1] >= a and r[2] <= b then
      table.remove(ranges, i)
    elseif r[1] >= a then
      r[1] = b
      i = i + 1
    elseif r[2] <= b then
      r[2] = a
      i = i + 1
    else
      table.insert(ranges, i + 1, { b, r[2] })
      r[2] = a
      i = i + 2
    end
  end
end

--- The rows in view ({first, stop}, 0-based, stop exclusive) of every window showing the buffer, with their
--- margin; none when the chat is not shown (it is highlighted once it is: BufWinEnter).
---
--- Looked at once per refresh (the buffer does not change within one) and only when a parse may follow:
--- bringing a window's view up to date makes Neovim measure its wrapped lines, 2-7 ms per tick for a window
--- on a streamed paragraph of 700 KB.
---@param buf integer
---@return integer[][]
local function in_view(buf)
  local st = states[buf]
  if st ~= nil and st.views ~= nil then
    return st.views
  end
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    -- line("w0"/"w$") bring the window's top line up to date first (a chat drawn in this same tick).
    local top, bot = vim.fn.line("w0", win), vim.fn.line("w$", win)
    local margin = math.max(M.margin_rows, math.floor(api.nvim_win_get_height(win) / 2))
    views[#views + 1] = { math.max(top - 1 - margin, 0), bot + margin }
  end
  if st ~= nil then
    st.views = views
  end
  return views
end

--- The last changed row in view, plus one (0 when none is): where the next item to highlight ends.
---@param st AcpChatHighlightState
---@param views integer[][]
---@param count integer the buffer's line count
---@return integer
local function last_in_view(st, views, count)
  local ranges = st.ranges
  for i = #ranges, 1, -1 do
    local r = ranges[i]
    local best = 0
    for _, v in ipairs(views) do
      local a, b = math.max(r[1], v[1]), math.min(r[2], v[2], count)
      if a < b and b > best then
        best = b
      end
    end
    if best > 0 then
      return best
    end
  end
  return 0
end

--- Starts highlighting a chat buffer (from its ftplugin). Without the markdown parser the chat stays plain.
---@param buf integer
function M.attach(buf)
  if buf == 0 then
    buf = api.nvim_get_current_buf()
  end
  if states[buf] ~= nil or not M.available() then
    return
  end
  if not warmed then
    warmed = true
    vim.schedule(function()
      warm_next(1)
    end)
  end
  ---@type AcpChatHighlightState
  local st = { ranges = {}, settled = weak(), deferred = weak(), last_change = 0 }
  states[buf] = st
  -- What is already in the buffer counts as changed.
  note_change(st, 0, 0, api.nvim_buf_line_count(buf))
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new)
      if states[buf] ~= st then
        return true
      end
      note_change(st, first, last_old, last_new)
    end,
    on_detach = function()
      if states[buf] == st then
        M.detach(buf)
      end
    end,
  })
  -- Rows come into view: the chat shown in a window, or a window showing it scrolled or resized.
  api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      if states[buf] ~= st then
        return true
      end
      if st.chat ~= nil then
        M.schedule(st.chat)
      end
    end,
  })
end

api.nvim_create_autocmd("WinScrolled", {
  group = api.nvim_create_augroup("acp_nvim_chat_highlight", { clear = true }),
  callback = function()
    for key in pairs(vim.v.event) do
      local win = tonumber(key)
      if win ~= nil and api.nvim_win_is_valid(win) then
        local st = states[api.nvim_win_get_buf(win)]
        if st ~= nil and st.chat ~= nil then
          M.schedule(st.chat)
        end
      end
    end
  end,
})

--- Stops highlighting a buffer; its marks go.
---@param buf integer
function M.detach(buf)
  local st = states[buf]
  if st == nil then
    return
  end
  states[buf] = nil
  if st.timer ~= nil then
    st.timer:stop()
    st.timer:close()
  end
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  end
end

--- Whether `size` bytes of `entry` from row `from` (relative to it) are parsed now; if not, they are left for
--- the chat's next pause (deferred) or for good (past M.max_block_bytes).
---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@param from integer
---@param size integer
---@return boolean
local function parsable_now(st, entry, from, size)
  if size > M.max_block_bytes then
    return false
  end
  local max_bytes = require("acp_nvim.config").options.chat.highlight_max_bytes
  if size > max_bytes and vim.uv.now() - st.last_change < M.pause_ms then
    st.deferred[entry] = math.min(st.deferred[entry] or from, from)
    return false
  end
  return true
end

--- The first changed row of the item on rows `first` to `last`, relative to it, wherever the ranges over it are
--- (changed in two places: one parse for both); 0 when none is.
---@param st AcpChatHighlightState
---@param first integer
---@param last integer
---@return integer
local function first_changed(st, first, last)
  local rel = nil
  for _, r in ipairs(st.ranges) do
    if r[1] <= last and r[2] > first then
      rel = math.min(rel or math.huge, math.max(r[1] - first, 0))
    end
  end
  return rel or 0
end

--- The row (relative to the item) a parse of `entry` starts from when its rows from `rel` changed: the block
--- still open at its end when the change is below it, else the whole item; from a deferred row when earlier.
---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@param rel integer
---@return integer
local function parse_from(st, entry, rel)
  local settled = st.settled[entry] or 0
  -- A change above the open block (an item rewritten whole, a tool call updated) parses the item again.
  local from = rel >= settled and settled or 0
  if st.deferred[entry] ~= nil then
    from = math.min(from, st.deferred[entry])
  end
  return from
end

--- Takes the chat's last item off the changed ranges when its changed block is too large to parse now (see
--- parsable_now), without looking at the view: that is the paragraph a stream makes longer on every tick, and
--- bringing the view up to date first (in_view) had Neovim measure that long wrapped line on every tick. Only
--- the last item: the others too large wait in the ranges until they are seen, as any changed rows do.
---@param chat AcpChat
---@param st AcpChatHighlightState
local function drop_unparsable(chat, st)
  local buf = chat.buf
  local count = api.nvim_buf_line_count(buf)
  local r = st.ranges[#st.ranges]
  if r == nil or r[2] < count or r[1] >= count then
    return
  end
  local chat_mod = require("acp_nvim.ui.chat")
  local entry, first = chat_mod.item_at(chat, count - 1)
  local last = nil
  if entry ~= nil then
    last = select(2, chat_mod.item_range(chat, entry))
  end
  if entry == nil or last == nil then
    return
  end
  local from = parse_from(st, entry, first_changed(st, first, last))
  if first + from > last then
    return
  end
  local size = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, first + from)
  if not parsable_now(st, entry, from, size) then
    cut(st, first, last + 1)
  end
end

--- The newest item in view still to highlight, its rows taken off the changed ranges: the item, the first of
--- its rows that changed (relative to it) and its first row. Rows out of view stay in the ranges.
---@param chat AcpChat
---@param st AcpChatHighlightState
---@return AcpChatItem|nil, integer, integer
local function take(chat, st)
  drop_unparsable(chat, st)
  if st.ranges[1] == nil then
    return nil, 0, 0
  end
  local count = api.nvim_buf_line_count(chat.buf)
  local views = in_view(chat.buf)
  local chat_mod = require("acp_nvim.ui.chat")
  while true do
    local stop = last_in_view(st, views, count)
    if stop == 0 then
      return nil, 0, 0
    end
    local entry, first = chat_mod.item_at(chat, stop - 1)
    local _, last = nil, nil
    if entry ~= nil then
      _, last = chat_mod.item_range(chat, entry)
    end
    if entry == nil then
      -- Rows above the first item (the chat's header): nothing to highlight there.
      cut(st, 0, stop)
    elseif last == nil then
      cut(st, first, stop)
    else
      local rel = first_changed(st, first, last)
      cut(st, first, math.max(last + 1, stop))
      return entry, rel, first
    end
  end
end

--- Whether changed rows are in view.
---@param buf integer
---@param st AcpChatHighlightState
---@return boolean
local function viewed_changes(buf, st)
  return st.ranges[1] ~= nil and last_in_view(st, in_view(buf), api.nvim_buf_line_count(buf)) > 0
end

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
    local q = query_of(lang)
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
  local first = require("acp_nvim.ui.chat").item_range(chat, job.entries[1])
  if first == nil then
    return true
  end
  local base = first + job.from
  if job.base == nil then
    job.base = base
    api.nvim_buf_clear_namespace(buf, ns, base, base + job.rows)
  end
  local set = api.nvim_buf_set_extmark
  local opts = { strict = false }
  local iters = job.iters or {}
  local n = 0
  while iters[1] ~= nil do
    local state = iters[1]
    local id, node, metadata, match = state.iter()
    if id == nil then
      table.remove(iters, 1)
    else
      local name = state.query.captures[id]
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
        opts.hl_group = hl_id(state.lang, name)
        opts.priority = tonumber(metadata.priority or capture_meta and capture_meta.priority) or 100
        opts.conceal = metadata.conceal or capture_meta and capture_meta.conceal or nil
        local url = capture_meta and capture_meta.url
        if type(url) == "number" and match then
          local other = match:captures()[url]
          url = other and other[1] and vim.treesitter.get_node_text(other[1], job.text) or nil
        end
        opts.url = type(url) == "string" and url or nil
        set(buf, ns, base + sr, sc, opts)
        if metadata.conceal_lines or capture_meta and capture_meta.conceal_lines then
          set(buf, ns, base + sr, 0, { end_row = base + er, conceal_lines = "", strict = false })
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

--- Whether a row is in one of the views.
---@param views integer[][]
---@param row integer
---@return boolean
local function seen(views, row)
  for _, v in ipairs(views) do
    if row >= v[1] and row < v[2] then
      return true
    end
  end
  return false
end

--- Whether rows [a, b) are all in one changed range (an item drawn whole since it was last highlighted).
---@param st AcpChatHighlightState
---@param a integer
---@param b integer
---@return boolean
local function changed(st, a, b)
  for _, r in ipairs(st.ranges) do
    if r[1] <= a and r[2] >= b then
      return true
    end
  end
  return false
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
---@return AcpChatHighlightJob|nil
local function start_job(chat, st, entry, first, from)
  local buf = chat.buf
  local _, last = require("acp_nvim.ui.chat").item_range(chat, entry)
  local row = first + from
  if last == nil or row > last then
    return nil
  end
  local size = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, row)
  if not parsable_now(st, entry, from, size) then
    return nil
  end
  local entries = { entry }
  local chunks = { api.nvim_buf_get_lines(buf, row, last + 1, false) }
  local refused = require("acp_nvim.ui.parse_guard").refused
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
    local item_at = require("acp_nvim.ui.chat").item_at
    while row > 0 and size < M.batch_bytes do
      local prev, prev_first = item_at(chat, row - 1)
      -- Only items in view: a batch reaching above it would parse what nobody sees yet, in ticks taken
      -- from the user.
      if prev == nil or not changed(st, prev_first, row) or not seen(in_view(buf), row - 1) then
        break
      end
      local prev_size = api.nvim_buf_get_offset(buf, row) - api.nvim_buf_get_offset(buf, prev_first)
      local lines = api.nvim_buf_get_lines(buf, prev_first, row, false)
      if
        size + prev_size > M.batch_bytes
        or not fences_closed(lines)
        or refused(table.concat(lines, "\n"))
      then
        break
      end
      table.insert(entries, 1, prev)
      table.insert(chunks, 1, lines)
      st.settled[prev], st.deferred[prev] = nil, nil
      cut(st, prev_first, row)
      row, size = prev_first, size + prev_size
    end
  end
  local lines = #chunks == 1 and chunks[1] or vim.iter(chunks):flatten():totable()
  -- Too many rows to parse (M.max_parsed_rows): plain, without even joining them.
  local alone = #chunks == 1 and own ~= nil
  local text = #lines > M.max_parsed_rows and "" or (alone and own or table.concat(lines, "\n"))
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
  parser:parse(#lines <= M.max_injected_rows, function(err)
    job.parsed, job.failed = true, err ~= nil
    if st.job == job and job.returned then
      M.schedule(chat)
    end
  end)
  job.returned = true
  return job
end

---@param chat AcpChat
---@param st AcpChatHighlightState
local function arm_timer(chat, st)
  if st.timer == nil then
    st.timer = vim.uv.new_timer()
  end
  st.timer:stop()
  st.timer:start(
    M.pause_ms,
    0,
    vim.schedule_wrap(function()
      if states[chat.buf] ~= st then
        return
      end
      -- Back among the changed rows (at the end: the next taken), to be deferred again while the chat changes.
      local item_range = require("acp_nvim.ui.chat").item_range
      for entry, from in pairs(st.deferred) do
        local first, last = item_range(chat, entry)
        if first ~= nil and last ~= nil then
          st.ranges[#st.ranges + 1] = { first + from, last + 1 }
        end
      end
      st.deferred = weak()
      M.refresh(chat)
    end)
  )
end

--- The block still open at the end of the job's last item, relative to that item: where its next parse starts.
---@param chat AcpChat
---@param job AcpChatHighlightJob
---@return integer
local function settled_row(chat, job)
  local item_range = require("acp_nvim.ui.chat").item_range
  local text_first = item_range(chat, job.entries[1]) + job.from
  local last_first = item_range(chat, job.entries[#job.entries])
  return math.max(text_first + open_block_row(job) - last_first, 0)
end

local highlight_some -- (see below)

--- Highlights what changed since the last call, within the tick's budget; the rest continues on the next
--- ticks. Called after each drain of the chat's queue (ui/chat/drain.lua, M._drain).
---@param chat AcpChat
function M.refresh(chat)
  local st = states[chat.buf]
  if st == nil then
    return
  end
  if not api.nvim_buf_is_valid(chat.buf) then
    M.detach(chat.buf)
    return
  end
  st.chat = chat
  if st.items ~= chat.items then
    -- The chat was emptied for a reload (chat.reset): what was known of its items is void.
    st.items = chat.items
    st.settled, st.deferred, st.job = weak(), weak(), nil
  end
  if chat.queue ~= nil and chat.queue[1] ~= nil then
    -- The chat is still drawing (a replayed history, over many ticks): its ticks are its own; the drain that
    -- empties the queue calls again.
    return
  end
  -- 'foldexpr' runs inside a buffer change, before the new items' extmarks exist: what it cached for this
  -- changedtick can name the item above as the last one.
  chat.item_at_cache = nil
  st.views = nil
  -- Right after a long draw the garbage collector is held, as in its slices (ui/gc_pace.lua): a parse and its
  -- captures allocate.
  local started = vim.uv.hrtime()
  local gc = require("acp_nvim.ui.gc_pace")
  local ok, err
  if gc.pacing() then
    ok, err = pcall(gc.slice, started + M.budget_ns / 8, highlight_some, chat, st, started)
  else
    ok, err = pcall(highlight_some, chat, st, started)
  end
  st.views = nil
  if not ok then
    error(err, 0)
  end
end

--- What refresh does once the chat is drawn: the changed rows in view highlighted, within the budget.
---@param chat AcpChat
---@param st AcpChatHighlightState
---@param started number when the tick's work began (vim.uv.hrtime)
highlight_some = function(chat, st, started)
  local deadline = started + M.budget_ns
  -- Starting a parse takes up to 3 ms by itself (Neovim's first slice of it, the batch's lines): only near the
  -- tick's start (in the first half, it made ticks of 4-5 ms after a replay).
  local last_start = started + M.budget_ns / 4
  while vim.uv.hrtime() < deadline do
    local job = st.job
    if job == nil then
      if vim.uv.hrtime() > last_start then
        break
      end
      local entry, rel, first = take(chat, st)
      if entry == nil then
        break
      end
      local from = parse_from(st, entry, rel)
      st.deferred[entry] = nil
      st.job = start_job(chat, st, entry, first, from)
    elseif not job.parsed then
      -- The asynchronous parse calls back when done.
      return
    else
      if not job.failed and job.iters == nil then
        start_captures(job)
      end
      if job.failed or apply_captures(chat, job, deadline) then
        if not job.failed and job.entries[#job.entries] ~= nil then
          st.settled[job.entries[#job.entries]] = settled_row(chat, job)
        end
        st.job = nil
      end
    end
  end
  local quiet = vim.uv.now() - st.last_change >= M.pause_ms
  local waiting = st.job ~= nil or viewed_changes(chat.buf, st)
  if waiting and quiet then
    M.schedule(chat)
  elseif waiting or next(st.deferred) ~= nil then
    arm_timer(chat, st)
  end
end

--- Continues on a later tick (once, however often it is asked for before that).
---@param chat AcpChat
function M.schedule(chat)
  local st = states[chat.buf]
  if st == nil or st.scheduled then
    return
  end
  st.scheduled = true
  require("acp_nvim.ui.after_input").schedule(function()
    st.scheduled = false
    if states[chat.buf] == st then
      M.refresh(chat)
    end
  end)
end

--- Whether highlighting work is still waiting for the rows in view (tests, benchmarks): rows out of view wait
--- until they are scrolled to.
---@param buf integer
---@return boolean
function M.pending(buf)
  local st = states[buf]
  if st == nil then
    return false
  end
  if st.job ~= nil or next(st.deferred) ~= nil then
    return true
  end
  -- The view as it is now, not as a refresh saw it.
  st.views = nil
  local waiting = viewed_changes(buf, st)
  st.views = nil
  return waiting
end

return M

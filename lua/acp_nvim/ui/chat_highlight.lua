-- Markdown highlighting of the chat at any size: tree-sitter captures turned into extmarks, item by item, at a
-- cost proportional to what changed.
--
-- Neovim's own highlighter (vim.treesitter.start) re-parses the whole document on every change: its markdown
-- parser keeps one injected markdown_inline tree per paragraph and edits and re-scans all of them, so a
-- streamed chunk into a 1 MB chat costs ~0.9 s even when only the last line is asked for (measured on 0.11).
-- Here each chat item is parsed on its own with a string parser (injections included: code blocks in their
-- language, inline markdown), its captures are kept as extmarks in one namespace, and only what changed is
-- parsed again: a finished block is never re-parsed; the block still open at the end of an item (the paragraph
-- or code block being streamed) is, from its first line.

local M = {}

local api = vim.api
local ns = api.nvim_create_namespace("acp_nvim_markdown")
M.ns = ns

-- Work per main-loop tick; what is left runs on the next ticks, after the input that came in meanwhile.
M.budget_ns = 3e6
-- An open block larger than chat.highlight_max_bytes is parsed again only once its item has not changed for
-- this long: re-parsing a 700 KB streamed paragraph per frame would cost more than the frame.
M.pause_ms = 300

---@class AcpChatHighlightJob
---@field entry AcpChatItem
---@field from integer first row parsed, relative to the item
---@field rows integer rows parsed
---@field text string
---@field parser vim.treesitter.LanguageTree
---@field parsed boolean|nil
---@field failed boolean|nil
---@field iters {query: vim.treesitter.Query, lang: string, iter: function}[]|nil
---@field base integer|nil buffer row of `from` when the captures started to be applied
---@field returned boolean|nil parse() has returned: a callback after that comes from a later tick

---@class AcpChatHighlightState
---@field ranges integer[][] rows changed since the last look ({first, stop}, 0-based, stop exclusive)
---@field todo table<AcpChatItem, integer> items to parse again, from this row (relative to the item)
---@field stack AcpChatItem[] the items of `todo` as found; the newest (last) is done first
---@field settled table<AcpChatItem, integer> rows of the item before this one are highlighted for good
---@field changed table<AcpChatItem, integer> when the item last changed (vim.uv.now)
---@field deferred AcpChatItem[] large open blocks waiting for their item to pause
---@field job AcpChatHighlightJob|nil
---@field scheduled boolean|nil
---@field timer uv.uv_timer_t|nil
---@field items table|nil the chat's items table the state is about (a reset replaces it)

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
  elseif #ranges >= 32 then
    -- Changes all over the chat (never from a stream): one range over all of them.
    local lo, hi = first, stop
    for _, r in ipairs(ranges) do
      lo, hi = math.min(lo, r[1]), math.max(hi, r[2])
    end
    st.ranges = { { lo, hi } }
  else
    ranges[#ranges + 1] = { first, stop }
  end
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
  ---@type AcpChatHighlightState
  local st = { ranges = {}, todo = weak(), stack = {}, settled = weak(), changed = weak(), deferred = {} }
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
end

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

---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@param rel integer first changed row, relative to the item
---@param now integer
local function mark_todo(st, entry, rel, now)
  local settled = st.settled[entry] or 0
  -- A change above the open block (an item rewritten whole, a tool call updated) parses the item again.
  local from = rel >= settled and settled or 0
  local current = st.todo[entry]
  if current == nil then
    st.stack[#st.stack + 1] = entry
    st.todo[entry] = from
  elseif from < current then
    st.todo[entry] = from
  end
  st.changed[entry] = now
end

--- The changed rows turned into items to parse again.
---@param chat AcpChat
---@param st AcpChatHighlightState
local function collect(chat, st)
  if #st.ranges == 0 or #chat.order == 0 then
    st.ranges = {}
    return
  end
  local chats = require("acp_nvim.ui.chat")
  -- 'foldexpr' runs inside a buffer change, before the new items' extmarks exist: what it cached for this
  -- changedtick can name the item above as the last one.
  chat.item_at_cache = nil
  local count = api.nvim_buf_line_count(chat.buf)
  local now = vim.uv.now()
  for _, r in ipairs(st.ranges) do
    local first_row, stop = math.max(r[1], 0), math.min(r[2], count)
    if first_row < stop then
      local entry, item_first = chats.item_at(chat, first_row)
      local idx = entry and entry.idx or 1
      entry = entry or chat.items[chat.order[1]]
      item_first = item_first or 0
      while entry ~= nil and item_first < stop do
        mark_todo(st, entry, math.max(first_row - item_first, 0), now)
        idx = idx + 1
        local id = chat.order[idx]
        entry = id and chat.items[id]
        if entry ~= nil then
          item_first = chats.item_range(chat, entry)
        end
      end
    end
  end
  st.ranges = {}
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
  local first = require("acp_nvim.ui.chat").item_range(chat, job.entry)
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

---@param chat AcpChat
---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@return AcpChatHighlightJob|nil
local function start_job(chat, st, entry)
  local from = st.todo[entry]
  st.todo[entry] = nil
  local first, last = require("acp_nvim.ui.chat").item_range(chat, entry)
  if first == nil or first + from > last then
    return nil
  end
  local buf = chat.buf
  local row = first + from
  local max_bytes = require("acp_nvim.config").options.chat.highlight_max_bytes
  local size = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, row)
  if size > max_bytes and vim.uv.now() - (st.changed[entry] or 0) < M.pause_ms then
    st.todo[entry] = from
    st.deferred[#st.deferred + 1] = entry
    return nil
  end
  local lines = api.nvim_buf_get_lines(buf, row, last + 1, false)
  local text = table.concat(lines, "\n")
  local ok, parser = pcall(vim.treesitter.get_string_parser, text, "markdown")
  if not ok then
    return nil
  end
  ---@type AcpChatHighlightJob
  local job = { entry = entry, from = from, rows = #lines, text = text, parser = parser }
  -- Parsed in slices of a few ms on the next ticks when it takes longer (Neovim's asynchronous parse); a small
  -- text is parsed at once and the callback runs before parse() returns.
  parser:parse(true, function(err)
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
      for _, entry in ipairs(st.deferred) do
        st.stack[#st.stack + 1] = entry
      end
      st.deferred = {}
      M.refresh(chat)
    end)
  )
end

--- Highlights what changed since the last call, within the tick's budget; the rest continues on the next
--- ticks. Called after each drain of the chat's queue (ui/chat.lua, guard_redraw).
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
  if st.items ~= chat.items then
    -- The chat was emptied for a reload (chat.reset): what was known of its items is void.
    st.items = chat.items
    st.todo, st.settled, st.changed, st.stack, st.deferred, st.job = weak(), weak(), weak(), {}, {}, nil
  end
  collect(chat, st)
  if chat.queue ~= nil and chat.queue[1] ~= nil then
    -- The chat is still drawing (a replayed history, over many ticks): its ticks are its own; the drain that
    -- empties the queue calls again.
    return
  end
  local deadline = vim.uv.hrtime() + M.budget_ns
  while vim.uv.hrtime() < deadline do
    local job = st.job
    if job == nil then
      local entry = table.remove(st.stack)
      if entry == nil then
        break
      end
      if st.todo[entry] ~= nil then
        st.job = start_job(chat, st, entry)
      end
    elseif not job.parsed then
      -- The asynchronous parse calls back when done.
      return
    else
      if not job.failed and job.iters == nil then
        start_captures(job)
      end
      if job.failed or apply_captures(chat, job, deadline) then
        if not job.failed then
          st.settled[job.entry] = job.from + open_block_row(job)
        end
        st.job = nil
      end
    end
  end
  if st.job ~= nil or st.stack[1] ~= nil then
    M.schedule(chat)
  elseif st.deferred[1] ~= nil then
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
  vim.schedule(function()
    st.scheduled = false
    if states[chat.buf] == st then
      M.refresh(chat)
    end
  end)
end

--- Whether highlighting work is still waiting (tests, benchmarks).
---@param buf integer
---@return boolean
function M.pending(buf)
  local st = states[buf]
  if st == nil then
    return false
  end
  return st.job ~= nil or st.stack[1] ~= nil or st.deferred[1] ~= nil or st.ranges[1] ~= nil
end

return M

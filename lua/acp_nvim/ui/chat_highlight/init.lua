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
--
-- The parts, each requiring only those listed before it: state.lua (the namespace, the tunables, each buffer's
-- state, the queries), changes.lua (the rows changed and which to highlight next), parse.lua (an item parsed
-- and its captures set); this facade, `require("acp_nvim.ui.chat_highlight")`, attaches a chat buffer and
-- runs the work in budgeted slices per main-loop tick. The namespace, the tunables, `available` and `warmed`
-- are read from and written to state.lua through it (tests and benchmarks set `budget_ns`, `pause_ms`, ...).

local M = {}

local api = vim.api
local after_input = require("acp_nvim.util.after_input")
local changes = require("acp_nvim.ui.chat_highlight.changes")
local gc_pace = require("acp_nvim.ui.gc_pace")
local items = require("acp_nvim.ui.chat.items")
local parse = require("acp_nvim.ui.chat_highlight.parse")
local state = require("acp_nvim.ui.chat_highlight.state")
local states = state.states

-- The tunables and queries live in state.lua: a test setting `chat_highlight.pause_ms` sets what the parts read.
local in_state = {}
for _, name in ipairs({
  "ns",
  "budget_ns",
  "pause_ms",
  "batch_bytes",
  "max_block_bytes",
  "max_injected_rows",
  "max_parsed_rows",
  "margin_rows",
  "available",
  "warmed",
}) do
  in_state[name] = state
end
require("acp_nvim.util.forward").forward(M, in_state)

--- Starts highlighting a chat buffer (from its ftplugin). Without the markdown parser the chat stays plain.
---@param buf integer
function M.attach(buf)
  if buf == 0 then
    buf = api.nvim_get_current_buf()
  end
  if states[buf] ~= nil or not state.available() then
    return
  end
  state.warm_up()
  ---@type AcpChatHighlightState
  local st = { ranges = {}, settled = state.weak(), deferred = state.weak(), last_change = 0 }
  states[buf] = st
  -- What is already in the buffer counts as changed. Not the one empty row of a new chat: only a drain looks
  -- at the changed rows, and before the chat's first one `pending` said that row waited, for good when none came.
  local count = api.nvim_buf_line_count(buf)
  if count > 1 or api.nvim_buf_get_lines(buf, 0, 1, false)[1] ~= "" then
    changes.note_change(st, 0, 0, count)
  end
  api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new)
      if states[buf] ~= st then
        return true
      end
      changes.note_change(st, first, last_old, last_new)
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
    api.nvim_buf_clear_namespace(buf, state.ns, 0, -1)
  end
end

---@param chat AcpChat
---@param st AcpChatHighlightState
local function arm_timer(chat, st)
  if st.timer == nil then
    st.timer = vim.uv.new_timer()
  end
  st.timer:stop()
  st.timer:start(
    state.pause_ms,
    0,
    vim.schedule_wrap(function()
      if states[chat.buf] ~= st then
        return
      end
      -- Back among the changed rows (at the end: the next taken), to be deferred again while the chat changes.
      for entry, from in pairs(st.deferred) do
        local first, last = items.item_range(chat, entry)
        if first ~= nil and last ~= nil then
          st.ranges[#st.ranges + 1] = { first + from, last + 1 }
        end
      end
      st.deferred = state.weak()
      M.refresh(chat)
    end)
  )
end

local highlight_some -- (see below)

-- Called when an asynchronous parse is done: M.schedule as it is then.
---@param chat AcpChat
local function schedule(chat)
  M.schedule(chat)
end

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
    st.settled, st.deferred, st.job = state.weak(), state.weak(), nil
  end
  if chat.queue ~= nil and chat.queue[1] ~= nil then
    -- The chat is still drawing (a replayed history, over many ticks): its ticks are its own; the drain that
    -- empties the queue calls again.
    return
  end
  -- A lookup made inside a buffer change, before the new items' extmarks exist, cached for this changedtick
  -- can name the item above as the last one.
  chat.item_at_cache = nil
  st.views = nil
  -- Right after a long draw the garbage collector is held, as in its slices (ui/gc_pace.lua): a parse and its
  -- captures allocate.
  local started = vim.uv.hrtime()
  local ok, err
  if gc_pace.pacing() then
    ok, err = pcall(gc_pace.slice, started + state.budget_ns / 8, highlight_some, chat, st, started)
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
  local deadline = started + state.budget_ns
  -- Starting a parse takes up to 3 ms by itself (Neovim's first slice of it, the batch's lines): only near the
  -- tick's start (in the first half, it made ticks of 4-5 ms after a replay).
  local last_start = started + state.budget_ns / 4
  while vim.uv.hrtime() < deadline do
    local job = st.job
    if job == nil then
      if vim.uv.hrtime() > last_start then
        break
      end
      local entry, rel, first = changes.take(chat, st)
      if entry == nil then
        break
      end
      local from = changes.parse_from(st, entry, rel)
      st.deferred[entry] = nil
      st.job = parse.start_job(chat, st, entry, first, from, schedule)
    elseif not job.parsed then
      -- The asynchronous parse calls back when done.
      return
    else
      if not job.failed and job.iters == nil then
        parse.start_captures(job)
      end
      if job.failed or parse.apply_captures(chat, job, deadline) then
        if not job.failed and job.entries[#job.entries] ~= nil then
          st.settled[job.entries[#job.entries]] = parse.settled_row(chat, job)
        end
        st.job = nil
      end
    end
  end
  local quiet = vim.uv.now() - st.last_change >= state.pause_ms
  local waiting = st.job ~= nil or changes.viewed_changes(chat.buf, st)
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
  after_input.schedule(function()
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
  local waiting = changes.viewed_changes(buf, st)
  st.views = nil
  return waiting
end

return M

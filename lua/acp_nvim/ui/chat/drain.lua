-- The drain: the ops the host sends are queued per chat and applied in slices within a budget per main-loop
-- tick (ui/chat/draw.lua draws each), the rest on the next ticks after the input that came meanwhile; after
-- each slice the chat's markdown highlighting is brought up to date (ui/chat_highlight/).

local M = {}

local api = vim.api
local after_input = require("acp_nvim.util.after_input")
local chat_message = require("acp_nvim.ui.chat_message")
local chat_terminal = require("acp_nvim.ui.chat_terminal")
local draw = require("acp_nvim.ui.chat.draw")
local gc_pace = require("acp_nvim.ui.gc_pace")
local highlight = require("acp_nvim.ui.chat_highlight")
local state = require("acp_nvim.ui.chat.state")
local item_key = state.item_key

-- Work per main-loop tick: what is left of a batch runs on the next tick, after the keys and requests that
-- came in meanwhile (a replayed history is thousands of ops, and one call doing all of them froze the
-- editor for a third of a second).
M.budget_ns = 4e6
-- The budget of a long draw's slices (a replay), at most. What the user waits for is the slice plus Neovim's
-- redraw after it (~0.5-1 ms for a screen of new items) and whatever the machine adds: 4 ms slices made ticks
-- of 5-6 ms during a replay, 3 ms near 4. With the agent and the host busy beside it, Neovim is also taken
-- off its core within a long slice: 2 ms slices cut the worst round trip of a replay by 0.5-2 ms against 3 ms
-- (five interleaved pairs of runs; no slower render). A stream's frames keep the whole budget: a smaller one
-- would only cut a large frame (a 1 MB tool output resent) into more ticks, each with a drain's fixed costs.
M.long_budget_ns = 2e6
-- At most this share of a slice's budget pays the garbage collector's steps that the slices before it owe.
local GC_SHARE = 0.25
-- New items drawn per buffer change, at most (between two looks at the budget).
local ADD_RUN = 200
-- What drawing one new item costs (ns), learnt from the runs drawn so far: a run is sized to fit what is left
-- of the tick's budget, so one slice of a replayed history does not overrun it several times over.
local add_cost_ns = 20e3
-- What decoding a byte of the ops' JSON costs (ns), learnt from the chunks decoded so far.
local decode_ns_per_byte = 4
--- Keeps a large chat cheap to redraw: 'linebreak' and 'breakindent' go once a line grows past option
--- chat.long_line_bytes (its markdown highlighting is brought up to date for what changed after each drain:
--- ui/chat_highlight/).
---
--- With 'linebreak' Neovim measures such a line cell by cell on every redraw (one streamed paragraph of
--- 100,000 words, 700 KiB: ~700 ms of Neovim's time over the stream, ~250 ms without). Wrapping mid-word is
--- all that changes; a chat of ordinary lines, however large, keeps it.
---@param chat AcpChat
local function guard_redraw(chat)
  local buf = chat.buf
  if chat.long_line then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      local wo = vim.wo[win][0]
      if wo.linebreak then
        wo.linebreak = false
      end
      if wo.breakindent then
        wo.breakindent = false
      end
    end
  end
end

---@param chat AcpChat
---@param op table
local function apply_op(chat, op)
  if op.op == "add" then
    draw.add_item(chat, op.item)
  elseif op.op == "replace" then
    draw.replace(chat, op.item)
  elseif op.op == "append" then
    draw.append_text(chat, op.id, op.text)
  elseif op.op == "note" then
    chat_message.set(chat, op)
  elseif op.op == "meta" then
    draw.set_meta(chat, op)
  elseif op.op == "term_output" then
    chat_terminal.show_output(op.term, op.text, op.reset == true)
  elseif op.op == "term_exit" then
    chat_terminal.show_exit(op.term, op.status)
  end
end

---@param err any
local function render_error(err)
  require("acp_nvim.util.notify").warn("chat render error: " .. tostring(err))
end

--- One slice of M._drain, from `started`; `long`: of a long draw (the garbage collector held: see there).
---@param chat AcpChat
---@param started number
---@param long boolean
---@return boolean
local function drain_slice(chat, started, long)
  local buf = chat.buf
  local budget = long and math.min(M.budget_ns, M.long_budget_ns) or M.budget_ns
  -- Windows looking at the end keep following the stream; others stay where the user put them.
  local line_count = api.nvim_buf_line_count(buf)
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(win)[1] >= line_count then
      table.insert(follow, win)
    end
  end
  vim.bo[buf].modifiable = true
  local queue = chat.queue
  local done_any = false
  -- At least one op per slice, whatever paying the garbage collector took of the budget.
  while queue[1] ~= nil and (not done_any or vim.uv.hrtime() - started < budget) do
    local batch = queue[1]
    if batch.ops == nil then
      -- Decoded only now, a chunk at a time: decoding a whole replay at once would be one long stall. And on
      -- the next tick when what is left of this one would not fit it (a chunk of a replay: ~1 ms).
      local json = batch.json
      if done_any and vim.uv.hrtime() - started + #json * decode_ns_per_byte > budget then
        break
      end
      local decode_started = vim.uv.hrtime()
      local ok, decoded = pcall(vim.json.decode, json)
      if #json > 0 then
        decode_ns_per_byte = (decode_ns_per_byte + (vim.uv.hrtime() - decode_started) / #json) / 2
      end
      batch.json = nil
      if not ok or type(decoded) ~= "table" then
        render_error(decoded)
        decoded = {}
      end
      batch.ops = decoded
    end
    done_any = true
    local ops, i = batch.ops, batch.next
    local op = ops[i]
    if op == nil then
      table.remove(queue, 1)
    elseif op.op == "add" and chat.items[item_key(op.item.id)] == nil then
      -- A run of new items: one buffer change for all of them.
      local left = budget - (vim.uv.hrtime() - started)
      local limit = math.max(1, math.min(ADD_RUN, math.floor(left / add_cost_ns)))
      local run, seen = {}, {}
      while op ~= nil and op.op == "add" and #run < limit do
        local id = op.item.id
        if chat.items[item_key(id)] ~= nil or seen[id] then
          break
        end
        seen[id] = true
        run[#run + 1] = op.item
        i = i + 1
        op = ops[i]
      end
      batch.next = i
      local run_started = vim.uv.hrtime()
      if #run > 1 then
        -- Many new items at once: a replayed history; its next slices hold the collector (see M._drain).
        chat.drawing_items = true
      end
      local ok, err = pcall(draw.add_items, chat, run)
      if not ok then
        render_error(err)
      end
      -- Averaged with what was known, so one slow run (a garbage collection) does not shrink the next ones.
      add_cost_ns = (add_cost_ns + (vim.uv.hrtime() - run_started) / #run) / 2
    else
      batch.next = i + 1
      local ok, err = pcall(apply_op, chat, op)
      if not ok then
        render_error(err)
      end
    end
    if queue[1] == batch and batch.ops ~= nil and batch.ops[batch.next] == nil then
      -- Done with it now: left for the next look at the queue, a batch whose last op took the budget cost a
      -- tick of its own (the continuation of a long draw, for a frame of a stream).
      table.remove(queue, 1)
    end
  end
  vim.bo[buf].modifiable = false
  if chat.queue_mark ~= nil then
    draw.place_queue(chat)
  end
  guard_redraw(chat)
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    -- Only when the cursor must move: setting it makes Neovim re-measure the window's text, which on a long
    -- wrapped line (one streamed paragraph of 100,000 words) costs ~10 ms per call.
    if api.nvim_win_get_cursor(win)[1] ~= last then
      pcall(api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
  -- In the same tick, so that no redraw shows the new text before its highlights (a concealed `**` would
  -- flicker at the end of a stream); after the cursor moved, so the view it looks at is up to date already.
  -- But not after the last slice of a long draw (a replay) when it took most of its budget: the highlighting's
  -- own budget on top of it made that tick the longest of a load; it comes on the next tick, after the input.
  if queue[1] ~= nil then
    highlight.refresh(chat)
  elseif long and vim.uv.hrtime() - started > budget / 2 then
    chat.queue = nil
    highlight.schedule(chat)
  else
    chat.queue = nil
    highlight.refresh(chat)
  end
  return queue[1] == nil
end

--- Whether the next op of `batch` adds items (a replayed history's batches are runs of new items), read from
--- its JSON before it is decoded: a command's output resent whole queues several batches too, and holding the
--- collector there cost its drains ~25% more Lua time (bench tool_output) for no stall it had.
---@param batch table|nil
---@return boolean
local function adds_items(batch)
  if batch == nil then
    return false
  end
  if batch.ops ~= nil then
    local op = batch.ops[batch.next]
    return op ~= nil and op.op == "add"
  end
  return batch.json ~= nil and batch.json:find('^%[%s*{%s*"op"%s*:%s*"add"') ~= nil
end

--- Whether the queue is a long draw of new items (a replay: several chunks, or a slice continued from an
--- earlier tick, that adds items or already drew many at once), not a frame of a stream.
---@param chat AcpChat
---@return boolean
local function long_draw(chat)
  local queue = chat.queue
  local long = chat.continued == true or (queue ~= nil and (queue[2] ~= nil or (queue[1] or {}).next ~= 1))
  return long and (chat.drawing_items == true or adds_items(queue and queue[1]))
end

--- Applies queued ops until they are done or the tick's budget is spent; returns true when all are done.
---
--- In a long draw the garbage collector is held while the slice works and what it allocated is paid at the
--- start of the next slice, within that one's budget (ui/gc_pace.lua): its steps, triggered by the slice's
--- allocations, made slices run twice their budget. A stream's frames are left to it, as before.
---@param chat AcpChat
---@return boolean
function M._drain(chat)
  if not api.nvim_buf_is_valid(chat.buf) then
    chat.queue = nil
    return true
  end
  local started = vim.uv.hrtime()
  local done
  if not long_draw(chat) then
    done = drain_slice(chat, started, false)
  else
    local pay_until = started + math.min(M.budget_ns, M.long_budget_ns) * GC_SHARE
    done = gc_pace.slice(pay_until, drain_slice, chat, started, true)
  end
  if done then
    chat.drawing_items = nil
  end
  return done
end

---@param chat AcpChat
local function continue_later(chat)
  after_input.schedule(function()
    chat.continued = true
    local done = chat.queue == nil or M._drain(chat)
    chat.continued = nil
    if not done then
      continue_later(chat)
    end
  end)
end

---@param session_id string
---@param batches table[] queue entries
local function enqueue(session_id, batches)
  local chat = state.chats[session_id]
  if chat == nil or not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  if chat.queue ~= nil then
    vim.list_extend(chat.queue, batches)
    return
  end
  chat.queue = batches
  if not M._drain(chat) then
    continue_later(chat)
  end
end

--- Applies one batch of view-model ops: {op="add"|"replace", item} | {op="append"|"note", id, text} |
--- {op="meta"} | {op="term_output", term, text, reset?} | {op="term_exit", term, status} (a command the agent
--- runs itself: its output and exit, drawn like an ACP terminal's).
--- Within the tick's budget at once; the rest on the next ticks, always in order (a batch arriving while an
--- earlier one is unfinished waits behind it).
---@param session_id string
---@param ops acp.ChatOp[] (lua/acp_nvim/host/types.lua)
function M.apply(session_id, ops)
  enqueue(session_id, { { ops = ops, next = 1 } })
end

--- `M.apply` of ops sent as JSON: each chunk a JSON array of ops, decoded when the drain reaches it. What the
--- host sends (see acp_nvim/nvim/render.py).
---@param session_id string
---@param chunks string[]
function M.apply_json(session_id, chunks)
  local batches = {}
  for i, json in ipairs(chunks) do
    batches[i] = { json = json, next = 1 }
  end
  enqueue(session_id, batches)
end

--- Whether a chat has ops still waiting for a later tick (tests, benchmarks).
---@param session_id string
---@return boolean
function M.pending(session_id)
  local chat = state.chats[session_id]
  return chat ~= nil and chat.queue ~= nil
end

return M

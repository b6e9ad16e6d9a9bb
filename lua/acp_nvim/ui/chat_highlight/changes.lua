-- The rows of a chat that changed and are not highlighted yet, and which of them to highlight next: the newest
-- item in view (ui/chat_highlight/init.lua takes it, ui/chat_highlight/parse.lua parses it).

local M = {}

local api = vim.api
local config = require("acp_nvim.config")
local items = require("acp_nvim.ui.chat.items")
local state = require("acp_nvim.ui.chat_highlight.state")

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
  local st = state.states[buf]
  if st ~= nil and st.views ~= nil then
    return st.views
  end
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    -- line("w0"/"w$") bring the window's top line up to date first (a chat drawn in this same tick).
    local top, bot = vim.fn.line("w0", win), vim.fn.line("w$", win)
    local margin = math.max(state.margin_rows, math.floor(api.nvim_win_get_height(win) / 2))
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

--- Whether `size` bytes of `entry` from row `from` (relative to it) are parsed now; if not, they are left for
--- the chat's next pause (deferred) or for good (past state.max_block_bytes).
---@param st AcpChatHighlightState
---@param entry AcpChatItem
---@param from integer
---@param size integer
---@return boolean
local function parsable_now(st, entry, from, size)
  if size > state.max_block_bytes then
    return false
  end
  local max_bytes = config.options.chat.highlight_max_bytes
  if size > max_bytes and vim.uv.now() - st.last_change < state.pause_ms then
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
  local entry, first = items.item_at(chat, count - 1)
  local last = nil
  if entry ~= nil then
    last = select(2, items.item_range(chat, entry))
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
  while true do
    local stop = last_in_view(st, views, count)
    if stop == 0 then
      return nil, 0, 0
    end
    local entry, first = items.item_at(chat, stop - 1)
    local _, last = nil, nil
    if entry ~= nil then
      _, last = items.item_range(chat, entry)
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

M.note_change = note_change
M.cut = cut
M.in_view = in_view
M.parsable_now = parsable_now
M.parse_from = parse_from
M.take = take
M.viewed_changes = viewed_changes
M.seen = seen
M.changed = changed

return M

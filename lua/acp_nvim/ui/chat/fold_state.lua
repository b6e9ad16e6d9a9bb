-- Which of the chat's folds are open: the user's choice (<CR>, za, zo, zc, zR, zM, ...), kept whenever the chat
-- makes its folds again. Neovim keeps the open/closed state of manual folds in each window, and drops it with
-- the folds: an item redrawn has its folds made again (ui/chat/folds.lua), and a window that shows the chat
-- anew (closed and reopened, another tab, the chat hidden meanwhile) has all of them made again, as those it
-- kept are of an older text. So the state is read from the window first, each fold known by its first row in
-- its item and its level (a fold inside a closed one has a state of its own, which foldclosed() does not
-- tell), and given to the folds made. A window that shows the chat anew gets the folds as they were in the
-- chat window the user last left (`M.remember`: read when that window closes or the chat leaves it, or when
-- another window shows the chat anew while it still does): those are the ones they last saw.
-- Folds are closed when made; only the items with an open fold are kept, as their open folds' keys.

local M = {}

local api = vim.api
local fn = vim.fn
local state = require("acp_nvim.ui.chat.state")

--- The folds an item's levels make, as Neovim makes them of a 'foldexpr''s levels ("N": the folds of levels up
--- to N go on or start, ">N": a fold of level N starts), within its `count` rows: flat, first row, last row,
--- level, ..., each fold after the folds it holds (so that they are made inside out: an Ex range that starts
--- or ends in a closed fold grows to all of it).
---@param folds (integer|boolean)[] see AcpDrawn.folds
---@param count integer the body's rows
---@return integer[]
function M.fold_ranges(folds, count)
  local out, open, depth = {}, {}, 0
  local function close_to(keep, row)
    while depth > keep do
      if row - 1 >= open[depth] then
        out[#out + 1], out[#out + 2], out[#out + 3] = open[depth], row - 1, depth
      end
      depth = depth - 1
    end
  end
  for i = 1, #folds, 3 do
    local row, level = folds[i], folds[i + 1]
    if row >= count then
      break
    end
    close_to(folds[i + 2] and level - 1 or level, row)
    while depth < level do
      depth = depth + 1
      open[depth] = row
    end
  end
  close_to(0, count)
  return out
end

--- A fold's key in its item: its first row and its level (what stays of it when the item is drawn again).
---@param ranges integer[] see M.fold_ranges
---@param i integer
---@return integer
local function key(ranges, i)
  return ranges[i] * 1024 + ranges[i + 2]
end

--- Whether the fold at `i` of `ranges` holds others (they come right before it).
---@param ranges integer[]
---@param i integer
---@return boolean
local function holds(ranges, i)
  return i > 1 and ranges[i - 3] >= ranges[i]
end

--- The open folds among an item's, `ranges` from row `body` (0-based), in the current window: their keys, or
--- nil when none is. A closed fold that holds others is opened while they are looked at, then closed again.
---@param body integer
---@param ranges integer[] see M.fold_ranges
---@return table<integer, true>|nil
function M.read(body, ranges)
  local open, opened, view = nil, nil, nil
  -- Outer folds first: what holds a fold is open (or opened) when the fold is looked at.
  for i = #ranges - 2, 1, -3 do
    local lnum = body + ranges[i] + 1
    local closed = fn.foldclosed(lnum)
    -- (No fold at all on the line: an item drawn since the window's folds were made, not one opened.)
    if closed == -1 and fn.foldlevel(lnum) > 0 then
      open = open or {}
      open[key(ranges, i)] = true
    elseif closed == lnum and holds(ranges, i) then
      view = view or fn.winsaveview()
      vim.cmd(("silent! %dfoldopen"):format(lnum))
      opened = opened or {}
      opened[#opened + 1] = lnum
    end
  end
  if opened ~= nil then
    -- Inner ones first: `:foldclose` closes the innermost open fold on the line.
    for k = #opened, 1, -1 do
      vim.cmd(("silent! %dfoldclose"):format(opened[k]))
    end
    fn.winrestview(view)
  end
  return open
end

local LOCAL = { scope = "local" }

--- Calls `look()` in the current window with its folds on: with 'foldenable' off (zn, zi) foldclosed() sees
--- none closed, and their state (which Neovim keeps for zN) would be lost.
---@generic T
---@param look fun(): T
---@return T
function M.looking(look)
  if api.nvim_get_option_value("foldenable", LOCAL) then
    return look()
  end
  api.nvim_set_option_value("foldenable", true, LOCAL)
  local ok, out = pcall(look)
  api.nvim_set_option_value("foldenable", false, LOCAL)
  if not ok then
    error(out, 0)
  end
  return out
end

--- Adds to `cmds` what opens the folds `open` (keys, see M.read) among an item's just made (all closed),
--- `ranges` from row `body`, and leaves the others closed.
---@param cmds string[]
---@param body integer
---@param ranges integer[]
---@param open table<integer, true>|nil
function M.open_commands(cmds, body, ranges, open)
  if open == nil or #ranges == 0 then
    return
  end
  local first, last = math.huge, -1
  for i = 1, #ranges, 3 do
    first, last = math.min(first, ranges[i]), math.max(last, ranges[i + 1])
  end
  cmds[#cmds + 1] = ("silent! %d,%dfoldopen!"):format(body + first + 1, body + last + 1)
  -- Inner ones first: `:foldclose` closes the innermost open fold on the line.
  for i = 1, #ranges, 3 do
    if not open[key(ranges, i)] then
      cmds[#cmds + 1] = ("silent! %dfoldclose"):format(body + ranges[i] + 1)
    end
  end
end

--- Calls `visit(entry, body, ranges)` for each item of the chat that has folds, in buffer order, with its
--- body's first row and its folds (see M.fold_ranges; not to be changed: items alike share them).
---@param chat AcpChat
---@param visit fun(entry: AcpChatItem, body: integer, ranges: integer[])
function M.each(chat, visit)
  local buf, order, items, runs_of, bare = chat.buf, chat.order, chat.items, chat.fold_runs, chat.bare
  local line_count = api.nvim_buf_line_count(buf)
  local ns = state.ns_items
  local get = api.nvim_buf_get_extmark_by_id
  -- The fold runs are shared by the items alike (draw.lua), and so are their ranges at a length.
  local made = {}
  for idx = 1, #order do
    local entry = items[order[idx]]
    local runs = runs_of[entry]
    if runs ~= nil then
      local first = get(buf, ns, entry, {})[1]
      local next_id = order[idx + 1]
      local stop = next_id and get(buf, ns, items[next_id], {})[1] or line_count
      if first ~= nil and stop ~= nil then
        local body = first + (bare[entry] and 0 or 1)
        local count = stop - body
        local of_runs = made[runs]
        if of_runs == nil then
          of_runs = {}
          made[runs] = of_runs
        end
        local ranges = of_runs[count]
        if ranges == nil then
          ranges = M.fold_ranges(runs, count)
          of_runs[count] = ranges
        end
        visit(entry, body, ranges)
      end
    end
  end
end

--- Keeps which folds are open in `win`, a window of the chat the user leaves, for a window that shows the
--- chat anew. The folds drawn in Insert mode and open until it ends are not the user's choice: left out.
---@param chat AcpChat
---@param win integer
function M.remember(chat, win)
  if
    vim.v.exiting ~= vim.NIL
    or not api.nvim_win_is_valid(win)
    or api.nvim_win_get_buf(win) ~= chat.buf
    or vim.wo[win].foldmethod ~= "manual"
  then
    return
  end
  local open_of, waiting = {}, chat.close_from or math.huge
  api.nvim_win_call(win, function()
    M.looking(function()
      M.each(chat, function(entry, body, ranges)
        if body < waiting then
          open_of[entry] = M.read(body, ranges)
        end
      end)
    end)
  end)
  chat.fold_open = open_of
end

--- The user's choices kept for the item `entry` (see M.remember).
---@param chat AcpChat
---@param entry AcpChatItem
---@return table<integer, true>|nil
function M.remembered(chat, entry)
  return chat.fold_open and chat.fold_open[entry]
end

return M

-- The chat's folds: the fold levels the host gives an item's lines (thoughts, a tool call's details, a long
-- output), kept on the item and given to Neovim by 'foldexpr', closed when new; in Insert mode (the user typing
-- the next prompt) they are brought up to date when it ends.

local M = {}

local api = vim.api
local config = require("acp_nvim.config")
local item_at = require("acp_nvim.ui.chat.items").item_at
local state = require("acp_nvim.ui.chat.state")
local chat_of_buf = state.chat_of_buf
local ns_items = state.ns_items

--- The folds an item keeps of those drawn: none for thoughts unless chat.fold_thoughts.
---@param item table view model
---@param drawn AcpDrawn
---@return (integer|boolean)[]|nil
function M.item_folds(item, drawn)
  if drawn.folds ~= nil and item.kind == "thought" and not config.options.chat.fold_thoughts then
    return nil
  end
  return drawn.folds
end

--- The fold level of the row `offset` of an item's body, as 'foldexpr' gives it.
---@param folds (integer|boolean)[] see AcpDrawn.folds
---@param offset integer
---@return string
local function fold_level(folds, offset)
  local found = nil
  for i = 1, #folds, 3 do
    if folds[i] > offset then
      break
    end
    found = i
  end
  if found == nil then
    return "0"
  end
  local level = folds[found + 1]
  if folds[found + 2] and folds[found] == offset then
    return ">" .. level
  end
  return tostring(level)
end

M.fold_level = fold_level

--- The fold levels 'foldexpr' gives rows `row` (0-based) to `line_count` - 1, in one pass over their items.
---@param chat AcpChat
---@param row integer
---@param line_count integer
---@return table<integer, string> levels[k]: the level of row `row` + k - 1
local function levels_from(chat, row, line_count)
  local buf, order, items = chat.buf, chat.order, chat.items
  local function first_row(idx)
    if idx > #order then
      return line_count
    end
    return api.nvim_buf_get_extmark_by_id(buf, ns_items, items[order[idx]].mark, {})[1] or line_count
  end
  local levels, n = {}, 0
  local entry, first = item_at(chat, row)
  local idx = entry and entry.idx or 1
  local start = entry and first or first_row(1)
  -- Rows above the first item (none in practice): no fold.
  for _ = row, math.min(start, line_count) - 1 do
    n = n + 1
    levels[n] = "0"
  end
  while idx <= #order and start < line_count do
    local item = items[order[idx]]
    local stop = first_row(idx + 1)
    local folds, body = item.folds, start + (item.sep and 1 or 0)
    for r = math.max(start, row), stop - 1 do
      n = n + 1
      levels[n] = folds and fold_level(folds, r - body) or "0"
    end
    idx, start = idx + 1, stop
  end
  return levels
end

local insert_leave_group = api.nvim_create_augroup("acp_nvim_chat_folds", { clear = true })

--- Closes the folds of rows `first` to `stop` (0-based, exclusive) in the chat's windows: once the user opened
--- or closed a fold, Neovim creates new ones open.
---@param chat AcpChat
---@param first integer
---@param stop integer
local function close_folds(chat, first, stop)
  local command = ("silent! keepjumps %d,%dfoldclose!"):format(first + 1, stop)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    if vim.wo[win].foldmethod == "expr" then
      api.nvim_win_call(win, function()
        vim.cmd(command)
      end)
    end
  end
end

--- The folds of rows `first` to `stop` changed (`new`: they are new folds, closed at first). Neovim evaluated
--- 'foldexpr' for them as they changed, but not in Insert mode (the user typing the next prompt): then the
--- chat's folds from there on are updated when Insert mode ends.
---@param chat AcpChat
---@param first integer
---@param stop integer
---@param new boolean
function M.folds_changed(chat, first, stop, new)
  local mode = api.nvim_get_mode().mode:sub(1, 1)
  if mode ~= "i" and mode ~= "R" then
    if new then
      close_folds(chat, first, stop)
    end
    return
  end
  if chat.refold_from == nil then
    api.nvim_create_autocmd("InsertLeave", {
      group = insert_leave_group,
      once = true,
      callback = function()
        local from, close_from = chat.refold_from, chat.close_from
        chat.refold_from, chat.close_from = nil, nil
        if from == nil or not api.nvim_buf_is_valid(chat.buf) then
          return
        end
        local line_count = api.nvim_buf_line_count(chat.buf)
        local wins = vim.tbl_filter(function(win)
          return vim.wo[win].foldmethod == "expr"
        end, vim.fn.win_findbuf(chat.buf))
        if #wins > 0 then
          -- Neovim asks 'foldexpr' for every line from there on, a replay's 14,000 at once: looked up item
          -- by item, 130-170 ms in the keypress that left Insert mode; all the levels in one pass first.
          chat.drawing = { base = from, levels = levels_from(chat, from, line_count) }
          local ok, err = pcall(function()
            for _, win in ipairs(wins) do
              vim._foldupdate(win, from, line_count)
            end
          end)
          chat.drawing = nil
          if not ok then
            error(err, 0)
          end
        end
        if close_from ~= nil then
          close_folds(chat, close_from, line_count)
        end
        for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
          api.nvim_win_call(win, function()
            -- The window scrolled while the folds were not there: its top line may now be inside one.
            local top = vim.fn.foldclosed(vim.fn.line("w0"))
            if top > 0 then
              vim.fn.winrestview({ topline = top })
            end
          end)
        end
      end,
    })
  end
  chat.refold_from = math.min(chat.refold_from or first, first)
  if new then
    chat.close_from = math.min(chat.close_from or first, first)
  end
end

--- 'foldexpr' of chat windows: the fold levels the host gave the item's lines (thoughts, a tool call's
--- details, a long output).
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local buf = api.nvim_get_current_buf()
  local chat = chat_of_buf(buf)
  if chat == nil then
    return "0"
  end
  local drawing = chat.drawing
  if drawing ~= nil and lnum > drawing.base then
    return drawing.levels[lnum - drawing.base] or "0"
  end
  local entry, first = item_at(chat, lnum - 1)
  local folds = entry and entry.folds
  if folds == nil then
    return "0"
  end
  return fold_level(folds, lnum - 1 - first - (entry.sep and 1 or 0))
end

--- 'foldtext' of chat windows: the fold's first line as drawn (its highlights), and how many lines it hides.
---@return table[] chunks {text, group}
function M.foldtext()
  local buf = api.nvim_get_current_buf()
  local row = vim.v.foldstart - 1
  local text = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local chunks, col = {}, 0
  local marks = api.nvim_buf_get_extmarks(buf, state.ns_hl, { row, 0 }, { row, -1 }, { details = true })
  table.sort(marks, function(a, b)
    return a[3] < b[3]
  end)
  for _, mark in ipairs(marks) do
    local start, stop = mark[3], math.min(mark[4].end_col or #text, #text)
    if mark[4].end_row == row and start >= col and stop > start then
      if start > col then
        table.insert(chunks, { text:sub(col + 1, start), "Normal" })
      end
      table.insert(chunks, { text:sub(start + 1, stop), mark[4].hl_group })
      col = stop
    end
  end
  if col < #text then
    table.insert(chunks, { text:sub(col + 1), "Normal" })
  end
  local count = vim.v.foldend - vim.v.foldstart
  table.insert(chunks, { ("  ▸ %d line%s"):format(count, count == 1 and "" or "s"), "AcpChatNotice" })
  return chunks
end

return M

--- "Follow the agent" (`setup{ follow = true }`): show the file the agent reads or writes, with the cursor on
--- the line it reads or the first hunk it wrote, in the last window that is not the chat, its prompt, a
--- floating window or a terminal. The cursor stays where the user has it (the focus is not moved).
local M = {}

local api = vim.api
local opt = require("acp_nvim.editor.answer").opt

---@param win integer
---@return boolean
local function usable(win)
  if api.nvim_win_get_config(win).relative ~= "" then
    return false
  end
  local buf = api.nvim_win_get_buf(win)
  -- The chat's own buffers are told by their filetype: the editor layer knows no chat (ui/chat/init.lua sets it).
  if vim.bo[buf].filetype == "acp_nvim_chat" then
    return false
  end
  local bt = vim.bo[buf].buftype
  return bt == "" or bt == "nowrite"
end

--- The window to show the file in: the previous window if usable, else the last usable one of the tab.
---@return integer?
function M.target_window()
  local prev = vim.fn.win_getid(vim.fn.winnr("#"))
  if prev ~= 0 and usable(prev) then
    return prev
  end
  local cur = api.nvim_get_current_win()
  if usable(cur) then
    return cur
  end
  local wins = api.nvim_tabpage_list_wins(0)
  for i = #wins, 1, -1 do
    if usable(wins[i]) then
      return wins[i]
    end
  end
  return nil
end

--- Shows `path` at `line` (1-based); for a write, `line` nil and `bufnr` the written buffer: the first hunk.
---@param path string
---@param line integer?
---@param bufnr integer?
function M.show(path, line, bufnr)
  line, bufnr = opt(line), opt(bufnr)
  -- The edit it shows may still be queued (fs/follow_disk.lua): its buffer and hunks first.
  require("acp_nvim.editor.fs.follow_disk").settle(path)
  local win = M.target_window()
  if win == nil then
    return
  end
  local buf = bufnr or require("acp_nvim.editor.fs").find_buffer(path)
  if buf == nil then
    buf = vim.fn.bufadd(path)
    vim.bo[buf].buflisted = true
  end
  if line == nil then
    line = 1
    for _, h in ipairs(require("acp_nvim.editor.review").hunks()) do
      if h.bufnr == buf then
        line = h.lnum
        break
      end
    end
  end
  -- A buffer with unsaved edits can be shown in another window without writing ('hidden' or not).
  local ok = pcall(api.nvim_win_set_buf, win, buf)
  if not ok then
    return
  end
  if not api.nvim_buf_is_loaded(buf) then
    pcall(vim.fn.bufload, buf)
  end
  local count = api.nvim_buf_line_count(buf)
  pcall(api.nvim_win_set_cursor, win, { math.max(1, math.min(line, count)), 0 })
  api.nvim_win_call(win, function()
    vim.cmd("normal! zz")
  end)
end

return M

--- Moving among the review's hunks (editor/review.lua): the quickfix list of a session's hunks, the next and
--- previous hunk of the current buffer.
local M = {}

local api = vim.api
local opt = require("acp_nvim.editor.answer").opt
local marks = require("acp_nvim.editor.review.marks")
local store = require("acp_nvim.editor.review.store")

--- Fill the quickfix list with the session's hunks and open it. Returns the number of entries.
---@param session_id string?
---@return integer
function M.quickfix(session_id)
  session_id = opt(session_id)
  local items = {}
  for _, h in ipairs(store.hunks(session_id)) do
    items[#items + 1] = {
      bufnr = h.bufnr,
      lnum = math.min(h.lnum, math.max(1, api.nvim_buf_line_count(h.bufnr))),
      col = 1,
      text = ("agent edit: +%d -%d"):format(h.added, h.removed),
    }
  end
  vim.fn.setqflist(
    {},
    " ",
    { title = "ACP review" .. (session_id and (": " .. session_id) or ""), items = items }
  )
  if #items > 0 then
    vim.cmd("botright copen")
  end
  return #items
end

---@param forward boolean
---@return boolean
local function jump(forward)
  local buf = api.nvim_get_current_buf()
  local cur = api.nvim_win_get_cursor(0)[1] - 1
  local rows = {}
  for _, files in pairs(store.sessions) do
    if files[buf] then
      for _, h in pairs(files[buf].hunks) do
        local r = marks.span(buf, h)
        rows[#rows + 1] = h.after and r - 1 or r
      end
    end
  end
  table.sort(rows)
  local target
  if forward then
    for _, r in ipairs(rows) do
      if r > cur then
        target = r
        break
      end
    end
    target = target or rows[1]
  else
    for i = #rows, 1, -1 do
      if rows[i] < cur then
        target = rows[i]
        break
      end
    end
    target = target or rows[#rows]
  end
  if not target then
    return false
  end
  local last = api.nvim_buf_line_count(buf) - 1
  api.nvim_win_set_cursor(0, { math.min(target, last) + 1, 0 })
  return true
end

--- Move the cursor to the next agent hunk of the current buffer (wrapping).
---@return boolean
function M.next_hunk()
  return jump(true)
end

--- Move the cursor to the previous agent hunk of the current buffer (wrapping).
---@return boolean
function M.prev_hunk()
  return jump(false)
end

return M

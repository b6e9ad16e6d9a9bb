--- The extmarks of the review's hunks (editor/review.lua): where a hunk is now, the old lines shown above it,
--- its sign.
local M = {}

local api = vim.api
local edit = require("acp_nvim.editor.fs.edit")

M.ns = api.nvim_create_namespace("acp_nvim_review")
--- The signs of hunks that added or changed lines. They are marks of their own: a sign is drawn on every row
--- its mark spans, end row included, while the hunk's mark ends at column 0 of the row after its last line
--- (so that it grows with a line the user adds at the hunk's end).
M.sign_ns = api.nvim_create_namespace("acp_nvim_review_signs")

--- The most old lines shown as virtual text above a hunk.
local MAX_VIRT_LINES = 50

local SIGNS = { add = "+", change = "~", delete = "_" }

--- Current 0-based [row, end_row) of a hunk; a zero-width range is an insertion point.
---@param buf integer
---@param hunk acp_nvim.ReviewHunk
---@return integer, integer
function M.span(buf, hunk)
  local m = api.nvim_buf_get_extmark_by_id(buf, M.ns, hunk.mark, { details = true })
  local row = m[1] or 0
  local end_row = (m[3] and m[3].end_row) or row
  if hunk.after then
    return row + 1, row + 1
  end
  return row, math.max(row, end_row)
end

---@param buf integer
---@param hunk acp_nvim.ReviewHunk
function M.unmark(buf, hunk)
  pcall(api.nvim_buf_del_extmark, buf, M.ns, hunk.mark)
  if hunk.sign then
    pcall(api.nvim_buf_del_extmark, buf, M.sign_ns, hunk.sign)
  end
end

---@param buf integer
---@param file acp_nvim.ReviewFile
function M.clear(buf, file)
  for _, hunk in pairs(file.hunks) do
    M.unmark(buf, hunk)
  end
  file.hunks = {}
end

--- Place the mark of one xdiff hunk of (original -> current).
---@param buf integer
---@param sa integer
---@param ca integer
---@param sb integer
---@param cb integer
---@param original string[]
---@return acp_nvim.ReviewHunk
function M.place(buf, sa, ca, sb, cb, original)
  local old = {}
  for k = 0, ca - 1 do
    old[#old + 1] = original[sa + k]
  end
  local virt
  if #old > 0 then
    virt = {}
    for k = 1, math.min(#old, MAX_VIRT_LINES) do
      virt[#virt + 1] = { { old[k], "AcpNvimReviewOld" } }
    end
    if #old > MAX_VIRT_LINES then
      virt[#virt + 1] =
        { { ("… %d more removed lines"):format(#old - MAX_VIRT_LINES), "AcpNvimReviewOld" } }
    end
  end
  local hunk = { old = old }
  if cb > 0 then
    local kind = ca == 0 and "Add" or "Change"
    hunk.mark = api.nvim_buf_set_extmark(buf, M.ns, sb - 1, 0, {
      end_row = sb - 1 + cb,
      end_col = 0,
      hl_group = "AcpNvimReview" .. kind,
      hl_eol = true,
      virt_lines = virt,
      virt_lines_above = true,
    })
    hunk.sign = api.nvim_buf_set_extmark(buf, M.sign_ns, sb - 1, 0, {
      end_row = sb - 2 + cb,
      end_col = 0,
      sign_text = ca == 0 and SIGNS.add or SIGNS.change,
      sign_hl_group = "AcpNvimReview" .. kind,
    })
    return hunk
  end
  -- A deletion: the old lines went between new lines sb and sb + 1.
  local count = api.nvim_buf_line_count(buf)
  local row, after = sb, false
  if sb >= count and not (count == 1 and #edit.buf_lines(buf) == 0) then
    row, after = count - 1, true
  end
  hunk.after = after or nil
  hunk.mark = api.nvim_buf_set_extmark(buf, M.ns, math.min(row, count - 1), 0, {
    sign_text = SIGNS.delete,
    sign_hl_group = "AcpNvimReviewDelete",
    virt_lines = virt,
    virt_lines_above = not after,
  })
  return hunk
end

return M

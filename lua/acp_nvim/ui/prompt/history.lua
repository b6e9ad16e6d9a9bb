-- The prompts sent (ui/prompt.lua), shared by all sessions, and each prompt buffer's walk through them with
-- its unsent text kept meanwhile.

local M = {}

local api = vim.api

---@type string[] sent prompts, oldest first (shared by all sessions)
local history = {}
---@type table<integer, integer> prompt buffer -> history position being shown (#history + 1 = the draft)
local position = {}
---@type table<integer, string[]> prompt buffer -> unsent text kept while walking the history
local drafts = {}

---@param text string
function M.remember(text)
  if text ~= "" and history[#history] ~= text then
    table.insert(history, text)
  end
end

---@return string[]
function M.history()
  return vim.deepcopy(history)
end

--- The prompt of `buf` was sent: its next walk starts from the newest prompt.
---@param buf integer
function M.reset(buf)
  position[buf] = nil
  drafts[buf] = nil
end

---@param buf integer
---@param step integer -1 older, +1 newer
function M.walk(buf, step)
  local pos = position[buf] or (#history + 1)
  local target = pos + step
  if target < 1 or target > #history + 1 then
    return
  end
  if pos == #history + 1 then
    drafts[buf] = api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  position[buf] = target
  local lines = target == #history + 1 and (drafts[buf] or {}) or vim.split(history[target], "\n")
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(buf), 0 })
end

return M

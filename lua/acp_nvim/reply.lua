--- Late answers to the Python host: a picker's choice, a terminal's exit. The host waits on `token` (see
--- acp_nvim/nvim/replies.py); an answer after the host stopped waiting is dropped there.
local M = {}

---@param token integer
---@param value any
function M.send(token, value)
  local info = require("acp_nvim.host").info()
  if info == nil then
    return
  end
  if value == nil then
    value = vim.NIL
  end
  pcall(vim.rpcnotify, info.channel, "acp_reply", token, value)
end

return M

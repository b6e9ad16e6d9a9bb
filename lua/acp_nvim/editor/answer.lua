--- What the Lua side hands back to the Python host, and what it gets from it.
---
--- Modules that answer an agent's request for the host (editor/fs, editor/terminal.lua) answer with a plain table,
--- `{ ok = true, ... }` or the error made by `M.err`, so the host makes one `exec_lua` call per request and
--- never sees a Lua error. Values the host sends may be Python's None, which arrives as vim.NIL (truthy in
--- Lua); `M.opt` turns it into nil.
local M = {}

-- JSON-RPC error codes the answers use (the host sends them to the agent as they are).
M.ERR_INVALID_PARAMS = -32602
M.ERR_INTERNAL = -32603
M.ERR_NOT_FOUND = -32002

--- An error answer: `{ ok = false, code, message, data? }`.
---@param code integer
---@param message string
---@param data table?
---@return table
function M.err(code, message, data)
  return { ok = false, code = code, message = message, data = data }
end

--- `v`, with vim.NIL (Python's None) as nil.
---@param v any
---@return any
function M.opt(v)
  if v == vim.NIL then
    return nil
  end
  return v
end

return M

--- What the Lua side hands back to the Python host, and what it gets from it.
---
--- Modules that carry out an agent's request for the host (fs.lua, terminal.lua) answer with a plain table,
--- `{ ok = true, ... }` or a fact made by `M.refused` (`{ ok = false, fact = "path_changed", ... }`), so the
--- host makes one `exec_lua` call per request and never sees a Lua error. Lua decides no error: which
--- JSON-RPC code and message an agent gets for a fact is the host's (acp_nvim/app/editor/fs_rules.py,
--- acp_nvim/app/editor/terminal_rules.py). Values the host sends may be Python's None, which arrives as vim.NIL
--- (truthy in Lua); `M.opt` turns it into nil.
local M = {}

--- A request not carried out, and why: `fact` names what was found, `fields` (optional) says more
--- (`detail`, a description of what was seen; `kind`, `size`).
---@param fact string
---@param fields table?
---@return table
function M.refused(fact, fields)
  local answer = { ok = false, fact = fact }
  for k, v in pairs(fields or {}) do
    answer[k] = v
  end
  return answer
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

-- Several of the host's Lua calls in one RPC (acp_nvim/nvim/bridge.py, `Bridge.lua_later`): each call is a
-- chunk of Lua and its arguments, run in order as if each had come on its own.

local M = {}

---@type table<string, function> chunks compiled so far, by their code (the host sends a few constant ones)
local compiled = {}

---@param calls table[] { { code, args, count }, ... }: `count` arguments, nil sent as vim.NIL
function M.run(calls)
  local errors = {}
  for _, call in ipairs(calls) do
    local code, args, count = call[1], call[2], call[3]
    local chunk = compiled[code]
    if chunk == nil then
      chunk = assert(loadstring(code))
      compiled[code] = chunk
    end
    -- Inside a list nil travels as vim.NIL; a call of its own would have received nil.
    for i = 1, count do
      if args[i] == vim.NIL then
        args[i] = nil
      end
    end
    local ok, err = pcall(chunk, unpack(args, 1, count))
    if not ok then
      errors[#errors + 1] = tostring(err)
    end
  end
  -- After all of them, so one failing call does not drop the others; the host logs it as before.
  if #errors > 0 then
    error(table.concat(errors, "\n"), 0)
  end
end

return M

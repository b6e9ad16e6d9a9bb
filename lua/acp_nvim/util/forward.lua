--- A facade whose fields live in its parts: reading or writing one of `owners`' names reaches the part that
--- owns it (under `renamed[name]` there when it has another name), so that a caller setting `facade.budget_ns`
--- (a test, the bench's wrapper of a function) changes what the part itself uses. Other names stay the
--- facade's own.
local M = {}

---@param facade table
---@param owners table<string, table> name -> the part that owns it
---@param renamed table<string, string>? name -> its name in that part, when another
function M.forward(facade, owners, renamed)
  renamed = renamed or {}
  setmetatable(facade, {
    __index = function(_, name)
      local owner = owners[name]
      if owner ~= nil then
        return owner[renamed[name] or name]
      end
    end,
    __newindex = function(self, name, value)
      local owner = owners[name]
      if owner ~= nil then
        owner[renamed[name] or name] = value
      else
        rawset(self, name, value)
      end
    end,
  })
end

return M

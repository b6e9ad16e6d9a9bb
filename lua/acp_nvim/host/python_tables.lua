--- The tables Python owns that Lua needs before any host runs (media types, status facts, option defaults):
--- JSON files of the package (acp_nvim/app/), read from the plugin's own tree.
local M = {}

local notify = require("acp_nvim.util.notify")

--- The decoded file acp_nvim/app/`name`, or `fallback` after saying once why it could not be read (a broken
--- install).
---@param name string
---@param fallback table
---@param valid? fun(decoded: table): boolean
---@return table
function M.read(name, fallback, valid)
  local path = vim.fs.joinpath(require("acp_nvim.host").root, "acp_nvim", "app", name)
  local ok, decoded = pcall(function()
    return vim.json.decode(table.concat(vim.fn.readfile(path), "\n"))
  end)
  if not ok or type(decoded) ~= "table" or (valid ~= nil and not valid(decoded)) then
    notify.error(("cannot read %s: %s"):format(path, tostring(decoded)))
    return fallback
  end
  return decoded
end

return M

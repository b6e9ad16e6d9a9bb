-- lualine component `acp_nvim`: sections = { lualine_x = { "acp_nvim" } }
local component = require("lualine.component"):extend()

---@return string
function component:update_status()
  return require("acp_nvim").statusline()
end

return component

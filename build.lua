-- lazy.nvim runs this file on install and update (no `build` key needed). Other plugin managers: run
-- :lua require("acp_nvim.build").run() after installing or updating acp.nvim.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h")
if not vim.o.runtimepath:find(root, 1, true) then
  vim.opt.runtimepath:prepend(root)
end
local ok, message = require("acp_nvim.build").run()
if not ok then
  error(message, 0)
end

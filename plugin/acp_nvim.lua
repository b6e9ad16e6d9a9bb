-- Loaded at start-up: commands and the remote host registration only (cheap; nothing starts until used).
if vim.g.loaded_acp_nvim then
  return
end
vim.g.loaded_acp_nvim = true

if vim.fn.has("nvim-0.10") == 0 then
  return
end

require("acp_nvim.commands").create()
require("acp_nvim.host").register()

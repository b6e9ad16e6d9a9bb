-- Loaded at start-up: commands, the remote host registration and the command-line warm-up (cheap; nothing
-- starts until used).
if vim.g.loaded_acp_nvim then
  return
end
vim.g.loaded_acp_nvim = true

if vim.fn.has("nvim-0.10") == 0 then
  return
end

require("acp_nvim.commands").create()
require("acp_nvim.host").register()
require("acp_nvim.warmup").enable_by_default()

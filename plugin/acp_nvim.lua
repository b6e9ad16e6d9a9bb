-- Loaded at start-up: commands, highlight groups, the remote host registration and the command-line warm-up
-- (cheap; nothing starts until used).
if vim.g.loaded_acp_nvim then
  return
end
vim.g.loaded_acp_nvim = true

-- Terminals need jobstart(..., { term = true }), new in 0.11; setup() names the version to the user.
if vim.fn.has("nvim-0.11") == 0 then
  return
end

require("acp_nvim.ui.commands").create()
require("acp_nvim.ui.session_commands").track_chats()
require("acp_nvim.ui.prompt.context").track()
require("acp_nvim.ui.highlights").setup()
require("acp_nvim.wiring").setup()
require("acp_nvim.host").register()
require("acp_nvim.host.warmup").enable_by_default()

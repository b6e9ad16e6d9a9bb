-- Chat buffers: markdown highlighting of the agent's text when the parser is available (bundled in 0.10+), by
-- ui/chat_highlight/ rather than vim.treesitter.start, whose cost grows with the chat.
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

require("acp_nvim.ui.chat_highlight").attach(0)
vim.opt_local.conceallevel = 2
vim.b.undo_ftplugin = "setlocal conceallevel<"

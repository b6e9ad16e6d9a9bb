-- Chat buffers: markdown highlighting of the agent's text when the parser is available (bundled in 0.10+).
if vim.b.did_ftplugin then
  return
end
vim.b.did_ftplugin = true

pcall(vim.treesitter.start, 0, "markdown")
vim.opt_local.conceallevel = 2
vim.b.undo_ftplugin = "setlocal conceallevel<"

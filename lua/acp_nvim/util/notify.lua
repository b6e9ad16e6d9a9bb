--- The one way the plugin tells the user something: every message carries the same prefix and title, so a
--- user (and a notification plugin) can tell the plugin's messages from Neovim's.
local M = {}

M.PREFIX = "acp.nvim: "

--- Shows `message` with the plugin's prefix and title.
---@param message string
---@param level integer? a vim.log.levels value; INFO when nil
function M.notify(message, level)
  vim.notify(M.PREFIX .. message, level or vim.log.levels.INFO, { title = "acp.nvim" })
end

--- Shows a message that names the plugin itself already (the host's start failures, kept for the status too).
---@param message string
---@param level integer
function M.show(message, level)
  vim.notify(message, level, { title = "acp.nvim" })
end

---@param message string
function M.info(message)
  M.notify(message, vim.log.levels.INFO)
end

---@param message string
function M.warn(message)
  M.notify(message, vim.log.levels.WARN)
end

---@param message string
function M.error(message)
  M.notify(message, vim.log.levels.ERROR)
end

return M

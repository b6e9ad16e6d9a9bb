-- What each preset's agent does itself and what it routes through Neovim (fs/*, terminal/*, permission
-- requests), as measured with the versions named. `:checkhealth acp_nvim` and `:help acp_nvim-presets` show it.
-- Keyed by executable: the claude preset runs one of two agents that behave differently.

local M = {}

---@class AcpAgentRoutes
---@field measured string the package and version the row was measured with
---@field read string
---@field write string
---@field terminal string
---@field permission string

---@type table<string, AcpAgentRoutes>
M.by_command = {
  ["claude-agent-acp"] = {
    measured = "@agentclientprotocol/claude-agent-acp 0.101 (any version since 0.18)",
    read = "reads files itself",
    write = "writes the disk itself",
    terminal = "runs commands itself",
    permission = "asks permission through Neovim",
  },
  ["claude-code-acp"] = {
    measured = "@zed-industries/claude-code-acp 0.16.2",
    read = "reads through Neovim",
    write = "writes through Neovim",
    terminal = "runs commands in Neovim terminals",
    permission = "asks permission through Neovim",
  },
  ["codex-acp"] = {
    measured = "@zed-industries/codex-acp 0.16.0",
    read = "reads files itself (with cat)",
    write = "writes the disk itself (apply_patch)",
    terminal = "runs commands itself",
    permission = "asks permission through Neovim for edits",
  },
  gemini = {
    measured = "@google/gemini-cli 0.61.0",
    read = "reads through Neovim only from its edit tool",
    write = "writes through Neovim",
    terminal = "runs commands itself",
    permission = "asks permission through Neovim",
  },
  opencode = {
    measured = "opencode-ai 1.18.33",
    read = "reads files itself",
    write = "writes through Neovim without waiting for the answer, and the disk itself",
    terminal = "runs commands itself",
    permission = "asks permission through Neovim",
  },
}

--- One line for the agent started by `cmd`, or nil when it was not measured.
---@param cmd string
---@return string|nil
function M.describe(cmd)
  local routes = M.by_command[vim.fs.basename(cmd)]
  if routes == nil then
    return nil
  end
  return ("%s; %s; %s; %s (measured: %s)"):format(
    routes.read,
    routes.write,
    routes.terminal,
    routes.permission,
    routes.measured
  )
end

return M

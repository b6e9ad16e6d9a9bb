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
---@field needs { exe: string, os: string, why: string }[]? programs the agent cannot work without

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
    read = "reads files itself (never fs/read)",
    write = "writes the disk itself (apply_patch, after permission; no fs/write)",
    terminal = "runs commands itself (exec_command; output only in the tool call)",
    permission = "asks permission through Neovim for edits and new files (its default read-only mode),"
      .. " not for a harmless command",
    needs = {
      { exe = "bwrap", os = "Linux", why = "its sandbox runs commands and patches under bubblewrap" },
    },
  },
  gemini = {
    measured = "@google/gemini-cli 0.61.0 (--acp)",
    read = "reads through Neovim only from its edit tools (replace, write_file); read_file reads the disk",
    write = "writes through Neovim",
    terminal = "runs commands itself (run_shell_command)",
    permission = "asks permission through Neovim for edits and shell commands",
  },
  opencode = {
    measured = "opencode-ai 1.18.33",
    read = "reads files itself (never fs/read)",
    write = "writes the disk itself, and through Neovim (without waiting for the answer) only when edits"
      .. ' need permission (permission.edit = "ask")',
    terminal = "runs commands itself (bash)",
    permission = "asks permission through Neovim only as opencode.json configures it (by default for nothing)",
  },
}

--- The routes of the agent started by `cmd`, or nil when it was not measured.
---@param cmd string
---@return AcpAgentRoutes|nil
function M.of(cmd)
  return M.by_command[vim.fs.basename(cmd)]
end

--- What the agent started by `cmd` needs and this system lacks: one message each.
---@param cmd string
---@return string[]
function M.missing(cmd)
  local routes = M.of(cmd)
  local out = {}
  local sysname = vim.uv.os_uname().sysname
  for _, need in ipairs(routes and routes.needs or {}) do
    if need.os == sysname and vim.fn.executable(need.exe) ~= 1 then
      out[#out + 1] = ("%s not found: %s needs it on %s (%s)"):format(
        need.exe,
        vim.fs.basename(cmd),
        need.os,
        need.why
      )
    end
  end
  return out
end

--- One line for the agent started by `cmd`, or nil when it was not measured.
---@param cmd string
---@return string|nil
function M.describe(cmd)
  local routes = M.of(cmd)
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

-- acp.nvim: an Agent Client Protocol client. Public API: setup(), status(), statusline() and the actions the
-- :Acp* commands call.

local M = {}

local config = require("acp_nvim.config")
local host = require("acp_nvim.host")
local status = require("acp_nvim.status")

local did_setup = false

---@param message string
---@param level? integer
local function notify(message, level)
  vim.notify("acp.nvim: " .. message, level or vim.log.levels.ERROR, { title = "acp.nvim" })
end

--- Configures the plugin; see :help acp_nvim-options. Problems are reported naming the field.
---@param opts table|nil
---@return boolean ok false when Neovim is too old or an option was rejected
function M.setup(opts)
  if vim.fn.has("nvim-0.10") == 0 then
    local v = vim.version()
    notify(("requires Neovim 0.10 or newer (this is %d.%d.%d)"):format(v.major, v.minor, v.patch))
    return false
  end
  did_setup = true
  local errors = config.apply(opts)
  require("acp_nvim.highlights").setup()
  host.register()
  if #errors > 0 then
    notify("invalid options (defaults used for these):\n" .. table.concat(errors, "\n"))
    return false
  end
  return true
end

local function ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- Starts an agent (the default one when `name` is nil) and a session in the current directory.
---@param name string|nil
function M.start(name)
  ensure_setup()
  name = (name and name ~= "") and name or config.options.default_agent
  local agent, err = config.agent(name)
  if agent == nil then
    notify(err --[[@as string]])
    status.update({ state = "error", error = err, agent = { name = name } })
    return
  end
  status.set({ state = "starting", agent = { name = name } })
  host.notify("acp_start", {
    name = name,
    cmd = agent.cmd,
    args = agent.args,
    env = vim.tbl_isempty(agent.env) and vim.empty_dict() or agent.env,
    cwd = vim.fn.getcwd(),
    install_hint = agent.install_hint or "",
    handshake_timeout = config.options.handshake_timeout,
  })
end

function M.stop()
  ensure_setup()
  if host.info() == nil then
    status.update({ state = "stopped", session_id = vim.NIL, error = vim.NIL })
    return
  end
  host.notify("acp_stop")
end

---@param name string|nil
function M.restart(name)
  local current = status.get()
  M.start((name and name ~= "") and name or (current.agent and current.agent.name) or nil)
end

--- Opens (or focuses) the chat of the current session.
function M.chat()
  ensure_setup()
  if not require("acp_nvim.chat").open() then
    notify("no chat yet: start an agent with :AcpStart", vim.log.levels.WARN)
  end
end

--- Sends a prompt; `selections` ({path, start, end, text, filetype}) are attached as context.
---@param text string
---@param selections table[]|nil
---@return boolean sent
function M.prompt(text, selections)
  ensure_setup()
  local state = status.get().state
  if state ~= "ready" then
    local why = (state == "running" or state == "awaiting_permission")
        and "the agent is still working: wait, or :AcpCancel"
      or "no agent is ready: start one with :AcpStart"
    notify(why, vim.log.levels.WARN)
    return false
  end
  require("acp_nvim.prompt").remember(text)
  if not host.notify("acp_prompt", text, selections or {}) then
    return false
  end
  -- At once, not when the host confirms: a second send in between must already see the agent busy.
  status.update({ state = "running" })
  return true
end

function M.cancel()
  ensure_setup()
  if host.info() ~= nil then
    host.notify("acp_cancel")
  end
end

---@return AcpStatus
function M.status()
  return status.get()
end

---@return string
function M.statusline()
  return status.statusline()
end

return M

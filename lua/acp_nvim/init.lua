-- acp.nvim: an Agent Client Protocol client. Public API: setup(), status(), statusline() and the actions the
-- :Acp* commands call.

local M = {}

local config = require("acp_nvim.config")
local host = require("acp_nvim.host")
local host_api = require("acp_nvim.host.api")
local status = require("acp_nvim.ui.status")

local did_setup = false

local notify = require("acp_nvim.util.notify")

-- What `M.prompt` requires on its first use (the disk watch, ~1.5 ms when cold), loaded on a tick of its own
-- once the host reports a status (an agent starts): the user's first prompt is shown as fast as the next ones.
local function preload_for_prompts()
  vim.api.nvim_create_autocmd("User", {
    group = vim.api.nvim_create_augroup("acp_nvim_preload", { clear = true }),
    pattern = "AcpNvimStatus",
    once = true,
    callback = function()
      vim.schedule(function()
        require("acp_nvim.editor.fs.disk_watch")
      end)
    end,
  })
end

--- Configures the plugin; see :help acp_nvim-options. Problems are reported naming the field: those of the
--- options read before a host runs (`python`, `prestart_host`, `log`) at once, the others by the host when it
--- starts (at once when it already runs), without starting one here.
---@param opts table|nil
---@return boolean ok false when Neovim is too old or a bootstrap option was rejected
function M.setup(opts)
  if vim.fn.has("nvim-0.11") == 0 then
    local v = vim.version()
    notify.error(("requires Neovim 0.11 or newer (this is %d.%d.%d)"):format(v.major, v.minor, v.patch))
    return false
  end
  did_setup = true
  local errors = config.apply(opts)
  require("acp_nvim.host.api").setup(config.for_host())
  require("acp_nvim.ui.agents").reset()
  require("acp_nvim.ui.highlights").setup()
  require("acp_nvim.editor").setup()
  require("acp_nvim.wiring").setup()
  host.register()
  host.prestart(config.options.prestart_host)
  if config.options.prestart_host == true then
    require("acp_nvim.host.warmup").disable()
  else
    -- Where no host was started ahead (no UI with "auto", or false), it starts while an :Acp* command is
    -- being typed (lua/acp_nvim/host/warmup.lua).
    require("acp_nvim.host.warmup").enable()
  end
  preload_for_prompts()
  if #errors > 0 then
    notify.error("invalid options (defaults used for these):\n" .. table.concat(errors, "\n"))
    return false
  end
  return true
end

local function ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

---@param name string|nil
---@return table what acp_start and acp_restart take: the agent (the host resolves it) and Neovim's cwd
local function start_request(name)
  return { name = name or vim.NIL, cwd = vim.fn.getcwd() }
end

--- Starts an agent (the default one when `name` is nil) and a session in the current directory. Whether the
--- agent exists is the host's to say (it owns the configuration).
---@param name string|nil
function M.start(name)
  ensure_setup()
  name = (name and name ~= "") and name or config.default_agent()
  -- A running agent opens another session instead (the host decides): the table says in which states the
  -- start of the current agent is a real start.
  local fact = name ~= nil and status.get().agent_name == name and "current_agent_start_requested"
    or "agent_start_requested"
  status.record(fact, name and { agent = { name = name } } or nil)
  host_api.start(start_request(name))
end

--- Opens another session on the current agent (the default one when none runs).
function M.new()
  M.start(status.get().agent_name)
end

function M.stop()
  ensure_setup()
  if host.info() == nil then
    status.record("stopped_without_host")
    return
  end
  host_api.stop(require("acp_nvim.ui.session_commands").current() or vim.NIL)
end

--- Stops the agent (the current one when `name` is nil) and starts it again with a new session.
---@param name string|nil
function M.restart(name)
  ensure_setup()
  name = (name and name ~= "") and name or status.get().agent_name or config.default_agent()
  status.record("restart_requested", name and { agent = { name = name } } or nil)
  host_api.restart(start_request(name))
end

--- Opens (or focuses) the chat of the current session.
function M.chat()
  ensure_setup()
  local chat = require("acp_nvim.ui.chat")
  if chat.open() then
    require("acp_nvim.ui.prompt").start_typing()
    return
  end
  if status.chat_coming() then
    chat.focus_when_created = true
  else
    notify.warn("no chat yet: start an agent with :AcpStart")
  end
end

--- Sends a prompt; `selections` ({path, start, end, text, filetype}) are attached as context.
---@param text string
---@param selections table[]|nil
---@return boolean sent
function M.prompt(text, selections)
  return M._send(text, selections, host_api.prompt)
end

--- Sends a prompt into the agent's running turn, where the agent takes it (else it is queued, and sent
--- when the turn ends); with no turn running it is sent as any prompt.
---@param text string
---@param selections table[]|nil
---@return boolean sent
function M.steer(text, selections)
  return M._send(text, selections, host_api.steer)
end

---@param text string
---@param selections table[]|nil
---@param send fun(text: string, selections: table[], session: string|userdata): boolean
---@return boolean sent
function M._send(text, selections, send)
  ensure_setup()
  -- While a turn runs the prompt goes too: the host queues it (app/sessions/prompt_queue.py).
  local applies, refusal = status.applies("prompt_submitted")
  if not applies and refusal ~= nil then
    notify.warn(refusal)
    return false
  end
  require("acp_nvim.ui.prompt").remember(text)
  local session = require("acp_nvim.ui.session_commands").current() or vim.NIL
  -- Before the host hears of the prompt: its watch of the files starts without holding the prompt back.
  require("acp_nvim.editor.fs.disk_watch").before_prompt()
  if not send(text, selections or {}, session) then
    return false
  end
  -- At once, not when the host confirms: the statusline says "running" from the key on.
  status.record("prompt_submitted")
  return true
end

--- Cancels the current chat's turn (and its subagents); `what` "subagent": one of its subagents alone.
---@param what string|nil
function M.cancel(what)
  ensure_setup()
  if host.info() ~= nil then
    host_api.cancel(require("acp_nvim.ui.session_commands").current() or vim.NIL, what or vim.NIL)
  end
end

-- Sessions, login, modes and options (lua/acp_nvim/ui/session_commands.lua has the details).
M.sessions = function(...)
  ensure_setup()
  require("acp_nvim.ui.session_commands").sessions(...)
end
M.fork = function()
  ensure_setup()
  require("acp_nvim.ui.session_commands").fork()
end
M.mode = function(...)
  ensure_setup()
  require("acp_nvim.ui.session_commands").mode(...)
end
M.config = function(...)
  ensure_setup()
  require("acp_nvim.ui.session_commands").config(...)
end
M.auth = function(...)
  ensure_setup()
  require("acp_nvim.ui.session_commands").auth(...)
end
M.logout = function()
  ensure_setup()
  require("acp_nvim.ui.session_commands").logout()
end
M.add_dir = function(...)
  ensure_setup()
  require("acp_nvim.ui.session_commands").add_dir(...)
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

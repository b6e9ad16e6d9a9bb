-- Every method of the Python host that Lua calls, declared once: the Lua half of the Python<->Lua boundary.
-- One function per `rpc_export` of rplugin/python3/acp_nvim_host.py; no other module names a host method
-- (tests/unit/test_boundary.py checks both). The other direction, Python calling Lua, is declared in
-- acp_nvim/nvim/lua_api.py.
--
-- Commands start the host when needed (a failure to start is reported, and they return false); what only
-- makes sense to a running host (focus, close, replies, :AcpLog) is dropped or answered without one.

local M = {}

---@return integer|nil channel of the host when it runs (or is starting)
local function running_channel()
  local info = require("acp_nvim.host").info()
  return info and info.channel or nil
end

-- Starts the host if needed; reports a failure to start.
---@param method string
---@param ... any
---@return boolean sent
local function command(method, ...)
  local channel = require("acp_nvim.host").channel_for_command()
  if channel == nil then
    return false
  end
  vim.rpcnotify(channel, method, ...)
  return true
end

-- ---- start-up (lua/acp_nvim/host/init.lua) -------------------------------------------------------------

--- Sent as soon as the host is spawned: it answers with `host.bootstrapped` once it has loaded.
---@param channel integer
---@param options table {log, log_level}
function M.bootstrap(channel, options)
  vim.rpcnotify(channel, "acp_bootstrap", options)
end

--- The same, waiting for the answer (versions included): through the remote-plugin function, which
--- remote#host starts the host for. For :checkhealth only.
---@param options table
---@return boolean ok, any info_or_error
function M.bootstrap_sync(options)
  return pcall(vim.fn.AcpNvimBootstrap, options)
end

-- ---- agents and prompts --------------------------------------------------------------------------

---@param spec table the agent's command and what its sessions are opened with (sessions.spec)
---@return boolean sent
function M.start(spec)
  return command("acp_start", spec)
end

---@param session_id string|userdata session id or vim.NIL (the current one)
---@return boolean sent
function M.stop(session_id)
  return command("acp_stop", session_id)
end

---@param spec table
---@return boolean sent
function M.restart(spec)
  return command("acp_restart", spec)
end

---@param text string
---@param selections table[]
---@param session_id string|userdata
---@return boolean sent
function M.prompt(text, selections, session_id)
  return command("acp_prompt", text, selections, session_id)
end

---@param session_id string|userdata
---@return boolean sent
function M.cancel(session_id)
  return command("acp_cancel", session_id)
end

-- ---- sessions, modes, options, login (lua/acp_nvim/ui/session_commands.lua) -------------------------------

---@param spec table
---@param action "open"|"delete"
---@param everywhere boolean
---@param session_id string|userdata
---@return boolean sent
function M.sessions(spec, action, everywhere, session_id)
  return command("acp_sessions", spec, action, everywhere, session_id)
end

---@param session_id string|userdata
---@param mode_id string|userdata
---@return boolean sent
function M.mode(session_id, mode_id)
  return command("acp_mode", session_id, mode_id)
end

---@param session_id string|userdata
---@param option_id string|userdata
---@param value string|userdata
---@return boolean sent
function M.config(session_id, option_id, value)
  return command("acp_config", session_id, option_id, value)
end

---@param session_id string|userdata
---@param method_id string|userdata
---@return boolean sent
function M.auth(session_id, method_id)
  return command("acp_auth", session_id, method_id)
end

---@param session_id string|userdata
---@return boolean sent
function M.logout(session_id)
  return command("acp_logout", session_id)
end

---@param session_id string|userdata
---@param directory string
---@return boolean sent
function M.add_dir(session_id, directory)
  return command("acp_add_dir", session_id, directory)
end

--- The user entered a chat: its session becomes the current one. Nothing to do without a host.
---@param session_id string
function M.focus(session_id)
  local channel = running_channel()
  if channel ~= nil then
    vim.rpcnotify(channel, "acp_focus", session_id)
  end
end

--- The user closed a chat buffer: its session ends. Nothing to do without a host.
---@param session_id string
function M.close(session_id)
  local channel = running_channel()
  if channel ~= nil then
    vim.rpcnotify(channel, "acp_close", session_id)
  end
end

--- The disk watch (lua/acp_nvim/editor/fs/follow_disk.lua) saw loaded files change behind their buffers.
---@param session_id string
---@param paths string[]
function M.disk_changed(session_id, paths)
  local channel = running_channel()
  if channel ~= nil then
    pcall(vim.rpcnotify, channel, "acp_disk_changed", session_id, paths)
  end
end

-- ---- the ACP Registry (lua/acp_nvim/ui/agents.lua) -----------------------------------------------------

--- The registry's ids, sent back through `ui.agents.catalog` (from the cache at once, fetched when stale).
---@param options table ui.agents.options()
---@return boolean sent
function M.registry_load(options)
  return command("acp_registry_load", options)
end

--- A picker of the configured agents and the registry's; the host starts the one chosen.
---@param options table
---@param configured string[]
---@param default string|nil
---@return boolean sent
function M.registry_pick(options, configured, default)
  return command("acp_registry_pick", options, configured, default or vim.NIL)
end

--- :AcpAgents: list, update or remove installed registry agents.
---@param options table
---@param action string "" | "update" | "remove"
---@param id string "" for a picker
---@return boolean sent
function M.registry_agents(options, action, id)
  return command("acp_registry_agents", options, action, id)
end

--- The registry's state for :checkhealth (the host reads its cache, no network): a table, or false and why.
---@param options table
---@param default string|nil
---@return boolean ok, any health_or_error
function M.registry_health(options, default)
  local channel = running_channel()
  if channel == nil then
    return false, "the host is not running"
  end
  return pcall(vim.rpcrequest, channel, "acp_registry_health", options, default or vim.NIL)
end

-- ---- answers and options ---------------------------------------------------------------------------

--- The late answer to a question the host asked with `token` (lua/acp_nvim/ui/ask.lua).
---@param token integer
---@param value any vim.NIL for none
function M.reply(token, value)
  local channel = running_channel()
  if channel ~= nil then
    -- pcall: the host may have gone away meanwhile; nobody is left to answer then.
    pcall(vim.rpcnotify, channel, "acp_reply", token, value)
  end
end

--- The fs/terminal/sandbox options (services.options), sent before every start. Silent when the host cannot
--- start: the start that follows reports that, once.
---@param options table
function M.editor_options(options)
  local info = require("acp_nvim.host").start()
  if info ~= nil then
    vim.rpcnotify(info.channel, "acp_editor_options", options)
  end
end

-- ---- :AcpLog (synchronous: the host keeps the log; ui/log.lua says when there is none) ----------------------

---@param method string
---@param ... any
---@return boolean ok, any result_or_error
local function request(method, ...)
  local channel = running_channel()
  if channel == nil then
    return false, "the host is not running"
  end
  return pcall(vim.rpcrequest, channel, method, ...)
end

--- The view of an agent's log ("" for the last agent's): {name, ...}, or false and why.
---@param agent_name string
---@return boolean ok, any view_or_error
function M.log_view(agent_name)
  return request("acp_log_view", agent_name)
end

--- Writes an agent's log as NDJSON: {count, name, path} or {error}, or false and why.
---@param agent_name string
---@param path string
---@return boolean ok, any result_or_error
function M.log_save(agent_name, path)
  return request("acp_log_save", agent_name, path)
end

--- The names of the agents with a log, or false and why.
---@return boolean ok, any names_or_error
function M.log_names()
  return request("acp_log_names")
end

return M

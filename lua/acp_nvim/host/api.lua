-- Every method of the Python host that Lua calls, declared once: the Lua half of the Python<->Lua boundary.
-- One function per row of the host's table (acp_nvim/nvim/host_methods.py, which says what each argument
-- decodes into); no other module names a host method (tests/unit/test_boundary.py checks both). The other
-- direction, Python calling Lua, is declared in acp_nvim/nvim/lua_api.py.
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

-- A synchronous call the host found malformed answers {bad_call = why}: a failed call, like an error.
---@param ok boolean
---@param result any
---@return boolean ok, any result_or_error
local function answered(ok, result)
  if ok and type(result) == "table" and result.bad_call ~= nil then
    return false, result.bad_call
  end
  return ok, result
end

-- ---- start-up (lua/acp_nvim/host/init.lua) -------------------------------------------------------------

--- Sent as soon as the host is spawned: it answers with `host.bootstrapped` once it has loaded.
---@param channel integer
---@param options acp.BootstrapOptions
function M.bootstrap(channel, options)
  vim.rpcnotify(channel, "acp_bootstrap", options)
end

--- The same, waiting for the answer (versions included): through the remote-plugin function, which
--- remote#host starts the host for. For :checkhealth only.
---@param options acp.BootstrapOptions
---@return boolean ok, any info_or_error
function M.bootstrap_sync(options)
  return answered(pcall(vim.fn.AcpNvimBootstrap, options))
end

-- ---- agents and prompts --------------------------------------------------------------------------

---@param request acp.StartRequest name = agent name or vim.NIL (the default one), cwd = Neovim's cwd
---@return boolean sent
function M.start(request)
  return command("acp_start", request)
end

---@param session_id string|userdata session id or vim.NIL (the current one)
---@return boolean sent
function M.stop(session_id)
  return command("acp_stop", session_id)
end

---@param request acp.StartRequest as for `start`
---@return boolean sent
function M.restart(request)
  return command("acp_restart", request)
end

---@param text string
---@param selections table[]
---@param session_id string|userdata
---@return boolean sent
function M.prompt(text, selections, session_id)
  return command("acp_prompt", text, selections, session_id)
end

---@param session_id string|userdata
---@param what string|userdata "subagent": one of the session's subagents alone
---@return boolean sent
function M.cancel(session_id, what)
  return command("acp_cancel", session_id, what)
end

--- A prompt sent into the running turn (queued first, where the agent cannot take it).
---@param text string
---@param selections table[]
---@param session_id string|userdata
---@return boolean sent
function M.steer(text, selections, session_id)
  return command("acp_steer", text, selections, session_id)
end

--- :AcpQueue: `action` on the queued prompt `prompt_id` (vim.NIL: the next to go); `edit` with its new text
--- and the files and media that text mentions.
---@param session_id string|userdata
---@param action string
---@param prompt_id integer|userdata
---@param text string|userdata
---@param mentions table[]|userdata
---@return boolean sent
function M.queue(session_id, action, prompt_id, text, mentions)
  return command("acp_queue", session_id, action, prompt_id, text, mentions)
end

-- ---- sessions, modes, options, login (lua/acp_nvim/ui/session_commands.lua) -------------------------------

---@param request acp.StartRequest as for `start`: the agent listed when no chat says which
---@param action "open"|"delete"|"rename"|"archive"
---@param everywhere boolean
---@param session_id string|userdata
---@return boolean sent
function M.sessions(request, action, everywhere, session_id)
  return command("acp_sessions", request, action, everywhere, session_id)
end

--- :AcpFork: the session forked into a new chat (the host says so where the agent cannot fork).
---@param session_id string|userdata
---@return boolean sent
function M.fork(session_id)
  return command("acp_fork", session_id)
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

---@param session_id string|userdata
---@param args string[] `:AcpPermissions` arguments ({} or {"revoke", N})
---@return boolean sent
function M.permissions(session_id, args)
  return command("acp_permissions", session_id, args)
end

--- :AcpCheckpoint [restore {n} | diff {n}], and the chat's key on a prompt ({"offer", item id}).
---@param session_id string|userdata
---@param args string[]
---@return boolean sent
function M.checkpoint(session_id, args)
  return command("acp_checkpoint", session_id, args)
end

--- The review's notes (lua/acp_nvim/editor/review/notes.lua): a comment or rejection added, a note edited or
--- removed, the notes listed or sent into the prompt. Notes belong to sessions, which only a running host has:
--- without one nothing is sent (false).
---@param request acp.ReviewRequest
---@return boolean sent
function M.review(request)
  local channel = running_channel()
  if channel == nil then
    return false
  end
  return (pcall(vim.rpcnotify, channel, "acp_review", request))
end

--- Neovim is quitting: the host answers with `agent_groups.leaving_noted()` once it knows the agents' end is
--- routine. Returns whether a running host was told.
---@return boolean
function M.leaving()
  local channel = running_channel()
  if channel == nil then
    return false
  end
  return (pcall(vim.rpcnotify, channel, "acp_leaving"))
end

-- ---- the ACP Registry (lua/acp_nvim/ui/agents.lua; the host has its options) ----------------------------

--- The registry's ids, sent back through `ui.agents.catalog` (from the cache at once, fetched when stale).
---@return boolean sent
function M.registry_load()
  return command("acp_registry_load")
end

--- :AcpAgents: list, update or remove installed registry agents.
---@param action string "" | "update" | "remove"
---@param id string "" for a picker
---@return boolean sent
function M.registry_agents(action, id)
  return command("acp_registry_agents", action, id)
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

--- A setup() table (config.for_host()) for a host already running; one started later gets it with its
--- bootstrap.
---@param setup acp.SetupTable
function M.setup(setup)
  local channel = running_channel()
  if channel ~= nil then
    pcall(vim.rpcnotify, channel, "acp_setup", setup)
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
  return answered(pcall(vim.rpcrequest, channel, method, ...))
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

--- For :checkhealth: {errors, default_agent, agents = {{name, cmd, args, env, install_hint, fallbacks,
--- older_args, routes}}}, or false and why. Neovim's PATH goes with it: the host reads the installed versions there.
---@return boolean ok, any report_or_error
function M.config_report()
  return request("acp_config_report", vim.env.PATH)
end

--- For :checkhealth: the ACP Registry's state as its cache says (no network): {enabled, url, cache, cache_age,
--- agents, platform, default_version, default_installed, default_kind} or {error}, or false and why.
---@return boolean ok, any health_or_error
function M.registry_health()
  return request("acp_registry_health")
end

--- The names of the agents with a log, or false and why.
---@return boolean ok, any names_or_error
function M.log_names()
  return request("acp_log_names")
end

--- One elicitation field's answer (the typed text, or the values chosen) checked by the host
--- (ui/elicitation.lua): {value} to send or {error} to show, or false and why.
---@param check table the field's `check`, as the host sent it
---@param answer string|string[]
---@return boolean ok, any result_or_error
function M.elicitation_check(check, answer)
  return request("acp_elicitation_check", check, answer)
end

return M

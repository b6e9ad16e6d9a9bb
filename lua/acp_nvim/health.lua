-- :checkhealth acp_nvim

local M = {}

local health = vim.health

---@param argv string[]
---@return vim.SystemCompleted|nil, string|nil
local function run(argv, env)
  local ok, result = pcall(function()
    return vim.system(argv, { text = true, env = env }):wait(40000)
  end)
  if not ok then
    return nil, tostring(result)
  end
  return result, nil
end

---@class AcpAgentReport
---@field name string
---@field cmd string
---@field args string[]
---@field env table<string, string>
---@field install_hint string
---@field fallbacks string[]
---@field older_args table|userdata {before, args, package} or vim.NIL

--- The executable a start would run: the agent's command, else the first of a preset's fallbacks installed.
---@param agent AcpAgentReport
---@return string|nil
local function installed(agent)
  for _, cmd in ipairs({ agent.cmd, unpack(agent.fallbacks or {}) }) do
    if vim.fn.executable(cmd) == 1 then
      return cmd
    end
  end
  return nil
end

--- The ACP Registry's section: its URL, the cache's age, the number of agents; for a default agent that is
--- a registry agent, whether its version is installed. True when the default agent is a registry agent.
---@param default string|nil
---@return boolean
function M.registry(default)
  health.start("ACP Registry")
  local ok, facts = require("acp_nvim.host.api").registry_health()
  if not ok or type(facts) ~= "table" or facts.error then
    health.warn("cannot read the registry's state: " .. tostring(ok and facts.error or facts))
    return false
  end
  if facts.enabled == false then
    health.info("disabled (opts.registry.enabled = false)")
    return false
  end
  health.info("URL: " .. facts.url)
  if facts.cache_age == vim.NIL then
    health.warn(
      "not fetched yet (" .. facts.cache .. ")",
      "it is fetched when :AcpStart lists or starts a registry agent"
    )
    return false
  end
  health.ok(("%d agents, fetched %s ago (%s)"):format(facts.agents, M.age(facts.cache_age), facts.cache))
  health.info("this platform: " .. facts.platform)
  if facts.default_version == vim.NIL then
    return false
  end
  local what = ("default agent %s %s (%s)"):format(default, facts.default_version, facts.default_kind)
  if facts.default_installed == true then
    health.ok(what .. ": installed")
  elseif facts.default_installed == false then
    health.warn(what .. ": not installed", "it is downloaded when :AcpStart starts it")
  else
    health.info(what .. ": its package runner fetches it")
  end
  return true
end

--- Seconds as the largest unit that fits ("3 h").
---@param seconds number
---@return string
function M.age(seconds)
  if seconds >= 86400 then
    return ("%d d"):format(math.floor(seconds / 86400))
  elseif seconds >= 3600 then
    return ("%d h"):format(math.floor(seconds / 3600))
  elseif seconds >= 60 then
    return ("%d min"):format(math.floor(seconds / 60))
  end
  return ("%d s"):format(math.floor(seconds))
end

--- How the user is told of what happens out of view (opts.attention, as the host validated it): the
--- command it runs must be on Neovim's PATH.
---@param attention table|nil {notify, command}
function M.attention(attention)
  if type(attention) ~= "table" or attention.notify == nil or attention.notify == "off" then
    return
  end
  if attention.notify ~= "command" then
    health.info("attention: " .. attention.notify)
    return
  end
  local program = (attention.command or {})[1]
  if program and vim.fn.executable(program) == 1 then
    health.ok(("attention: runs %s"):format(vim.fn.exepath(program)))
  else
    health.warn(("attention.command: %s not found"):format(tostring(program)), "install it or fix the path")
  end
end

--- The checkpoints' store and git, as the host found them.
---@param facts table|nil {git, git_version, root, bytes}
function M.checkpoints(facts)
  health.start("Checkpoints")
  if type(facts) ~= "table" then
    health.info("the host did not say")
    return
  end
  if facts.git == vim.NIL or facts.git == nil then
    health.warn("git not found: no checkpoints are taken (everything else works)", "install git")
  else
    health.ok(("git: %s (%s)"):format(facts.git, facts.git_version ~= vim.NIL and facts.git_version or "?"))
  end
  health.info(("store: %s, %.1f MiB"):format(facts.root, (tonumber(facts.bytes) or 0) / 1048576))
end

--- The MCP servers every session is offered (the host's report: `McpReport` of app/config/settings.py).
---@param facts table|nil {enabled, tools, address, servers}
function M.mcp(facts)
  health.start("MCP servers offered to agents")
  if type(facts) ~= "table" then
    health.info("the host did not say")
    return
  end
  if not facts.enabled then
    health.info("the Neovim MCP server is off (opts.mcp.enabled = false)")
  elseif #facts.tools == 0 then
    health.info("the Neovim MCP server serves no tool (opts.mcp.tools is empty): not offered")
  elseif facts.address == "" then
    health.warn("Neovim has no server address (v:servername): the Neovim MCP server cannot be offered")
  else
    health.ok(("neovim: %s; connects back to %s"):format(table.concat(facts.tools, ", "), facts.address))
  end
  for _, server in ipairs(facts.servers) do
    health.info("yours: " .. server)
  end
end

--- One agent's lines: where its command is, what it routes through Neovim and what it needs. `configured`:
--- the user's own or default agent, whose missing pieces are warnings; for another preset they are news.
---@param agent table
---@param configured boolean
function M.agent(agent, configured)
  local name = agent.name
  local cmd = installed(agent)
  if cmd then
    health.ok(("%s: %s"):format(name, vim.fn.exepath(cmd)))
  elseif configured then
    health.warn(("%s: %s not found"):format(name, agent.cmd), agent.install_hint)
  else
    health.info(("%s: %s not found; to use it: %s"):format(name, agent.cmd, agent.install_hint))
  end
  -- What the host knows of the command that runs (acp_nvim/app/config/agent_routes.py); whether a program it
  -- needs is installed is Neovim's fact (its PATH).
  local routes = type(agent.routes) == "table" and agent.routes[cmd or agent.cmd] or nil
  if routes then
    health.info(("%s: %s"):format(name, routes.does))
    -- What an agent not installed lacks is no news; nor is it a problem for one the user did not choose.
    for _, need in ipairs((cmd or configured) and routes.needs or {}) do
      if vim.fn.executable(need.exe) ~= 1 then
        (configured and health.warn or health.info)(("%s: %s"):format(name, need.message))
      end
    end
  end
end

function M.check()
  local config = require("acp_nvim.config")
  local host = require("acp_nvim.host")

  health.start("Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.11") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. ": acp.nvim needs 0.11 or newer")
  end

  health.start("Python host")
  local python = config.python()
  health.info(
    "interpreter: " .. python .. (config.options.python and " (opts.python)" or " (private environment)")
  )
  local registered = false
  for _, plugin in ipairs(vim.fn["remote#host#PluginsForHost"](host.NAME)) do
    registered = registered or plugin.path == host.plugin_path
  end
  if registered then
    health.ok("remote plugin registered: " .. host.plugin_path)
  else
    health.error(
      "remote plugin not registered",
      "call require('acp_nvim').setup() (or load plugin/acp_nvim.lua)"
    )
  end
  local info, err = host.ensure()
  if info == nil then
    health.error(
      err or "the host did not start",
      "run :lua require('acp_nvim.build').run() or set opts.python"
    )
  else
    health.ok(("host running: Python %s, pid %d"):format(info.python_version, info.pid))
    for _, name in ipairs({ "pynvim", "msgspec", "anyio" }) do
      local found = info.versions[name]
      if found and found ~= vim.NIL then
        health.ok(name .. " " .. found)
      else
        health.error(name .. " missing")
      end
    end
    local log_path = info.log ~= vim.NIL and info.log or config.log_file()
    health.info(("log: %s (level %s)"):format(log_path, info.log_level or config.log_level()))
  end

  -- The options and agents are the host's (acp_nvim/app/config/options.py): without it there is nothing more to say.
  local ok, report = false, nil
  if info ~= nil then
    ok, report = require("acp_nvim.host.api").config_report()
  end
  local have_report = ok and type(report) == "table"

  health.start("Options")
  local errors = vim.list_extend(vim.deepcopy(config.errors), have_report and report.errors or {})
  for _, message in ipairs(errors) do
    health.error("invalid option (its default is used): " .. message)
  end
  if not have_report then
    health.info("the options besides python, prestart_host and log are checked by the host")
    return
  elseif #errors == 0 then
    health.ok("setup() options valid")
  end
  M.attention(config.options.attention)
  M.checkpoints(report.checkpoints)
  M.mcp(report.mcp)

  -- Warnings only for the agents the user configured (opts.agents, the default agent): the other presets
  -- are offered, not expected (the host says which are which).
  local by_name, others = {}, {}
  health.start("Agents")
  for _, agent in ipairs(report.agents) do
    by_name[agent.name] = agent
    if agent.configured == false then
      others[#others + 1] = agent
    else
      M.agent(agent, true)
    end
  end
  if #others == #report.agents then
    health.info("none configured: opts.agents adds one, opts.default_agent names the one :AcpStart starts")
  end
  if #others > 0 then
    health.start("Other agents (presets, available to :AcpStart)")
    for _, agent in ipairs(others) do
      M.agent(agent, false)
    end
  end

  local default = report.default_agent ~= vim.NIL and report.default_agent or nil
  local registry_default = M.registry(default)
  if default == nil then
    health.start("Default agent")
    health.info("none: :AcpStart asks which agent to start (opts.default_agent names one)")
    return
  end
  health.start("Default agent: " .. default)
  local agent = by_name[default]
  if agent == nil and registry_default then
    return
  end
  if agent == nil then
    health.error(("unknown agent %q"):format(default))
    return
  end
  local cmd = installed(agent)
  if cmd == nil then
    health.warn(agent.cmd .. " not found: no initialize check", agent.install_hint)
    return
  end
  -- The host's choice of executable and arguments, made the same way (acp_nvim/client/agent/command.py).
  local argv = { python, "-m", "acp_nvim", "probe", "--timeout", "20" }
  for _, fallback in ipairs(agent.fallbacks or {}) do
    vim.list_extend(argv, { "--fallback", fallback })
  end
  if agent.older_args ~= vim.NIL and agent.older_args ~= nil then
    vim.list_extend(argv, { "--older-args", vim.json.encode(agent.older_args) })
  end
  vim.list_extend(argv, { "--", agent.cmd })
  vim.list_extend(argv, agent.args or {})
  local env = vim.tbl_extend("force", agent.env or {}, { PYTHONPATH = host.pythonpath() })
  local result, run_err = run(argv, env)
  if result == nil then
    health.error("probe failed: " .. run_err)
  elseif result.code ~= 0 then
    health.error("initialize failed: " .. vim.trim(result.stderr or ""))
  else
    local probed, probe_report = pcall(vim.json.decode, result.stdout)
    if not probed or type(probe_report) ~= "table" or type(probe_report.initialized) ~= "string" then
      health.error("probe printed no report")
      return
    end
    -- The probe words the handshake's line (acp_nvim/probe.py): health shows it as it is.
    health.ok(probe_report.initialized)
  end
end

return M

-- The Python remote-plugin host: registered by this plugin itself (no :UpdateRemotePlugins, no manifest, the
-- user's python3 provider untouched), started on first use with the plugin's own interpreter.
--
-- Starting it never blocks Neovim: the factory spawns the interpreter and returns its channel at once. What is
-- sent meanwhile waits in the channel's pipe and is handled in order once the host has loaded (pynvim queues
-- what arrives before its loop runs). The host announces itself with `bootstrapped`; if it exits first, what it
-- printed on stderr says why.

local M = {}

local events = require("acp_nvim.util.events")

M.NAME = "acp_nvim"
M.root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h:h")
M.plugin_path = vim.fs.joinpath(M.root, "rplugin", "python3", "acp_nvim_host.py")
--- A host that neither announces itself nor exits within this time is given up (and stopped).
M.start_timeout_ms = 30000

-- Bounds what is kept of a starting host's stderr (a traceback is a few KiB).
local STDERR_KEEP = 16384

local registered = false
---@type table|nil channel and pid as soon as the host is spawned; python, log, ... once it announced itself
local info = nil
local ready = false
---@type string|nil why the last start failed, one line for the user
local last_error = nil

-- The host runs the package from this checkout even when the interpreter has an older copy installed.
---@return string
function M.pythonpath()
  local sep = vim.fn.has("win32") == 1 and ";" or ":"
  local existing = vim.env.PYTHONPATH
  return existing and existing ~= "" and (M.root .. sep .. existing) or M.root
end

---@param python string
---@return string
local function install_command(python)
  if require("acp_nvim.config").options.python then
    return ("%s -m pip install 'pynvim>=0.5' 'msgspec>=0.18' 'anyio>=4'"):format(python)
  end
  return ":lua require('acp_nvim.build').run()"
end

---@param python string
---@return string
local function not_found(python)
  return ("acp.nvim: Python not found: %s. Run %s, or set opts.python to an interpreter with pynvim, msgspec and anyio."):format(
    python,
    ":lua require('acp_nvim.build').run()"
  )
end

-- Why the host exited before announcing itself: one line saying what to run, from what it printed.
---@param python string
---@param stderr string
---@param code integer
---@return string
local function explain(python, stderr, code)
  local missing = stderr:match("No module named '([^']+)'")
  if missing then
    return ("acp.nvim: the Python host cannot start: %s has no module %q. Run: %s"):format(
      python,
      missing,
      install_command(python)
    )
  end
  local lines = vim.split(vim.trim(stderr), "\n")
  if lines[#lines] ~= "" then
    return ("acp.nvim: the Python host cannot start (%s): %s"):format(python, lines[#lines])
  end
  return ("acp.nvim: the Python host (%s) exited with code %d before it started; see %s"):format(
    python,
    code,
    require("acp_nvim.config").log_file()
  )
end

--- Tells the user the host could not start: a notification, and the status says so.
---@param message string
local function fail(message)
  last_error = message
  require("acp_nvim.util.notify").show(message, vim.log.levels.ERROR)
  events.emit("host_failed", message)
end

local factory

-- The host is gone (or given up): the next use starts a fresh one.
local function forget()
  info, ready = nil, false
  -- Re-registering resets remote#host's cached channel.
  vim.fn["remote#host#Register"](M.NAME, "*", factory)
  -- A synchronous call (M.ensure) redefined the bootstrap function to rpcrequest the old channel directly: put
  -- back the lazy definition, which starts a host on its next call.
  pcall(vim.cmd, "delfunction! AcpNvimBootstrap")
  vim.fn["remote#define#FunctionOnHost"](
    M.NAME,
    M.plugin_path .. ":function:AcpNvimBootstrap",
    1,
    "AcpNvimBootstrap",
    vim.empty_dict()
  )
end

---@return table
local function bootstrap_options()
  local config = require("acp_nvim.config")
  -- The setup() table rides along: the host validates it before it handles any command. `data`: where the
  -- host keeps what it remembers for the user (the project permission rules, the ACP Registry's installed
  -- agents); `cache`: what it can fetch again (the ACP Registry's list).
  return {
    log = config.log_file(),
    log_level = config.log_level(),
    setup = config.for_host(),
    data = vim.fn.stdpath("data"),
    cache = vim.fn.stdpath("cache"),
    -- The checkpoints' snapshots.
    state = vim.fn.stdpath("state"),
    -- Where the Neovim MCP server each session offers connects back (`python -m acp_nvim mcp`).
    servername = vim.v.servername,
  }
end

-- Called by remote#host#Require: spawn the interpreter as an rpc job running pynvim's host; never waits for it.
---@param host_info table
---@return integer channel
factory = function(host_info)
  local config = require("acp_nvim.config")
  local python = config.python()
  if vim.fn.executable(python) == 0 then
    error(not_found(python), 0)
  end
  local paths = {}
  for _, plugin in ipairs(vim.fn["remote#host#PluginsForHost"](host_info.orig_name)) do
    table.insert(paths, plugin.path)
  end
  -- sys.path[0] is the cwd for `-c`: drop it so a project's files cannot shadow our modules. The package is
  -- imported before pynvim's host, which would only log a failed plugin import: here it ends the process and
  -- its traceback (stderr) says what is missing.
  local code = "import sys; sys.path[:] = [p for p in sys.path if p]; import pynvim, acp_nvim.nvim.host; "
    .. "pynvim.start_host()"
  local argv = { python, "-c", code }
  vim.list_extend(argv, paths)
  local stderr = ""
  local channel ---@type integer
  local ok, result = pcall(vim.fn.jobstart, argv, {
    rpc = true,
    env = {
      PYTHONPATH = M.pythonpath(),
      ACP_NVIM_LOG = config.log_file(),
      ACP_NVIM_LOG_LEVEL = config.log_level(),
    },
    on_stderr = function(_, data)
      if not ready then
        stderr = (stderr .. table.concat(data, "\n")):sub(-STDERR_KEEP)
      end
    end,
    on_exit = function(_, exit_code)
      -- Whatever the host left running (it may have been SIGKILLed mid-stop) is ended from here.
      events.emit("host_job_exited")
      if info == nil or info.channel ~= channel then
        return -- a host already given up
      end
      local was_ready = ready
      forget()
      -- Neovim quitting ends the host (its channel closed, then SIGTERM): routine, not an error to print on
      -- the way out (a headless `:qa!` would show it). A crash while Neovim runs is still reported.
      if vim.v.exiting ~= vim.NIL then
        return
      end
      if was_ready then
        events.emit("host_exited", ("acp.nvim: the Python host exited (code %d)"):format(exit_code))
      else
        fail(explain(python, stderr, exit_code))
      end
    end,
  })
  if not ok or result <= 0 then
    error(
      ("acp.nvim: cannot run %s: %s"):format(python, ok and ("jobstart returned " .. result) or result),
      0
    )
  end
  channel = result
  info = { channel = channel, pid = vim.fn.jobpid(channel) }
  ready = false
  require("acp_nvim.host.api").bootstrap(channel, bootstrap_options())
  vim.defer_fn(function()
    if info ~= nil and info.channel == channel and not ready then
      forget()
      pcall(vim.fn.jobstop, channel)
      fail(
        ("acp.nvim: the Python host (%s) did not start within %d s; see %s"):format(
          python,
          M.start_timeout_ms / 1000,
          config.log_file()
        )
      )
    end
  end, M.start_timeout_ms)
  return channel
end

--- Registers the host and its one bootstrap function; cheap (nothing starts) and idempotent.
function M.register()
  if registered then
    return
  end
  registered = true
  vim.fn["remote#host#Register"](M.NAME, "*", factory)
  for _, plugin in ipairs(vim.fn["remote#host#PluginsForHost"](M.NAME)) do
    if plugin.path == M.plugin_path then
      return
    end
  end
  vim.fn["remote#host#RegisterPlugin"](M.NAME, M.plugin_path, {
    { type = "function", name = "AcpNvimBootstrap", sync = 1, opts = vim.empty_dict() },
  })
end

--- Starts the host if needed, without waiting for it. Returns its info (at least `channel` and `pid`; the
--- rest once it announced itself), or nil and a one-line error for the user when it cannot even be spawned.
---@return table|nil, string|nil
function M.start()
  if info ~= nil then
    return info, nil
  end
  M.register()
  local ok, result = pcall(vim.fn["remote#host#Require"], M.NAME)
  if not ok or info == nil then
    -- Errors from the factory arrive wrapped in Vimscript context; keep only our own line.
    local message = tostring(result)
    last_error = message:match("(acp%.nvim: [^\n]*)")
      or ("acp.nvim: the Python host did not start: " .. message)
    return nil, last_error
  end
  return info, nil
end

--- Starts the host in the background ahead of any command (`opts.prestart_host`): `true` as soon as Neovim
--- has started; "auto" once a UI is attached, so that a headless Neovim (a script, a plugin manager's sync)
--- never spawns a host it will not use; `false` cancels a pending "auto". A failure is reported as for any
--- start; nothing waits for it.
---@param when boolean|"auto"
function M.prestart(when)
  local group = vim.api.nvim_create_augroup("acp_nvim_prestart", { clear = true })
  local function start()
    vim.schedule(function()
      M.start()
    end)
  end
  if when == false then
    return
  elseif when == "auto" and #vim.api.nvim_list_uis() == 0 then
    vim.api.nvim_create_autocmd("UIEnter", { group = group, once = true, callback = start })
  elseif vim.v.vim_did_enter == 1 then
    start()
  else
    vim.api.nvim_create_autocmd("VimEnter", { group = group, once = true, callback = start })
  end
end

--- Called by the host once it has loaded (its answer to `acp_bootstrap`).
---@param answer table
function M.bootstrapped(answer)
  if info == nil or answer.channel ~= info.channel then
    return
  end
  local configured = answer.configured
  answer.configured = nil
  info = vim.tbl_extend("force", info, answer)
  ready = true
  last_error = nil
  if type(configured) == "table" then
    require("acp_nvim.config").configured(configured.options, configured.invalid, configured.generation)
  end
end

--- Starts the host if needed and waits (blocking Neovim) until it answers: its full info (versions included),
--- or nil and a one-line error. For :checkhealth, never on the way of a command (they use `start`).
---@return table|nil, string|nil
function M.ensure()
  local host, err = M.start()
  if host == nil then
    return nil, err
  end
  if ready and host.versions ~= nil then
    return host, nil
  end
  local channel = host.channel
  local ok, result = require("acp_nvim.host.api").bootstrap_sync(bootstrap_options())
  if not ok or type(result) ~= "table" then
    -- The host died on the way: its on_exit says why.
    vim.wait(2000, function()
      return info == nil or info.channel ~= channel
    end)
    return nil, last_error or ("acp.nvim: the Python host did not start: " .. tostring(result))
  end
  M.bootstrapped(result)
  return info, nil
end

--- The channel a command is sent on (host_api), starting the host first; nil after reporting a failure to
--- start.
---@return integer|nil
function M.channel_for_command()
  local host, err = M.start()
  if host == nil then
    fail(err --[[@as string]])
    return nil
  end
  return host.channel
end

---@return table|nil info of the host (nil when not started); `channel` and `pid` while it starts
function M.info()
  return info
end

---@return boolean true once the host has announced itself
function M.is_ready()
  return ready
end

---@return string|nil
function M.last_error()
  return last_error
end

return M

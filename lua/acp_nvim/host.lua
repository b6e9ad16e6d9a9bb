-- The Python remote-plugin host: registered by this plugin itself (no :UpdateRemotePlugins, no manifest, the
-- user's python3 provider untouched), started on first use with the plugin's own interpreter.

local M = {}

M.NAME = "acp_nvim"
M.root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
M.plugin_path = vim.fs.joinpath(M.root, "rplugin", "python3", "acp_nvim_host.py")

local registered = false
---@type table|nil what AcpNvimBootstrap returned: channel, versions, python, log
local info = nil
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

-- Why `python` cannot run the host: one line saying what to run.
---@param python string
---@return string
local function diagnose(python)
  if vim.fn.executable(python) == 0 then
    return ("acp.nvim: Python not found: %s. Run %s, or set opts.python to an interpreter with pynvim, msgspec and anyio."):format(
      python,
      ":lua require('acp_nvim.build').run()"
    )
  end
  local ok, result = pcall(function()
    return vim
      .system(
        { python, "-c", "import pynvim, msgspec, anyio, acp_nvim.nvim.host" },
        { env = { PYTHONPATH = M.pythonpath() }, text = true }
      )
      :wait(30000)
  end)
  if not ok then
    return ("acp.nvim: cannot run %s: %s"):format(python, tostring(result))
  end
  if result.code ~= 0 then
    local missing = (result.stderr or ""):match("No module named '([^']+)'")
    if missing then
      return ("acp.nvim: the Python host cannot start: %s has no module %q. Run: %s"):format(
        python,
        missing,
        install_command(python)
      )
    end
    local lines = vim.split(vim.trim(result.stderr or ""), "\n")
    return ("acp.nvim: the Python host cannot start (%s): %s"):format(
      python,
      lines[#lines] or "unknown error"
    )
  end
  return ("acp.nvim: the Python host (%s) did not start; see %s"):format(
    python,
    require("acp_nvim.config").log_file()
  )
end

-- Called by remote#host#Require: start the interpreter as an rpc job running pynvim's host.
---@param host_info table
---@return integer channel
local function factory(host_info)
  local python = require("acp_nvim.config").python()
  local paths = {}
  for _, plugin in ipairs(vim.fn["remote#host#PluginsForHost"](host_info.orig_name)) do
    table.insert(paths, plugin.path)
  end
  -- sys.path[0] is the cwd for `-c`: drop it so a project's files cannot shadow our modules.
  local code = "import sys; sys.path[:] = [p for p in sys.path if p]; import pynvim; pynvim.start_host()"
  local argv = { python, "-c", code }
  vim.list_extend(argv, paths)
  local ok, channel = pcall(vim.fn.jobstart, argv, {
    rpc = true,
    env = {
      PYTHONPATH = M.pythonpath(),
      ACP_NVIM_LOG = require("acp_nvim.config").log_file(),
      ACP_NVIM_LOG_LEVEL = require("acp_nvim.config").log_level(),
    },
    on_exit = function(_, code_)
      -- Whatever the host left running (it may have been SIGKILLed mid-stop) is ended from here.
      require("acp_nvim.reaper").host_exited()
      if info ~= nil then
        info = nil
        -- Re-registering resets remote#host's cached channel so the next use starts a fresh host.
        vim.fn["remote#host#Register"](M.NAME, "*", factory)
        -- The first call redefined the bootstrap function to rpcrequest the old channel directly: put back
        -- the lazy definition, which starts a host on its next call.
        pcall(vim.cmd, "delfunction! AcpNvimBootstrap")
        vim.fn["remote#define#FunctionOnHost"](
          M.NAME,
          M.plugin_path .. ":function:AcpNvimBootstrap",
          1,
          "AcpNvimBootstrap",
          vim.empty_dict()
        )
        require("acp_nvim.status").host_exited(("acp.nvim: the Python host exited (code %d)"):format(code_))
      end
    end,
  })
  if not ok or channel <= 0 then
    error(diagnose(python), 0)
  end
  local polled, answer = pcall(vim.rpcrequest, channel, "poll")
  if not polled or answer ~= "ok" then
    pcall(vim.fn.jobstop, channel)
    error(diagnose(python), 0)
  end
  return channel
end

--- Registers the host and its one bootstrap function; cheap (nothing starts) and idempotent.
function M.register()
  if registered then
    return
  end
  registered = true
  require("acp_nvim.reaper").setup()
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

--- Starts the host if needed. Returns its info, or nil and a one-line error for the user.
---@return table|nil, string|nil
function M.ensure()
  if info ~= nil then
    return info, nil
  end
  M.register()
  local config = require("acp_nvim.config")
  local ok, result =
    pcall(vim.fn.AcpNvimBootstrap, { log = config.log_file(), log_level = config.log_level() })
  if not ok or type(result) ~= "table" then
    local message = tostring(result)
    -- Errors from the factory arrive wrapped in Vimscript context; keep only our own line.
    last_error = message:match("(acp%.nvim: [^\n]*)") or diagnose(require("acp_nvim.config").python())
    return nil, last_error
  end
  info = result
  last_error = nil
  return info, nil
end

--- Sends a notification to the host, starting it first. Reports a failure to start and returns false.
---@param method string
---@param ... any
---@return boolean
function M.notify(method, ...)
  local host, err = M.ensure()
  if host == nil then
    vim.notify(err --[[@as string]], vim.log.levels.ERROR, { title = "acp.nvim" })
    require("acp_nvim.status").set_error(err --[[@as string]])
    return false
  end
  vim.rpcnotify(host.channel, method, ...)
  return true
end

---@return table|nil info of the running host (nil when not started)
function M.info()
  return info
end

---@return string|nil
function M.last_error()
  return last_error
end

return M

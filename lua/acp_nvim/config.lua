-- The user's options. Python owns them (acp_nvim/app/config/options.py: names, types, allowed values, defaults, the
-- agent presets): setup() keeps the raw table here, the host validates it when it starts (or at once when it
-- runs), names every bad field once, and hands back the normalized values Lua draws with (`configured`).
--
-- Only what must be read before any host exists is Lua's, declared and checked here alone (`BOOTSTRAP`): the
-- interpreter that runs the host, when to start it, and where it logs (its environment at spawn). The host
-- never sees these keys.

local M = {}

local notify = require("acp_nvim.util.notify")

--- The options read before a host exists, with their defaults.
M.bootstrap_defaults = {
  -- Interpreter that has pynvim, msgspec and anyio. nil: the plugin's private environment made by the build
  -- step (stdpath("data")/acp_nvim/venv). g:python3_host_prog is never used or changed.
  python = nil,
  -- Start the Python host in the background ahead of the first command, so that :AcpStart does not wait the
  -- ~0.2-0.3 s Python takes to start; the price is a host process (~30 MiB) in each such Neovim. "auto": once a
  -- UI is attached (never in a headless Neovim); true: as soon as Neovim has started; false: only when needed
  -- (typing an :Acp command still starts it early).
  prestart_host = "auto",
  log = {
    -- Log file of the Python side; nil: $ACP_NVIM_LOG, else stdpath("log")/acp_nvim.log.
    file = nil,
    -- Least severe level written: "debug" (every stderr line of the agent too), "info", "warn", "error".
    level = "info",
  },
}

-- Each bootstrap option's check: ok, what it must be, and whether the message shows the value (an enum) or
-- its type.
local BOOTSTRAP = {
  python = function(v)
    return v == nil or type(v) == "string", "a string", false
  end,
  prestart_host = function(v)
    return v == "auto" or v == true or v == false, 'one of "auto", true, false', true
  end,
  log = {
    file = function(v)
      return v == nil or type(v) == "string", "a string", false
    end,
    level = function(v)
      return vim.tbl_contains({ "debug", "info", "warn", "error" }, v),
        'one of "debug", "info", "warn", "error"',
        true
    end,
  },
}

-- What Lua draws with before the host has answered: the defaults of acp_nvim/app/config/options.py, written by
-- tools/gen_lua_defaults.py (tests/unit/app/config/test_options.py checks it is current).
---@return table
local function read_defaults()
  return require("acp_nvim.host.python_tables").read("config/lua_defaults.json", {})
end

---@type table the bootstrap options, then what the host handed back (chat, keymaps, review, conflict,
---default_agent, agent_names, attention)
M.options = vim.tbl_extend("force", vim.deepcopy(M.bootstrap_defaults), read_defaults())

---@type string[] what the last setup() said of the bootstrap options (for :checkhealth)
M.errors = {}

---@type table the last setup() table without the bootstrap keys, as the host receives it
M.raw = vim.empty_dict()
-- Bumped by every setup(): the host's answer to an older table is not the one in force.
local generation = 0
local configured_generation = -1
local reported_generation = -1

---@param field string
---@param rule function
---@param value any
---@param errors string[]
---@return boolean ok
local function check(field, rule, value, errors)
  local ok, wanted, enum = rule(value)
  if not ok then
    local got = enum and vim.inspect(value) or type(value)
    table.insert(errors, ("`%s` must be %s, got %s"):format(field, wanted, got))
  end
  return ok
end

--- Validates the bootstrap options and keeps the rest, raw, for the host. Invalid bootstrap fields are left at
--- their defaults.
---@param opts table|nil
---@return string[] errors one message per offending bootstrap field (the host names the others)
function M.apply(opts)
  local errors = {}
  if opts ~= nil and type(opts) ~= "table" then
    table.insert(errors, ("setup() takes a table, got %s"):format(type(opts)))
    opts = {}
  end
  opts = opts or {}
  local boot = vim.deepcopy(M.bootstrap_defaults)
  local raw = {}
  for key, value in pairs(opts) do
    local rule = BOOTSTRAP[key]
    if rule == nil then
      raw[key] = value
    elseif type(rule) == "function" then
      if check(key, rule, value, errors) then
        boot[key] = value
      end
    elseif type(value) ~= "table" then
      table.insert(errors, ("`%s` must be a table, got %s"):format(key, type(value)))
    else
      for sub, sub_value in pairs(value) do
        local field = key .. "." .. tostring(sub)
        if rule[sub] == nil then
          table.insert(errors, ("unknown option `%s`"):format(field))
        elseif check(field, rule[sub], sub_value, errors) then
          boot[key][sub] = sub_value
        end
      end
    end
  end
  table.sort(errors)
  for key, value in pairs(boot) do
    M.options[key] = value
  end
  M.raw = next(raw) == nil and vim.empty_dict() or raw
  generation = generation + 1
  M.errors = errors
  return errors
end

--- The host's answer to the table it validated: the normalized values Lua draws with, and the message
--- naming the bad fields (said once per setup() table, however often a host restarts).
---@param options table
---@param invalid string|nil
---@param for_generation integer
function M.configured(options, invalid, for_generation)
  if for_generation ~= generation then
    return
  end
  for key, value in pairs(options) do
    M.options[key] = value
  end
  configured_generation = generation
  if invalid ~= nil and invalid ~= vim.NIL and reported_generation ~= generation then
    reported_generation = generation
    notify.error(invalid)
  end
end

--- What the host validates: the raw table and which setup() it came from.
---@return table
function M.for_host()
  return { options = M.raw, generation = generation }
end

---@return boolean true once the host has validated the table in force
function M.is_configured()
  return configured_generation == generation
end

--- The default agent, once the host has said which it is (nil before: the host picks it; nil when there is
--- none: the host then asks which agent to start).
---@return string|nil
function M.default_agent()
  local default = M.options.default_agent
  if not M.is_configured() or default == vim.NIL then
    return nil
  end
  return default
end

--- The interpreter that runs the host (and the demo agent).
---@return string
function M.python()
  if M.options.python then
    return vim.fn.expand(M.options.python)
  end
  local venv = vim.fs.joinpath(vim.fn.stdpath("data"), "acp_nvim", "venv")
  if vim.fn.has("win32") == 1 then
    return vim.fs.joinpath(venv, "Scripts", "python.exe")
  end
  return vim.fs.joinpath(venv, "bin", "python")
end

--- Every agent name (presets and the user's, minus the disabled ones), as the host knows them: started (and
--- briefly waited for) when it has not validated the table in force yet.
---@return string[]
function M.agent_names()
  if not M.is_configured() and require("acp_nvim.host").start() ~= nil then
    vim.wait(5000, M.is_configured, 10)
  end
  return M.options.agent_names or {}
end

--- Where the Python side logs.
---@return string
function M.log_file()
  return M.options.log.file
    or vim.env.ACP_NVIM_LOG
    or vim.fs.joinpath(vim.fn.stdpath("log") --[[@as string]], "acp_nvim.log")
end

--- The least severe level the Python side logs.
---@return string
function M.log_level()
  return M.options.log.level or "info"
end

return M

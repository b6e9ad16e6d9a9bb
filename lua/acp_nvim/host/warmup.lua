-- Starts the Python host while the user types an :Acp* command on the command line.
--
-- The host takes ~0.25 s to load (Python, pynvim, asyncio, anyio, the plugin). `prestart_host` hides that at
-- Neovim's start-up, but "auto" does so only where a UI is attached, and `false` never. Typing the rest of
-- `:AcpStart` takes a person well over that, so starting the host (in the background; host.start never waits)
-- as soon as the command line reads `Acp...` hides the cold start for typed commands there too.
-- Per keystroke this is one anchored string match; the autocommand is removed once it has started the host or
-- finds it running.

local M = {}

local GROUP = "acp_nvim_warmup"

-- Whether setup() has already decided to watch or not (enable/disable called).
local decided = false

-- `:Acp...`, possibly after spaces, colons and a range (`:'<,'>AcpPrompt`, `:%AcpPrompt`, `: 3Acp`).
local PATTERN = "^[%s:%d,;.$%%'<>+%-]*Acp"

---@param line string the command line as typed
---@return boolean true when it is the start of an :Acp* command
function M.matches(line)
  return line:find(PATTERN) ~= nil
end

--- Stops watching the command line.
function M.disable()
  decided = true
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
end

--- For plugin/acp_nvim.lua: watches unless setup() has decided already (the user's config runs before plugin
--- files), so that typed commands start the host early even for a user who never calls setup().
function M.enable_by_default()
  if not decided then
    M.enable()
  end
end

--- Watches the `:` command line and starts the host once it reads `Acp...`; nothing when the host already
--- runs or starts (prestart_host). Idempotent.
function M.enable()
  decided = true
  local host = require("acp_nvim.host")
  if host.info() ~= nil then
    M.disable()
    return
  end
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  vim.api.nvim_create_autocmd("CmdlineChanged", {
    group = group,
    pattern = ":",
    callback = function()
      if host.info() ~= nil then
        M.disable() -- started some other way meanwhile
        return
      end
      if not M.matches(vim.fn.getcmdline()) then
        return
      end
      M.disable()
      -- As host.prestart: a host that cannot start is reported when a command actually needs it (host_api),
      -- or by the host's own exit handler; nothing is raised while the user is typing.
      pcall(host.start)
    end,
  })
end

---@return boolean true while the command line is watched
function M.enabled()
  local ok, autocmds = pcall(vim.api.nvim_get_autocmds, { group = GROUP })
  return ok and #autocmds > 0
end

return M

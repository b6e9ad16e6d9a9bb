-- The build step: a private virtual environment with the runtime dependencies and this plugin, so the host
-- never depends on (or changes) the user's python3 provider. lazy.nvim runs ./build.lua automatically; other
-- managers: call require("acp_nvim.build").run() after install/update.

local M = {}

-- Pinned runtime dependencies (the versions the plugin is tested with).
M.pins = { "pynvim==0.6.0", "msgspec==0.23.0", "anyio==4.16.0" }

---@return string
function M.venv()
  return vim.fs.joinpath(vim.fn.stdpath("data") --[[@as string]], "acp_nvim", "venv")
end

-- A Python 3.11+ to create the environment with.
---@return string|nil
local function find_python()
  for _, candidate in ipairs({ "python3.13", "python3.12", "python3.11", "python3", "python" }) do
    if vim.fn.executable(candidate) == 1 then
      local result = vim
        .system({ candidate, "-c", "import sys; print(sys.version_info >= (3, 11))" }, { text = true })
        :wait()
      if result.code == 0 and vim.trim(result.stdout or "") == "True" then
        return vim.fn.exepath(candidate)
      end
    end
  end
  return nil
end

---@param argv string[]
---@return boolean, string
local function step(argv)
  local result = vim.system(argv, { text = true }):wait()
  if result.code ~= 0 then
    local lines = vim.split(vim.trim((result.stderr or "") .. "\n" .. (result.stdout or "")), "\n")
    return false, ("`%s` failed: %s"):format(table.concat(argv, " "), lines[#lines] or "")
  end
  return true, ""
end

--- Creates (or updates) the private environment. opts.python: the interpreter to create it with.
---@param opts {python: string|nil}|nil
---@return boolean ok, string message
function M.run(opts)
  opts = opts or {}
  local python = opts.python or find_python()
  local function report(ok, message)
    vim.notify("acp.nvim build: " .. message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
    return ok, message
  end
  if python == nil then
    return report(false, "no Python 3.11 or newer found on PATH (pass { python = '/path/to/python3' })")
  end
  local venv = M.venv()
  local venv_python = vim.fs.joinpath(venv, vim.fn.has("win32") == 1 and "Scripts" or "bin", "python")
  local ok, err = step({ python, "-m", "venv", venv })
  if not ok then
    return report(false, err)
  end
  -- Only the dependencies: the host imports the plugin's own Python from its checkout (PYTHONPATH), so an
  -- update of the plugin never runs against a stale installed copy.
  local install = { venv_python, "-m", "pip", "install", "--quiet", "--upgrade" }
  vim.list_extend(install, M.pins)
  ok, err = step(install)
  if not ok then
    return report(false, err)
  end
  return report(true, "private environment ready: " .. venv)
end

return M

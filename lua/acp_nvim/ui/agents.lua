-- The ACP Registry's agents on the Lua side: the ids the host last sent (for :AcpStart's completion), the
-- options the host reads the registry with, and what :AcpStart without a name and :AcpAgents ask the host
-- for. The host decides everything else (acp_nvim/app/catalog.py, registry_agents.py).

local M = {}

-- Ids of the registry's agents as the host last sent them; nil until it has.
---@type string[]|nil
M.ids = nil

local requested = false

--- setup() was called (again): the list is asked for afresh, its URL may have changed.
function M.reset()
  M.ids, requested = nil, false
end

--- `opts.registry` with the folders only Neovim knows, as the host decodes it (RegistryOptions).
---@return table
function M.options()
  local registry = require("acp_nvim.config").options.registry or {}
  return {
    url = registry.url,
    max_age = registry.max_age,
    enabled = registry.enabled,
    cache_dir = vim.fs.joinpath(vim.fn.stdpath("cache") --[[@as string]], "acp_nvim"),
    data_dir = vim.fs.joinpath(vim.fn.stdpath("data") --[[@as string]], "acp_nvim"),
  }
end

---@return boolean
function M.enabled()
  local registry = require("acp_nvim.config").options.registry
  return registry == nil or registry.enabled ~= false
end

--- The configured agent `name`, else the ACP Registry's agent of that id (its command is decided by the
--- host when it starts), else nil and why. A preset carries the registry's options too (see below).
---@param name string
---@return table|nil, string|nil
function M.agent(name)
  local config = require("acp_nvim.config")
  local agent, err = config.agent(name)
  if not M.enabled() or config.options.agents[name] ~= nil then
    -- The user's own agent of that name wins.
    return agent, err
  end
  if agent == nil then
    return { cmd = "", registry = M.options() }, nil
  end
  -- A preset: the host starts the registry's agent of that id when the preset's command is not installed.
  agent.registry = M.options()
  return agent, nil
end

--- The host's list (lua_api.agents_catalog).
---@param ids string[]
function M.catalog(ids)
  M.ids = ids
end

-- How long the first completion waits for the host's list: the host's start and a read of its cache (a
-- fetch is never waited for: its list comes with a later <Tab>).
local FIRST_LIST_MS = 1000

--- The registry's ids for a completion; asks the host the first time (and waits for its answer, bounded).
---@return string[]
function M.complete_ids()
  if not M.enabled() then
    return {}
  end
  if not requested then
    requested = true
    if require("acp_nvim.host.api").registry_load(M.options()) then
      vim.wait(FIRST_LIST_MS, function()
        return M.ids ~= nil
      end, 10)
    end
  end
  return M.ids or {}
end

--- :AcpStart without a name and no default agent: the host offers the configured agents and the
--- registry's, and starts the one chosen.
function M.pick()
  local config = require("acp_nvim.config")
  require("acp_nvim.host.api").registry_pick(M.options(), config.agent_names(), config.options.default_agent)
end

--- :AcpAgents [update|remove] [id]
---@param action string
---@param id string
function M.command(action, id)
  require("acp_nvim.host.api").registry_agents(M.options(), action or "", id or "")
end

---@param lead string
---@param line string
---@return string[]
function M.complete_command(lead, line)
  local words = vim.split(line, "%s+", { trimempty = true })
  local candidates = { "update", "remove" }
  if #words >= 2 and (words[2] == "update" or words[2] == "remove") and (#words > 2 or lead == "") then
    candidates = M.complete_ids()
  end
  return vim.tbl_filter(function(word)
    return vim.startswith(word, lead)
  end, candidates)
end

return M

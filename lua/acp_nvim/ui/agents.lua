-- The ACP Registry's agents on the Lua side: the ids the host last sent (for :AcpStart's completion) and
-- what :AcpAgents asks the host for. The host has the registry's options (acp_nvim/app/config/options.py) and
-- decides everything else: which agent a name starts, the picker of :AcpStart without a name and without a
-- default agent (acp_nvim/app/config/presets.py, app/registry/catalog.py, app/registry/agents.py).

local M = {}

-- Ids of the registry's agents as the host last sent them; nil until it has.
---@type string[]|nil
M.ids = nil

local requested = false

--- setup() was called (again): the list is asked for afresh, its URL may have changed.
function M.reset()
  M.ids, requested = nil, false
end

--- The host's list (lua_api.agents_catalog); empty when the registry is disabled.
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
  if not requested then
    requested = true
    if require("acp_nvim.host.api").registry_load() then
      vim.wait(FIRST_LIST_MS, function()
        return M.ids ~= nil
      end, 10)
    end
  end
  return M.ids or {}
end

--- :AcpAgents [update|remove] [id]
---@param action string|nil
---@param id string|nil
function M.command(action, id)
  require("acp_nvim.host.api").registry_agents(action or "", id or "")
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

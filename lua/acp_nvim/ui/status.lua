-- The status the Python side pushes (agent, state, session, mode, ...), the statusline string, and the
-- `User AcpNvimStatus` event fired on every change.

local M = {}

---@class AcpStatus
---@field agent {name: string, title: string|nil, version: string|nil}|nil
---@field state "stopped"|"starting"|"ready"|"running"|"awaiting_permission"|"error"
---@field session_id string|nil
---@field agent_name string|nil the configured name (opts.agents key) of the current agent
---@field mode string|nil the current mode's id
---@field mode_name string|nil its name, what the statusline shows
---@field model string|nil current value of the "model" config option
---@field model_name string|nil the name of that value, what the statusline shows
---@field title string|nil
---@field usage {used: integer, size: integer, cost: {amount: number, currency: string}|nil}|nil
---@field sessions integer|nil open sessions (all agents)
---@field auth_methods string[]|nil
---@field protocol_version integer|nil
---@field error string|nil
---@field waiting string|nil a permission waiting in another session, in words

-- What is shown before the host answers, for each fact Lua records: Python's table (acp_nvim/app/status_facts.json,
-- see acp_nvim/app/status_facts.py), read from the plugin's own tree because it is needed before any host runs.
-- No state name is written in this file.
---@return table
local function read_facts()
  -- A broken install: said once; the status then only shows what the host pushes.
  return require("acp_nvim.host.python_tables").read(
    "status_facts.json",
    { facts = {}, messages = {}, chat_coming_in = {} },
    function(decoded)
      return type(decoded.facts) == "table"
    end
  )
end

local facts = read_facts()

---@type AcpStatus
local current = { state = facts.no_host }

-- msgpack nil arrives as vim.NIL inside tables: turn it into a plain absent field.
---@param value any
---@return any
local function strip_nil(value)
  if value == vim.NIL then
    return nil
  end
  if type(value) == "table" then
    local out = {}
    for k, v in pairs(value) do
      out[k] = strip_nil(v)
    end
    return out
  end
  return value
end

---@param status table
function M.set(status)
  local new = strip_nil(status)
  if vim.deep_equal(new, current) then
    return
  end
  current = new
  -- The host decides which session is current (app/runs.py); this is the one place Lua applies its word (the
  -- chat :AcpChat opens). A status naming no session, or one with no chat, leaves the chat shown last.
  local chat = package.loaded["acp_nvim.ui.chat"]
  if chat and new.session_id and chat.chats[new.session_id] then
    chat.current = new.session_id
  end
  vim.api.nvim_exec_autocmds(
    "User",
    { pattern = "AcpNvimStatus", modeline = false, data = vim.deepcopy(new) }
  )
  -- A status change often comes with nothing else to redraw (the turn's last text is already on screen), and
  -- Neovim re-evaluates %{} statuslines and winbars only when it redraws them.
  pcall(vim.cmd.redrawstatus, { bang = true })
end

---@alias AcpStatusFact
---| "agent_start_requested" # :AcpStart of an agent other than the current one (or none)
---| "current_agent_start_requested" # :AcpStart of the current agent
---| "restart_requested"
---| "prompt_submitted"
---| "host_failed" # the host could not start
---| "host_exited" # the host died after it had started
---| "stopped_without_host" # :AcpStop with no host running

--- Whether the table lets `fact` change the current state; when not, the message that refuses the action
--- (nil: it goes on, and the host decides).
---@param fact AcpStatusFact
---@return boolean applies, string|nil refusal
function M.applies(fact)
  local rule = facts.facts[fact]
  if rule == nil or rule["in"] == nil or vim.tbl_contains(rule["in"], current.state) then
    return true, nil
  end
  local refused = rule.refused or {}
  local key = refused[current.state] or refused["*"]
  return false, key and facts.messages[key] or nil
end

--- Records a fact the host has not answered yet (or cannot: it is not running) and shows what the table
--- declares for it, until the host pushes its own status. Returns whether it applied (see `applies`).
---@param fact AcpStatusFact
---@param fields table|nil what the fact says besides (the agent's name, the error)
---@return boolean applied
function M.record(fact, fields)
  local rule = facts.facts[fact]
  if rule == nil or not M.applies(fact) then
    return false
  end
  local shown = vim.tbl_extend("force", fields or {}, { state = rule.state })
  for _, field in ipairs(rule.clear or {}) do
    -- vim.NIL, not nil: a nil field does not exist in the table and would keep, say, a dead session's id.
    shown[field] = vim.NIL
  end
  -- No copy of `current` first: tbl_extend makes a new table and set() copies every nested one (strip_nil).
  M.set(rule.reset and shown or vim.tbl_extend("force", current, shown))
  return true
end

--- Whether a chat is on its way (:AcpChat waits for it), by the table's states.
---@return boolean
function M.chat_coming()
  return vim.tbl_contains(facts.chat_coming_in, current.state)
end

---@return AcpStatus
function M.get()
  return vim.deepcopy(current)
end

--- "<title or name> <version> <state>", then the names of the mode and model when the session has them; "" when no
--- agent was ever started.
---@return string
function M.statusline()
  local agent = current.agent
  if agent == nil then
    return ""
  end
  local parts = { agent.title or agent.name }
  if agent.version then
    table.insert(parts, agent.version)
  end
  if current.state then
    table.insert(parts, (current.state:gsub("_", " ")))
  end
  if current.mode_name then
    table.insert(parts, "· " .. current.mode_name)
  end
  if current.model_name then
    table.insert(parts, "· " .. current.model_name)
  end
  if current.waiting then
    table.insert(parts, "· " .. current.waiting)
  end
  return table.concat(parts, " ")
end

return M

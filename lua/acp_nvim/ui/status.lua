-- The status the Python side pushes (agent, state, session, mode, ...), the statusline string, and the
-- `User AcpNvimStatus` event fired on every change.

local M = {}

---@class AcpStatus
---@field agent {name: string, title: string|nil, version: string|nil}|nil
---@field state "stopped"|"starting"|"ready"|"running"|"awaiting_permission"|"error"
---@field session_id string|nil
---@field agent_name string|nil the configured name (opts.agents key) of the current agent
---@field mode string|nil
---@field model string|nil current value of the "model" config option
---@field title string|nil
---@field usage {used: integer, size: integer, cost: {amount: number, currency: string}|nil}|nil
---@field sessions integer|nil open sessions (all agents)
---@field auth_methods string[]|nil
---@field protocol_version integer|nil
---@field error string|nil

---@type AcpStatus
local current = { state = "stopped" }

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
  -- The chat of the current session is the one :AcpChat opens.
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

--- Lua-side changes (before or without the host): keep the rest of the status.
---@param fields table
function M.update(fields)
  -- No copy of `current` first: tbl_extend makes a new table and set() copies every nested one (strip_nil).
  M.set(vim.tbl_extend("force", current, fields))
end

---@param message string
function M.set_error(message)
  M.update({ state = "error", error = message })
end

---@param message string
function M.host_exited(message)
  if current.state ~= "stopped" then
    vim.notify(message, vim.log.levels.ERROR, { title = "acp.nvim" })
    -- vim.NIL, not nil: a nil field does not exist in the table and would keep the dead session's id.
    M.update({ state = "error", error = message, session_id = vim.NIL })
  end
end

---@return AcpStatus
function M.get()
  return vim.deepcopy(current)
end

--- "<title or name> <version> <state>", then the mode and model when the session has them; "" when no agent
--- was ever started.
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
  table.insert(parts, (current.state:gsub("_", " ")))
  if current.mode then
    table.insert(parts, "· " .. current.mode)
  end
  if current.model then
    table.insert(parts, "· " .. current.model)
  end
  return table.concat(parts, " ")
end

return M

--- The plugin's events: a lower layer says what happened (a terminal's output, the host's exit) and the
--- layers above that care subscribe, so no module reaches up into one above it and no module's field is
--- reassigned from outside to hook into it. An error in one handler is shown and skipped: it never breaks
--- the emitter (often a job callback) nor the other handlers.
local M = {}

---@alias acp.Event "terminal_output"|"terminal_exit"|"host_job_exited"|"host_exited"|"host_failed"

local handlers = {} ---@type table<string, fun(...)[]>

--- Calls `fn(...)` on every `emit(name, ...)`, in the order subscribed; returns a function that unsubscribes.
---@param name acp.Event
---@param fn fun(...)
---@return fun()
function M.on(name, fn)
  local list = { unpack(handlers[name] or {}) }
  list[#list + 1] = fn
  handlers[name] = list
  return function()
    -- A new list, never an edit of the old: an emit going through the old one is not disturbed.
    local kept = {}
    for _, f in ipairs(handlers[name] or {}) do
      if f ~= fn then
        kept[#kept + 1] = f
      end
    end
    handlers[name] = kept
  end
end

---@param name acp.Event
---@param ... any
function M.emit(name, ...)
  local list = handlers[name]
  if list == nil then
    return
  end
  -- Lists are replaced, never changed (see `on`): this one stays as it is however the handlers subscribe.
  for _, fn in ipairs(list) do
    local ok, err = pcall(fn, ...)
    if not ok then
      -- A bug of ours: said once per failure, never raised into the job callback that emitted the event.
      require("acp_nvim.util.notify").error(("internal error on %s: %s"):format(name, tostring(err)))
    end
  end
end

return M

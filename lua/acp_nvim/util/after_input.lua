-- Work continued on a later main-loop tick, after the keys and requests that arrived meanwhile.
--
-- `vim.schedule` alone queues the work ahead of them: what arrives during a slice of work is read from its
-- channel only once the slice has returned, behind the continuation the slice queued, so a round trip or a
-- typed key waited for two slices (a replay's drains, the highlighting's). The continuation is queued from a
-- libuv check handle instead, which runs right after the loop has polled its channels; an idle handle keeps
-- that poll from blocking while work waits.

local M = {}

local uv = vim.uv
local waiting = {} ---@type fun()[]
local check = nil ---@type uv.uv_check_t|nil
local idle = nil ---@type uv.uv_idle_t|nil

local function nothing() end

local function release()
  if check ~= nil and idle ~= nil then
    check:stop()
    idle:stop()
  end
  local fns = waiting
  waiting = {}
  for _, fn in ipairs(fns) do
    vim.schedule(fn)
  end
end

--- Runs `fn` on the main loop once the input that arrived before the next poll is queued ahead of it.
---@param fn fun()
function M.schedule(fn)
  waiting[#waiting + 1] = fn
  if #waiting > 1 then
    return
  end
  if check == nil or idle == nil then
    check, idle = uv.new_check(), uv.new_idle()
  end
  if check == nil or idle == nil then
    -- No handles (never seen): as vim.schedule does.
    release()
    return
  end
  idle:start(nothing)
  check:start(release)
end

return M

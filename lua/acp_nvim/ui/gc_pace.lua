-- The garbage collector's work kept out of the middle of a slice of drawing, and paid at the start of the next
-- one within its budget.
--
-- LuaJIT collects incrementally, in steps paid for by allocation: a slice of a replayed history (JSON decoded
-- into tables, items drawn into lines) allocates hundreds of KB, and the steps it triggers, a sweep among them,
-- ran inside it: a `vim.json.decode` of 19 KB took 3-6.5 ms instead of 0.5-1, a slice 8-9 ms of its 4 ms
-- budget (measured with the probe of bench/ during `session/load`), a tick of the highlighting 4.8 ms of its 2.
-- So the collector is stopped while a slice works (`slice`: the chat's drains, the highlighting's ticks), what
-- the slice allocated is owed, and the next slice begins by paying it, a step at a time, up to a deadline its
-- budget sets (`pay`): the same work, at a place where it is counted.

local M = {}

local hrtime = vim.uv.hrtime

-- What is owed, in KB allocated while the collector was held: `collectgarbage("step", 0)` is one basic step of
-- LuaJIT (work for ~1 KB of allocation at its default step multiplier), ~2 µs.
local owed_kb = 0

--- Stops the collector for a slice of work; what `release` needs back, nil when it was stopped already (by
--- someone else: then it is left as it is).
---@return number|nil
function M.hold()
  if not collectgarbage("isrunning") then
    return nil
  end
  collectgarbage("stop")
  return collectgarbage("count")
end

--- Restarts the collector after a slice; what the slice allocated is owed.
---@param held number|nil what `hold` returned
function M.release(held)
  if held == nil then
    return
  end
  collectgarbage("restart")
  local made = collectgarbage("count") - held
  if made > 0 then
    owed_kb = owed_kb + made
  end
end

-- The heap's size when the last slice ended: what Neovim allocated between two slices is owed too.
local after_slice_kb = nil ---@type number|nil

--- Takes over the collector's debt. LuaJIT pays for a large allocation (a notification's 256 KB of JSON text,
--- turned into Lua strings before the chat's code runs) with a debt that the next explicit step pays whole:
--- 3-5 ms at the start of the slice that drew it (measured). The debt is cleared by a step at a multiplier of
--- 1 (a basic step per KB of debt that does almost no work), and what Neovim allocated since the last slice
--- is owed instead, paid within deadlines like the rest.
local function take_over_debt()
  local kb = collectgarbage("count")
  if after_slice_kb ~= nil and kb > after_slice_kb then
    owed_kb = owed_kb + (kb - after_slice_kb)
  end
  local multiplier = collectgarbage("setstepmul", 1)
  collectgarbage("step", 0)
  collectgarbage("setstepmul", multiplier)
end

--- Pays what is owed, a step at a time, until `deadline` (vim.uv.hrtime) or a collection cycle ends (that
--- cycle freed what the slices left).
---@param deadline number
function M.pay(deadline)
  while owed_kb > 0 do
    -- Eight steps between two looks at the clock: ~15 µs.
    for _ = 1, 8 do
      if collectgarbage("step", 0) then
        owed_kb = 0
        return
      end
    end
    owed_kb = owed_kb - 8
    if hrtime() >= deadline then
      return
    end
  end
end

--- Runs `fn(...)` as a slice of work: what earlier slices owe paid first, until `pay_until`, then `fn` with
--- the collector held; it runs again after `fn`, also when `fn` fails (the error is raised again). Inside
--- another slice (the highlighting after a drain), or with the collector stopped by someone else, `fn` just
--- runs.
---@generic T
---@param pay_until number vim.uv.hrtime
---@param fn fun(...): T
---@return T
function M.slice(pay_until, fn, ...)
  if not collectgarbage("isrunning") then
    return fn(...)
  end
  take_over_debt()
  M.pay(pay_until)
  local held = M.hold()
  local ok, result = pcall(fn, ...)
  M.release(held)
  after_slice_kb = collectgarbage("count")
  if not ok then
    error(result, 0)
  end
  return result
end

--- What is owed (tests).
---@return number
function M.owed()
  return math.max(owed_kb, 0)
end

return M

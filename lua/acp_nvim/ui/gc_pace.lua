-- The garbage collector's work kept out of the middle of a long draw's slices, and paid at the start of the next
-- slice within its budget.
--
-- LuaJIT collects incrementally, in steps paid for by allocation: a slice of a replayed history (JSON decoded
-- into tables, items drawn into lines) allocates hundreds of KB, and the steps it triggers, a sweep among them,
-- ran inside it: a `vim.json.decode` of 19 KB took 3-6.5 ms instead of 0.5-1, a slice 8-9 ms of its 4 ms
-- budget (measured with the probe of bench/ during `session/load`), a tick of the highlighting 4.8 ms of its 2.
-- So the collector is stopped while a slice works (`slice`: a long draw's slices, the highlighting's ticks),
-- what the slice allocated is owed, and the next slice begins by paying it, a step at a time, up to a deadline
-- its budget sets: the same work, at a place where it is counted.

local M = {}

local hrtime = vim.uv.hrtime

-- What is owed, in KB allocated while the collector was held: `collectgarbage("step", 0)` is one basic step of
-- LuaJIT (work for ~1 KB of allocation at its default step multiplier), ~2 µs.
local owed_kb = 0

-- The heap's size and the time when the last slice ended: what Neovim allocated between two slices of one
-- piece of work (the next notification of a replay) is owed too.
local after_slice_kb, after_slice_at = 0, -math.huge
-- Slices closer than this are one piece of work (a replay's ticks follow each other within milliseconds).
local SAME_WORK_NS = 50e6

--- Takes over the collector's debt. LuaJIT pays for a large allocation (a notification's 256 KB of JSON text,
--- turned into Lua strings before the chat's code runs) with a debt that the next explicit step pays whole:
--- 3-5 ms at the start of the slice that drew it (measured). The debt is cleared by a step at a multiplier of
--- 1 (a basic step per KB of debt that does almost no work), and what Neovim allocated since the last slice
--- is owed instead, paid within deadlines like the rest.
local function take_over_debt()
  if hrtime() - after_slice_at < SAME_WORK_NS then
    local kb = collectgarbage("count")
    if kb > after_slice_kb then
      owed_kb = owed_kb + (kb - after_slice_kb)
    end
  end
  local multiplier = collectgarbage("setstepmul", 1)
  collectgarbage("step", 0)
  collectgarbage("setstepmul", multiplier)
end

--- Pays what is owed, a step at a time, until `deadline` (vim.uv.hrtime) or a collection cycle ends (that
--- cycle freed what the slices left).
---@param deadline number
local function pay(deadline)
  -- A whole cycle's work at most: however much was allocated, a cycle that ends frees it.
  owed_kb = math.min(owed_kb, collectgarbage("count"))
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
  pay(pay_until)
  collectgarbage("stop")
  local held = collectgarbage("count")
  local ok, result = pcall(fn, ...)
  collectgarbage("restart")
  after_slice_kb, after_slice_at = collectgarbage("count"), hrtime()
  if after_slice_kb > held then
    owed_kb = owed_kb + (after_slice_kb - held)
  end
  if not ok then
    error(result, 0)
  end
  return result
end

--- Whether a held slice ended a moment ago: the work that follows (the highlighting of a replay just drawn) is
--- part of the same long piece of work, and is held too; otherwise (a stream's highlighting) the collector is
--- left to itself: a held slice restarts it into a new cycle sooner than its own pace would, which cost a
--- 10,000-word stream's Neovim ~5 ms more CPU when every highlighting tick was held.
---@return boolean
function M.pacing()
  return hrtime() - after_slice_at < SAME_WORK_NS
end

--- What is owed (tests).
---@return number
function M.owed()
  return math.max(owed_kb, 0)
end

return M

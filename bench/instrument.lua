-- The bench's hooks inside Neovim. No product code changes: the Lua entry points the host calls are wrapped.
--
-- * Every host -> Neovim message is an `nvim_exec_lua` chunk (source "<nvim>") whose first act is
--   `require(...)` or `vim.notify(...)`; wrapping both and checking the caller's source counts them. The bench
--   driver's own chunks never call either while counting is on.
-- * chat.apply calls are counted; its work (chat._drain, a slice of the queued ops per main-loop tick) is timed
--   with vim.uv.hrtime (the same clock as Python's time.monotonic_ns on Linux), and the first drain that
--   empties the queue with the chat's last line ending with the awaited text stamps the done time. The first
--   drain after the prompt (the chat's first change: the prompt shown) and the first that shows the agent's
--   first words are stamped too.
-- * InsertCharPre stamps each typed key, for the responsiveness probe.
-- * :AcpStart (run, or typed: the <CR> that ends its command line) and the next `ready` status are stamped,
--   for the start-up benchmark.

local uv = vim.uv
local B = {
  notes = {},
  keys = {},
}
_G.acp_bench = B

local function reset()
  B.counting = false
  B.t0, B.t_done = nil, nil
  B.t_first_change, B.t_first_words = nil, nil
  B.needle, B.first_words = nil, nil
  B.session = nil
  B.t_pick = nil
  B.applies, B.host_calls = 0, 0
  -- When each host call came (vim.uv.hrtime), up to the done time: the most in any frame is judged.
  B.call_times = {}
  B.applies_at_done, B.host_calls_at_done = nil, nil
  B.apply_ns, B.apply_max_ns = 0, 0
  B.frames = {}
end
reset()

local function from_host()
  local info = debug.getinfo(3, "S")
  return info ~= nil and info.source == "<nvim>"
end

local function count_host_call()
  B.host_calls = B.host_calls + 1
  if B.t_done == nil then
    B.call_times[#B.call_times + 1] = uv.hrtime()
  end
end

local real_require = require
_G.require = function(name)
  if B.counting and from_host() then
    count_host_call()
  end
  return real_require(name)
end

-- Notifications are recorded, not shown: a headless Neovim has nowhere to show them.
vim.notify = function(msg, level)
  if B.counting and from_host() then
    count_host_call()
  end
  table.insert(B.notes, { msg = msg, level = level })
end

local chat = real_require("acp_nvim.ui.chat")
local real_apply = chat.apply
chat.apply = function(session_id, ops)
  B.applies = B.applies + 1
  return real_apply(session_id, ops)
end
-- The host's entry point (ops as JSON chunks); counted as chat.apply calls too.
local real_apply_json = chat.apply_json
chat.apply_json = function(session_id, chunks)
  B.applies = B.applies + 1
  return real_apply_json(session_id, chunks)
end

-- The work itself: chat.apply drains its queue within a per-tick budget and continues on later ticks, so the
-- timing (per tick) and the done check wrap the drain, wherever it is called from: the chat's facade
-- (ui/chat/init.lua) stores these wrappers in ui/chat/drain.lua, which calls its own M._drain through them.
-- Only the tail of the last line is read: a streamed paragraph is one line of up to a MB, and copying it into
-- Lua after every drain cost the drains measured ~0.4 ms each (and the garbage collector more).
local function ends_with(buf, text)
  local api = vim.api
  local row = api.nvim_buf_line_count(buf) - 1
  local width = api.nvim_buf_get_offset(buf, row + 1) - api.nvim_buf_get_offset(buf, row) - 1
  if width < #text then
    return false
  end
  return api.nvim_buf_get_text(buf, row, width - #text, row, width, {})[1] == text
end

local real_drain = chat._drain
chat._drain = function(c)
  local started = uv.hrtime()
  local finished = real_drain(c)
  local now = uv.hrtime()
  local spent = now - started
  B.apply_ns = B.apply_ns + spent
  if spent > B.apply_max_ns then
    B.apply_max_ns = spent
  end
  if B.needle ~= nil and B.t_first_change == nil then
    B.t_first_change = now
  end
  if B.first_words ~= nil and B.t_first_words == nil then
    local last = vim.api.nvim_buf_get_lines(c.buf, -2, -1, false)[1] or ""
    if last:find(B.first_words, 1, true) then
      B.t_first_words = now
    end
  end
  if B.needle ~= nil and B.t_done == nil and finished and (B.session == nil or c.session_id == B.session) then
    if ends_with(c.buf, B.needle) then
      B.t_done = now
      B.applies_at_done, B.host_calls_at_done = B.applies, B.host_calls
    end
  end
  return finished
end

--- Starts a measured prompt: the start time is taken in the same Lua call that runs :AcpPrompt.
--- `first_words`: the text the agent's first update shows (its first drain is stamped), when known.
function B.arm(needle, text, first_words)
  reset()
  -- An absent argument in the middle of an RPC's list arrives as vim.NIL.
  B.needle, B.first_words = needle, first_words ~= vim.NIL and first_words or nil
  B.t0 = uv.hrtime()
  vim.cmd("AcpPrompt " .. text)
  B.counting = true
end

--- Starts a measured session load the way a user does it: :AcpSessions, its picker answered with
--- `session_id` (the next vim.ui.select only). The start time is taken in the same Lua call that runs
--- :AcpSessions, so the session/list round trip and the picker count too; the done check looks at that
--- session's chat only (earlier loads of the same history end with the same text).
function B.arm_load(needle, session_id)
  reset()
  B.needle, B.session = needle, session_id
  local real_select = vim.ui.select
  vim.ui.select = function(items, _, on_choice)
    vim.ui.select = real_select
    B.t_pick = uv.hrtime()
    for _, item in ipairs(items) do
      if item.id == session_id then
        return on_choice(item)
      end
    end
    on_choice(nil)
  end
  B.t0 = uv.hrtime()
  vim.cmd("AcpSessions")
  B.counting = true
end

function B.record()
  return {
    t0 = B.t0,
    t_pick = B.t_pick,
    t_done = B.t_done,
    t_first_change = B.t_first_change,
    t_first_words = B.t_first_words,
    applies = B.applies,
    host_calls = B.host_calls,
    applies_at_done = B.applies_at_done,
    host_calls_at_done = B.host_calls_at_done,
    apply_ns = B.apply_ns,
    apply_max_ns = B.apply_max_ns,
    call_times = B.call_times,
  }
end

--- A scratch buffer in the current window, in insert mode, whose typed keys are stamped.
function B.typing_target()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_set_current_buf(buf)
  B.keys = {}
  vim.api.nvim_create_autocmd("InsertCharPre", {
    buffer = buf,
    callback = function()
      table.insert(B.keys, uv.hrtime())
    end,
  })
  vim.api.nvim_input("i")
end

-- Neovim's main-loop ticks, for the probe's runs: a libuv check handle runs right after each poll, a prepare
-- handle before the next; between them Neovim works (the events read, Lua, a redraw). Each tick over 1 ms is
-- kept with its wall time, the process's CPU time over it and its involuntary context switches
-- (`getrusage`): a long tick whose CPU time is short is Neovim waiting for a core (the machine's other
-- processes), not its own work. Neither handle keeps the poll from blocking (an idle handle would).
local ticks, tick_check, tick_prepare = nil, nil, nil
local tick_start, tick_cpu, tick_switches = nil, 0, 0

local function cpu_and_switches()
  local usage = uv.getrusage()
  if usage == nil then
    return 0, 0
  end
  local cpu = (usage.utime.sec + usage.stime.sec) * 1e9 + (usage.utime.usec + usage.stime.usec) * 1e3
  return cpu, usage.nivcsw
end

function B.ticks_start()
  ticks = {}
  tick_check, tick_prepare = tick_check or uv.new_check(), tick_prepare or uv.new_prepare()
  tick_check:start(function()
    tick_start = uv.hrtime()
    tick_cpu, tick_switches = cpu_and_switches()
  end)
  tick_prepare:start(function()
    if tick_start == nil or ticks == nil then
      return
    end
    local now = uv.hrtime()
    if now - tick_start > 1e6 then
      local cpu, switches = cpu_and_switches()
      ticks[#ticks + 1] = { tick_start, now - tick_start, cpu - tick_cpu, switches - tick_switches }
    end
    tick_start = nil
  end)
end

--- The ticks over 1 ms since ticks_start: {start, wall ns, CPU ns, involuntary switches} each.
function B.ticks_stop()
  if tick_check ~= nil and tick_prepare ~= nil then
    tick_check:stop()
    tick_prepare:stop()
  end
  local kept = ticks or {}
  ticks, tick_start = nil, nil
  return kept
end

-- Lines of a buffer touched by changes, for the minimal-edit check of fs writes.
function B.count_changes(buf)
  B.touched = 0
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, _, _, first, last_old, last_new)
      B.touched = B.touched + math.max(last_old, last_new) - first
    end,
  })
end

-- Stamps the first `ready` status once B.t_start is set.
local function stamp_ready()
  B.t_start, B.t_ready = nil, nil
  vim.api.nvim_create_autocmd("User", {
    pattern = "AcpNvimStatus",
    callback = function()
      if B.t_start ~= nil and B.t_ready == nil and real_require("acp_nvim").status().state == "ready" then
        B.t_ready = uv.hrtime()
        return true
      end
    end,
  })
end

--- Starts the agent, stamping :AcpStart and the first `ready` status after it.
function B.arm_start()
  stamp_ready()
  B.t_start = uv.hrtime()
  vim.cmd("AcpStart flood")
end

--- For an :AcpStart the driver types: stamps the key that ends the `:` command line (<CR>, before the
--- command runs) and the first `ready` status after it. Issues nothing itself.
function B.arm_typed()
  stamp_ready()
  vim.api.nvim_create_autocmd("CmdlineLeave", {
    pattern = ":",
    once = true,
    callback = function()
      B.t_start = uv.hrtime()
    end,
  })
end

--- For a UI about to attach: stamps UIEnter and the host's announcing itself loaded (host.bootstrapped),
--- so that the time from the UI to a loaded host (with prestart_host = "auto") can be read.
function B.arm_ui()
  B.t_ui, B.t_host = nil, nil
  vim.api.nvim_create_autocmd("UIEnter", {
    once = true,
    callback = function()
      B.t_ui = uv.hrtime()
    end,
  })
  local host = real_require("acp_nvim.host")
  local bootstrapped = host.bootstrapped
  host.bootstrapped = function(answer)
    bootstrapped(answer)
    if B.t_host == nil and host.is_ready() then
      B.t_host = uv.hrtime()
    end
  end
end

--- The agent's `terminal/*` requests, run in real Neovim terminals.
---
--- Each command runs as a PTY job (`jobstart(..., { term = true })`) in a hidden, unlisted terminal buffer; the
--- user can show it with `M.open(id)`. A PTY job is started with setsid, so the command leads its own process
--- group and `kill` reaches everything it started. Every process it starts also carries `pgroup.MARK=<token>`
--- in its environment, so what leaves the group (setsid, or a background child still running after the
--- command ended) is found and ended too. No signal goes out before the job has become its own group's leader
--- running its own program (see `pgroup.leader_state`): until then it is deferred, the agent answered at once.
---
--- Functions answer with plain tables, `{ ok = true, ... }` or `{ ok = false, fact = "...", detail? }`: the facts
--- "unknown_terminal", "not_executable", "start_failed", "bad_spec" (no byte limit). The host validates the
--- spec before it comes here and decides the error an agent gets for each fact
--- (`acp_nvim/app/editor/terminal_rules.py`).
---
--- Output for the agent is the job's raw byte stream (escape sequences included), not the rendered screen,
--- with the PTY's "\r\n" folded to "\n". It is kept bounded: the last `output_byte_limit` bytes (the host
--- decides the limit and sends it with every spec), trimmed as it arrives. The cut is by bytes: the host keeps
--- the agent's tail and decides whether it was truncated and where a character starts.
---
--- Exit status: `{ exit_code = n }` or `{ signal = "SIGKILL" }`. Neovim reports a death by signal n as exit
--- code 128 + n, so codes 129..(128 + highest signal) are reported as that signal without an exit code; a
--- command that really exits with such a code reads as a signal death.
---
--- Exits: the event `terminal_exit` (`util/events.lua`: terminal_id, exit_status) for every terminal, and
--- `M.wait_for_exit(id, callback)` for one waiter (it answers at once when the command has already ended, so no
--- exit is missed).
--- Live output for the chat: the event `terminal_output` (terminal_id, data; per chunk, data as the agent
--- will see it) or show `M.bufnr(id)`, which Neovim renders as it goes.
local M = {}

local api = vim.api
local uv = vim.uv

local events = require("acp_nvim.util.events")
local garbage = require("acp_nvim.editor.job_output_gc")
local pgroup = require("acp_nvim.editor.process_groups")
local result = require("acp_nvim.editor.answer")
local stream = require("acp_nvim.editor.terminal.stream")

--- 'scrollback' of the hidden terminal buffers (Neovim's default is 10,000 lines). What the agent reads is the
--- byte stream kept above, not the buffer; the buffer is for a person looking, and 10,000 lines of it cost
--- ~18 MiB of Neovim memory per chatty terminal.
M.scrollback = 1000
--- Time a command gets to end after SIGTERM before its process group is sent SIGKILL.
M.kill_grace_ms = 2000
--- How often a signal for a command that has not started yet (fork done, exec not yet) is tried again.
M.start_retry_ms = 5
--- After this long a SIGTERM goes out once the wrapper runs, even if the command it starts is not seen.
M.start_settle_ms = 500
--- At most this many SIGKILL sweeps of what a terminal left running, 20 ms apart, until none is found.
M.sweep_rounds = 5
--- How long one main-loop tick may signal terminals' groups for: the rest go on the next ticks.
M.slice_ns = 4e6

---@class acp_nvim.Terminal
---@field id string
---@field bufnr integer
---@field job integer
---@field pid integer
---@field limit integer
---@field slack integer
---@field chunks string[]
---@field size integer
---@field total integer bytes ever appended to `chunks`
---@field cr boolean a "\r" ended the last chunk
---@field exit_status table?
---@field token string
---@field marker string
---@field carry string
---@field drained boolean
---@field waiters function[]
---@field started integer hrtime of the jobstart
---@field ending boolean a SIGTERM-then-SIGKILL round is under way

---@type table<string, acp_nvim.Terminal>
local by_id = {}
--- Every terminal whose command still runs, released ones included, so that nothing outlives kill_all.
---@type table<acp_nvim.Terminal, true>
local running = {}
--- Tokens (-> pid) of the terminals whose marked processes may still run: not yet ended by kill or release.
---@type table<string, integer>
local unswept = {}
local ending = require("acp_nvim.editor.terminal.ending").new(M, running, unswept)
--- End every command this module started, released ones too, and whatever they left running, waiting
--- (briefly) until they are gone. For VimLeavePre: once Neovim has exited nothing would send the SIGKILL.
M.kill_all = ending.kill_all
local next_id = 0

local opt = result.opt

---@param fact string
---@param detail string?
---@return table
local function refused(fact, detail)
  return { ok = false, fact = fact, detail = detail }
end

---@param t acp_nvim.Terminal
---@param code integer
local function finish(t, code)
  if t.carry ~= "" then
    local rest = t.carry
    t.carry, t.drained = "", true
    stream.append(t, rest)
  end
  if t.cr then
    t.cr = false
    t.chunks[#t.chunks + 1] = "\r"
    t.size = t.size + 1
    t.total = t.total + 1
  end
  t.exit_status = stream.exit_status_of(code)
  running[t] = nil
  local waiters = t.waiters
  t.waiters = {}
  for _, cb in ipairs(waiters) do
    pcall(cb, t.id, t.exit_status)
  end
  events.emit("terminal_exit", t.id, t.exit_status)
end

---@param id any
---@return acp_nvim.Terminal?, table?
local function lookup(id)
  local t = by_id[id]
  if not t then
    return nil, refused("unknown_terminal")
  end
  return t, nil
end

--- The argv for the agent's command. A lone command with spaces that is no executable is a shell line (some
--- agents send `command = "ls -la"` without args): it runs through `sh -c`.
---@param command string
---@param args string[]
---@return string[]
local function argv_of(command, args)
  if #args == 0 and command:find("%s") and vim.fn.executable(command) == 0 then
    return { "sh", "-c", command }
  end
  local argv = { command }
  for _, a in ipairs(args) do
    argv[#argv + 1] = a
  end
  return argv
end

---@class acp_nvim.TerminalSpec
---@field command string
---@field args string[]?
---@field env { name: string, value: string }[]?
---@field cwd string?
---@field output_byte_limit integer

--- Answer `terminal/create`: start the command and return its id at once.
---@param spec acp_nvim.TerminalSpec
---@return table { ok = true, terminal_id, bufnr, pid } or a fact
function M.create(spec)
  -- Validated by the host (command, args, env, an existing cwd folder, the byte limit).
  local command = spec.command
  local args = opt(spec.args) or {}
  local env = {}
  for _, v in ipairs(opt(spec.env) or {}) do
    env[v.name] = v.value
  end
  local cwd = opt(spec.cwd) or uv.cwd()
  local limit = opt(spec.output_byte_limit)
  if type(limit) ~= "number" then
    return refused("bad_spec", "no output_byte_limit")
  end

  next_id = next_id + 1
  local id = ("term-%d"):format(next_id)
  local buf = api.nvim_create_buf(false, true)
  ---@type acp_nvim.Terminal
  local t = {
    id = id,
    bufnr = buf,
    job = 0,
    pid = 0,
    limit = limit,
    slack = math.max(limit, 64 * 1024),
    chunks = {},
    size = 0,
    total = 0,
    cr = false,
    token = "",
    marker = "",
    carry = "",
    drained = false,
    waiters = {},
    started = 0,
    ending = false,
  }
  local argv = argv_of(command, args)
  if vim.fn.executable(argv[1]) == 0 then
    return refused("not_executable")
  end
  -- Unique on the machine (pid, counter, clock): it marks the processes of this terminal and no other.
  t.token = ("%x-%x-%x%x"):format(uv.os_getpid(), next_id, uv.hrtime() % 0x7fffffff, math.random(0, 0xffff))
  env[pgroup.MARK] = t.token
  t.marker = stream.marker_of(t.token)
  argv = vim.list_extend({ "/bin/sh", "-c", stream.WRAPPER, "acp-nvim-terminal", t.token }, argv)
  local ok, job = pcall(api.nvim_buf_call, buf, function()
    return vim.fn.jobstart(argv, {
      term = true,
      cwd = cwd,
      env = env,
      on_stdout = function(_, data)
        local chunk = table.concat(data, "\n")
        -- Each call leaves Neovim a Vimscript list of `chunk` that only a collection frees.
        garbage.owe(#chunk)
        stream.append(t, chunk)
      end,
      on_exit = function(_, code)
        finish(t, code)
      end,
    })
  end)
  if not ok or type(job) ~= "number" or job <= 0 then
    pcall(api.nvim_buf_delete, buf, { force = true })
    local why = not ok and tostring(job) or (job == -1 and "not executable" or "invalid arguments")
    return refused("start_failed", why)
  end
  t.job = job
  t.pid = vim.fn.jobpid(job)
  t.started = uv.hrtime()
  pcall(function()
    vim.bo[buf].scrollback = M.scrollback
  end)
  pcall(api.nvim_buf_set_name, buf, ("acp-terminal://%s/%s"):format(id, command))
  by_id[id] = t
  running[t] = true
  unswept[t.token] = t.pid
  return { ok = true, terminal_id = id, bufnr = buf, pid = t.pid }
end

--- Answer `terminal/output`. With `since` (a `total` of an earlier answer), only what was appended after it,
--- when still kept: `from` says where `output` starts in the whole stream (`since`, or where the kept bytes
--- start), `total` where it ends, `limit` the byte limit. The host keeps the tail itself and asks for the
--- rest: a 1 MiB answer on every poll takes tens of ms to get through Neovim's event loop while a command
--- floods it, new bytes only a fraction of that.
---@param id string
---@param since integer?
---@return table { ok = true, output, exit_status?, from, total, limit } or a fact
function M.output(id, since)
  local t, e = lookup(id)
  if not t then
    return e --[[@as table]]
  end
  if t.size > t.limit or #t.chunks > 1 then
    stream.trim(t)
  end
  local kept = t.chunks[1] or ""
  local from = t.total - #kept
  since = opt(since)
  if type(since) == "number" and since >= from and since <= t.total then
    kept, from = kept:sub(since - from + 1), since
  end
  return {
    ok = true,
    output = kept,
    exit_status = t.exit_status,
    from = from,
    total = t.total,
    limit = t.limit,
  }
end

--- Answer `terminal/wait_for_exit`: `{ ok = true, exit_status = {...} }` when the command has ended, else
--- `{ ok = true, pending = true }` and `callback(id, exit_status)` (if given) runs when it ends.
---@param id string
---@param callback fun(id: string, exit_status: table)?
---@return table
function M.wait_for_exit(id, callback)
  local t, e = lookup(id)
  if not t then
    return e --[[@as table]]
  end
  if t.exit_status then
    return { ok = true, exit_status = t.exit_status }
  end
  callback = opt(callback)
  if callback then
    t.waiters[#t.waiters + 1] = callback
  end
  return { ok = true, pending = true }
end

--- Answer `terminal/kill`: SIGTERM to the command's process group and to what it left running, SIGKILL after
--- `M.kill_grace_ms`. The terminal stays valid for `output` and `wait_for_exit`.
---@param id string
---@return table
function M.kill(id)
  local t, e = lookup(id)
  if not t then
    return e --[[@as table]]
  end
  ending.terminate({ t })
  return { ok = true }
end

--- `M.kill` of each of `ids` (those known), at once: a session's terminals when it ends.
---@param ids string[]
function M.kill_many(ids)
  local list = {}
  for _, id in ipairs(ids or {}) do
    list[#list + 1] = by_id[id]
  end
  ending.terminate(list)
end

--- Answer `terminal/release`: kill if running and forget the id. The buffer stays, so whatever shows it
--- keeps showing what the command printed.
---@param id string
---@return table
function M.release(id)
  local t, e = lookup(id)
  if not t then
    return e --[[@as table]]
  end
  ending.terminate({ t })
  by_id[id] = nil
  return { ok = true }
end

--- The terminal buffer of `id` (nil for an unknown id).
---@param id string
---@return integer?
function M.bufnr(id)
  local t = by_id[id]
  return t and t.bufnr or nil
end

--- The process id of the command (also its process group id).
---@param id string
---@return integer?
function M.pid(id)
  local t = by_id[id]
  return t and t.pid or nil
end

--- Ids of the terminals not released.
---@return string[]
function M.list()
  local ids = vim.tbl_keys(by_id)
  table.sort(ids)
  return ids
end

--- Show the terminal in a new split window; returns the window id.
---@param id string
---@param opts { vertical: boolean?, enter: boolean? }?
---@return table { ok = true, winid } or an error table
function M.open(id, opts)
  opts = opt(opts) or {}
  local t, e = lookup(id)
  if not t then
    return e --[[@as table]]
  end
  local win =
    api.nvim_open_win(t.bufnr, opts.enter ~= false, { split = opts.vertical and "right" or "below" })
  return { ok = true, winid = win }
end

api.nvim_create_autocmd("VimLeavePre", {
  group = api.nvim_create_augroup("acp_nvim_terminal", { clear = true }),
  callback = function()
    M.kill_all(200)
  end,
})

return M

--- Ending process groups: the agents' (editor/agent_groups.lua) and the commands of their terminals (terminal.lua).
---
--- Groups, not pids: launchers (`npx`, `uvx`, `sh -c`) and shells leave the real work to children and
--- grandchildren in the same group, some of them ignoring SIGTERM. So a group gets SIGTERM, a grace period,
--- then SIGKILL for whatever is left — also when its leader has gone meanwhile.
local M = {}

local uv = vim.uv

local has_proc = uv.fs_stat("/proc/self/stat") ~= nil
local own_pid = uv.os_getpid()

--- Reads a file of /proc whole (their size reads as 0, so in pieces until the end); nil when unreadable.
---@param path string
---@return string?
local function read_proc(path)
  local fd = uv.fs_open(path, "r", 0)
  if not fd then
    return nil
  end
  local parts, offset = {}, 0
  while true do
    local piece = uv.fs_read(fd, 65536, offset)
    if not piece or piece == "" then
      break
    end
    parts[#parts + 1] = piece
    offset = offset + #piece
  end
  uv.fs_close(fd)
  return table.concat(parts)
end

--- `{ state, ppid, pgrp, sid }` of a process from /proc/<pid>/stat, nil when it is gone or /proc is absent.
---@param pid integer
---@return { state: string, ppid: integer, pgrp: integer, sid: integer }?
function M.stat(pid)
  local stat = read_proc("/proc/" .. pid .. "/stat")
  -- Fields after the command name (which may hold spaces and parentheses): state ppid pgrp session ...
  local state, ppid, pgrp, sid = (stat or ""):match("^.*%)%s+(%S+)%s+(%d+)%s+(%d+)%s+(%d+)")
  if not state then
    return nil
  end
  return { state = state, ppid = tonumber(ppid), pgrp = tonumber(pgrp), sid = tonumber(sid) }
end

local own = has_proc and M.stat(own_pid) or nil
--- Neovim's own process group: never to be signalled (a stray -pgid of it would end Neovim and its jobs).
M.own_pgrp = own and own.pgrp or nil

--- Whether `pgid` may be signalled at all: a real group id that is not Neovim's own nor init's. `kill(-0)`
--- is the caller's group and `kill(-1)` every process the user may signal.
---@param pgid any
---@return boolean
function M.signallable(pgid)
  return type(pgid) == "number"
    and pgid == math.floor(pgid)
    and pgid > 1
    and pgid ~= own_pid
    and pgid ~= M.own_pgrp
end

--- Sends `sig` (a name such as "sigterm") to every process of the group; a group that is gone is no error.
--- Refuses (returns false) a group id that could be Neovim's own or everyone's.
---@param pgid integer
---@param sig string
---@return boolean sent
function M.signal(pgid, sig)
  if not M.signallable(pgid) then
    return false
  end
  -- Negative pid: the whole group.
  local ok, rc = pcall(uv.kill, -pgid, sig)
  return ok and rc == 0
end

--- Whether the group has a member that is not a zombie. killpg(0) alone counts zombies, which a reaper-less
--- init (containers) can keep forever; /proc tells them apart where it exists. For the terminals' groups, and
--- for the agents' when the host is gone; the host scans for its own agents (`client/agent/process.py`).
---@param pgid integer
---@return boolean
function M.alive(pgid)
  if not M.signallable(pgid) then
    return false
  end
  local ok, rc = pcall(uv.kill, -pgid, 0)
  if not ok or rc ~= 0 then
    return false
  end
  if not has_proc then
    return true
  end
  local dir = uv.fs_scandir("/proc")
  if not dir then
    return true
  end
  while true do
    local name = uv.fs_scandir_next(dir)
    if not name then
      return false
    end
    if name:match("^%d+$") then
      local stat = M.stat(tonumber(name) --[[@as integer]])
      if stat and stat.pgrp == pgid and stat.state ~= "Z" then
        return true
      end
    end
  end
end

local own_exe = has_proc and uv.fs_readlink("/proc/self/exe") or nil

--- Where a job Neovim has just forked stands: "ready" once it leads its own process group and runs its own
--- program, "starting" before, "gone" once it has ended (or is no child of Neovim's any more).
---
--- Until the child has exec'd it is a copy of Neovim with Neovim's signal handlers, which forward a
--- signal to Neovim's own event loop through a pipe both share: a SIGTERM then ends Neovim (exit code 1).
--- And until it has called setsid its group is Neovim's. So a signal waits for "ready". Without /proc
--- there is no telling: a job counts as ready `settle_ms` after its start (`started`, from `uv.hrtime()`).
---@param pid integer
---@param started integer? hrtime of the jobstart
---@param settle_ms integer?
---@return "ready" | "starting" | "gone"
function M.leader_state(pid, started, settle_ms)
  if not M.signallable(pid) then
    return "gone"
  end
  if not has_proc then
    local age_ms = (uv.hrtime() - (started or 0)) / 1e6
    return age_ms >= (settle_ms or 100) and "ready" or "starting"
  end
  local stat = M.stat(pid)
  if not stat or stat.state == "Z" or stat.ppid ~= own_pid then
    return "gone"
  end
  if stat.pgrp ~= pid or stat.sid ~= pid then
    return "starting"
  end
  local exe = uv.fs_readlink("/proc/" .. pid .. "/exe")
  if exe == nil or exe == own_exe then
    return "starting"
  end
  return "ready"
end

--- The command line of a process (NUL-separated, as in /proc), nil when it is gone or /proc is absent.
---@param pid integer
---@return string?
function M.cmdline(pid)
  return has_proc and read_proc("/proc/" .. pid .. "/cmdline") or nil
end

--- Pids of the live children of `pid` (empty without /proc).
---@param pid integer
---@return integer[]
function M.children(pid)
  local found = {}
  local listed = has_proc and read_proc(("/proc/%d/task/%d/children"):format(pid, pid)) or nil
  if listed then
    for child in listed:gmatch("%d+") do
      found[#found + 1] = tonumber(child) --[[@as integer]]
    end
    return found
  end
  -- Kernels without CONFIG_PROC_CHILDREN: every process's parent.
  local dir = has_proc and uv.fs_scandir("/proc") or nil
  while dir do
    local name = uv.fs_scandir_next(dir)
    if not name then
      break
    end
    local child = name:match("^%d+$") and tonumber(name)
    local stat = child and M.stat(child)
    if stat and stat.ppid == pid and stat.state ~= "Z" then
      found[#found + 1] = child
    end
  end
  return found
end

--- The environment variable that marks every process a terminal started (its value is the terminal's
--- token): what setsid, a double fork or a dead leader takes out of the process group, the environment
--- keeps.
M.MARK = "ACP_NVIM_TERMINAL"

local mark_prefix = M.MARK .. "="

--- Adds to `found` the process of /proc entry `name` when it is live and marked with one of `tokens`.
---@param name string
---@param tokens table<string, any>
---@param found { pid: integer, pgrp: integer, token: string }[]
local function look_at(name, tokens, found)
  local pid = name:match("^%d+$") and tonumber(name)
  if not pid or pid == own_pid then
    return
  end
  local environ = read_proc("/proc/" .. name .. "/environ")
  local at = environ and environ:find(mark_prefix, 1, true)
  while at do
    if at == 1 or environ:byte(at - 1) == 0 then
      local stop = environ:find("\0", at, true) or (#environ + 1)
      local token = environ:sub(at + #mark_prefix, stop - 1)
      local stat = tokens[token] ~= nil and M.stat(pid) or nil
      if stat and stat.state ~= "Z" then
        found[#found + 1] = { pid = pid, pgrp = stat.pgrp, token = token }
      end
      return
    end
    at = environ:find(mark_prefix, at + 1, true)
  end
end

--- Live processes (not zombies, not Neovim) whose environment carries `MARK=<token>` for one of `tokens`:
--- `{ { pid, pgrp, token }, ... }`. Empty without /proc, and for processes of other users (their
--- environment is unreadable).
---@param tokens table<string, any> token -> anything
---@return { pid: integer, pgrp: integer, token: string }[]
function M.marked(tokens)
  local found = {}
  local dir = has_proc and next(tokens) ~= nil and uv.fs_scandir("/proc") or nil
  while dir do
    local name = uv.fs_scandir_next(dir)
    if not name then
      break
    end
    look_at(name, tokens, found)
  end
  return found
end

--- `M.marked(tokens)`, read in slices of `slice_ns` of the main loop's time, the next slice queued by
--- `schedule` (after the input that came meanwhile): reading the environment of every process takes tens of
--- ms on a busy machine. `done(found)` once the whole of /proc is read.
---@param tokens table<string, any>
---@param slice_ns number
---@param schedule fun(fn: fun())
---@param done fun(found: { pid: integer, pgrp: integer, token: string }[])
function M.marked_in_slices(tokens, slice_ns, schedule, done)
  local found = {}
  local dir = has_proc and next(tokens) ~= nil and uv.fs_scandir("/proc") or nil
  if not dir then
    done(found)
    return
  end
  local function slice()
    local deadline = uv.hrtime() + slice_ns
    while true do
      local name = uv.fs_scandir_next(dir)
      if not name then
        done(found)
        return
      end
      look_at(name, tokens, found)
      if uv.hrtime() >= deadline then
        schedule(slice)
        return
      end
    end
  end
  slice()
end

--- Sends `sig` to one process, never to Neovim or init; a process that is gone is no error.
---@param pid integer
---@param sig string
function M.signal_pid(pid, sig)
  if M.signallable(pid) then
    pcall(uv.kill, pid, sig)
  end
end

---@param pgids integer[]
---@param sig string
local function signal_alive(pgids, sig)
  for _, pgid in ipairs(pgids) do
    -- Only a live group: its number may be a stranger's once it has gone.
    if M.alive(pgid) then
      M.signal(pgid, sig)
    end
  end
end

--- SIGTERM every group now, SIGKILL what is left of them after `grace_ms`, without waiting: for a caller
--- that must not block the editor.
---@param pgids integer[]
---@param grace_ms integer
function M.terminate_later(pgids, grace_ms)
  signal_alive(pgids, "sigterm")
  vim.defer_fn(function()
    signal_alive(pgids, "sigkill")
  end, grace_ms)
end

--- SIGTERM every group, wait at most `grace_ms` for all to go, SIGKILL what is left, then wait at most
--- `settle_ms` for that to go. Synchronous: for Neovim's exit, after which nothing would send the SIGKILL.
--- `settled` (optional) is a further condition of "gone", e.g. that Neovim has seen a job's exit.
---@param pgids integer[]
---@param grace_ms integer
---@param settle_ms integer
---@param settled (fun(): boolean)?
function M.terminate(pgids, grace_ms, settle_ms, settled)
  local function all_gone()
    if settled ~= nil and not settled() then
      return false
    end
    for _, pgid in ipairs(pgids) do
      if M.alive(pgid) then
        return false
      end
    end
    return true
  end
  signal_alive(pgids, "sigterm")
  vim.wait(grace_ms, all_gone, 20)
  signal_alive(pgids, "sigkill")
  vim.wait(settle_ms, all_gone, 10)
end

return M

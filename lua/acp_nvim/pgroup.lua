--- Ending process groups: the agents' (reaper.lua) and the commands of the agents' terminals (terminal.lua).
---
--- Groups, not pids: launchers (`npx`, `uvx`, `sh -c`) and shells leave the real work to children and
--- grandchildren in the same group, some of them ignoring SIGTERM. So a group gets SIGTERM, a grace period,
--- then SIGKILL for whatever is left — also when its leader has gone meanwhile.
local M = {}

local uv = vim.uv

--- Sends `sig` (a name such as "sigterm") to every process of the group; a group that is gone is no error.
---@param pgid integer
---@param sig string
function M.signal(pgid, sig)
  -- Negative pid: the whole group.
  pcall(uv.kill, -pgid, sig)
end

local has_proc = uv.fs_stat("/proc/self/stat") ~= nil

--- Whether the group has a member that is not a zombie. killpg(0) alone counts zombies, which a reaper-less
--- init (containers) can keep forever; /proc tells them apart where it exists.
---@param pgid integer
---@return boolean
function M.alive(pgid)
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
      local fd = uv.fs_open("/proc/" .. name .. "/stat", "r", 0)
      if fd then
        local stat = uv.fs_read(fd, 1024, 0)
        uv.fs_close(fd)
        -- Fields after the command name (which may hold spaces and parentheses): state ppid pgrp ...
        local state, pgrp = (stat or ""):match("%)%s+(%S+)%s+%S+%s+(%d+)")
        if state and tonumber(pgrp) == pgid and state ~= "Z" then
          return true
        end
      end
    end
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
  for _, pgid in ipairs(pgids) do
    M.signal(pgid, "sigterm")
  end
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
  for _, pgid in ipairs(pgids) do
    M.signal(pgid, "sigterm")
  end
  vim.wait(grace_ms, all_gone, 20)
  signal_alive(pgids, "sigkill")
  vim.wait(settle_ms, all_gone, 10)
end

return M

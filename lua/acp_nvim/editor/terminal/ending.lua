--- Ending what the terminals started: SIGTERM, then SIGKILL after a grace, to each command's process group and
--- to every process still carrying its mark; never before the command runs its own program, and in slices so
--- that 200 terminals ended at once do not hold Neovim.
local E = {}

local uv = vim.uv

local after_input = require("acp_nvim.util.after_input")
local pgroup = require("acp_nvim.editor.process_groups")

--- The ending functions of the terminals module: `settings` is that module (its timings, which a user or a
--- test may change at any time), `running` and `unswept` its tables, shared, never replaced.
---@param settings table
---@param running table<acp_nvim.Terminal, true>
---@param unswept table<string, integer>
---@return { terminate: fun(list: acp_nvim.Terminal[]), kill_all: fun(grace_ms: integer?) }
function E.new(settings, running, unswept)
  --- Whether the agent's command itself runs (or has run): the wrapper has a child that exec'd it. A SIGTERM
  --- that comes earlier is caught by the wrapper's trap (also in its forked child before exec) and the
  --- command would never see it. Past `settings.start_settle_ms` the wrapper alone suffices (a command that is a
  --- builtin of sh runs in the wrapper itself).
  ---@param t acp_nvim.Terminal
  ---@return boolean
  local function command_started(t)
    if t.drained or (uv.hrtime() - t.started) / 1e6 >= settings.start_settle_ms then
      return true
    end
    local own = pgroup.cmdline(t.pid)
    for _, child in ipairs(pgroup.children(t.pid)) do
      local cmdline = pgroup.cmdline(child)
      if cmdline and cmdline ~= own then
        return true
      end
    end
    return false
  end

  ---@param t acp_nvim.Terminal
  local function ended(t)
    t.ending = false
    unswept[t.token] = nil
  end

  --- Sends `sig` to what each terminal of `ts` started: its process group while the command runs (the leader
  --- checked to be Neovim's child leading that group), and every other live process carrying its mark, found
  --- in one scan of /proc for all of them (a scan per terminal held Neovim ~5 ms each: 200 terminals stopped at
  --- once were a second). A terminal whose command is still starting gets nothing yet and is tried again every
  --- `settings.start_retry_ms`, in a batch of its own. `after(sent, strays)` for each batch that went out: the
  --- terminals, and how many processes outside its group each had.
  ---@param ts acp_nvim.Terminal[]
  ---@param sig string
  ---@param after fun(sent: acp_nvim.Terminal[], strays: table<acp_nvim.Terminal, integer>)
  local function deliver(ts, sig, after)
    local sent, later, in_group = {}, {}, {}
    local next_one = 1
    local function signal_groups()
      -- Each group's leader is looked at in /proc first (~0.5 ms on a loaded machine): 200 of them go in
      -- slices, the keys and requests that came meanwhile in between.
      local deadline = uv.hrtime() + settings.slice_ns
      while next_one <= #ts do
        local t = ts[next_one]
        next_one = next_one + 1
        local wait = false
        if running[t] then
          local state = pgroup.leader_state(t.pid, t.started)
          wait = state == "starting" or (state == "ready" and sig ~= "sigkill" and not command_started(t))
          if not wait then
            in_group[t] = state == "ready" and pgroup.signal(t.pid, sig)
          end
        end
        if wait then
          later[#later + 1] = t
        else
          sent[#sent + 1] = t
        end
        if next_one <= #ts and uv.hrtime() >= deadline then
          return false
        end
      end
      return true
    end
    local function marked_and_after()
      if #later > 0 then
        vim.defer_fn(function()
          deliver(later, sig, after)
        end, settings.start_retry_ms)
      end
      if #sent == 0 then
        return
      end
      local by_token, strays = {}, {}
      for _, t in ipairs(sent) do
        by_token[t.token], strays[t] = t, 0
      end
      pgroup.marked_in_slices(by_token, settings.slice_ns, after_input.schedule, function(found)
        for _, p in ipairs(found) do
          local t = by_token[p.token]
          if not (in_group[t] and p.pgrp == t.pid) then
            pgroup.signal_pid(p.pid, sig)
            strays[t] = strays[t] + 1
          end
        end
        after(sent, strays)
      end)
    end
    local function step()
      if signal_groups() then
        marked_and_after()
      else
        after_input.schedule(step)
      end
    end
    step()
  end

  --- A child forked between a scan and its parent's SIGKILL is missed by that scan: SIGKILL again, 20 ms apart,
  --- until none is left (`settings.sweep_rounds` rounds at most).
  ---@param ts acp_nvim.Terminal[] the terminals that just had round `rounds` of SIGKILL
  ---@param strays table<acp_nvim.Terminal, integer>
  ---@param rounds integer
  local function sweep(ts, strays, rounds)
    local again = {}
    for _, t in ipairs(ts) do
      if strays[t] > 0 and rounds < settings.sweep_rounds then
        again[#again + 1] = t
      else
        ended(t)
      end
    end
    if #again > 0 then
      vim.defer_fn(function()
        deliver(again, "sigkill", function(sent, found)
          sweep(sent, found, rounds + 1)
        end)
      end, 20)
    end
  end

  --- SIGTERM, then SIGKILL after `settings.kill_grace_ms`, to everything the terminals started; without waiting, and a
  --- signal due while a command is still starting is retried every `settings.start_retry_ms` until it can go.
  ---@param list acp_nvim.Terminal[]
  local function terminate(list)
    local ts = {}
    for _, t in ipairs(list) do
      if not t.ending then
        t.ending = true
        ts[#ts + 1] = t
      end
    end
    if #ts == 0 then
      return
    end
    deliver(ts, "sigterm", function(sent, strays)
      local rest = {}
      for _, t in ipairs(sent) do
        if not running[t] and strays[t] == 0 then
          ended(t)
        else
          rest[#rest + 1] = t
        end
      end
      if #rest == 0 then
        return
      end
      vim.defer_fn(function()
        deliver(rest, "sigkill", function(killed, found)
          sweep(killed, found, 1)
        end)
      end, settings.kill_grace_ms)
    end)
  end

  --- End every command this module started, released ones too, and whatever they left running, waiting
  --- (briefly) until they are gone. For VimLeavePre: once Neovim has exited nothing would send the SIGKILL.
  ---@param grace_ms integer? time given to SIGTERM before SIGKILL (default 500)
  local function kill_all(grace_ms)
    local list = vim.tbl_keys(running)
    if #list == 0 and next(unswept) == nil then
      return
    end
    local function starting(t)
      return running[t] and pgroup.leader_state(t.pid, t.started) == "starting"
    end
    -- A command that has not become its group's leader yet gets a moment to do so (it takes milliseconds).
    vim.wait(200, function()
      for _, t in ipairs(list) do
        if starting(t) then
          return false
        end
      end
      return true
    end, 2)
    local function signal(sig)
      local in_groups = {}
      for _, t in ipairs(list) do
        if running[t] and pgroup.leader_state(t.pid, t.started) == "ready" and pgroup.signal(t.pid, sig) then
          in_groups[t.pid] = true
        end
      end
      for _, p in ipairs(pgroup.marked(unswept)) do
        if not in_groups[p.pgrp] then
          pgroup.signal_pid(p.pid, sig)
        end
      end
    end
    -- Gone also means Neovim has run the job's on_exit, so each terminal has its exit status.
    local function all_gone()
      for _, t in ipairs(list) do
        if running[t] then
          return false
        end
      end
      return #pgroup.marked(unswept) == 0
    end
    signal("sigterm")
    vim.wait(grace_ms or 500, all_gone, 20)
    for _ = 1, settings.sweep_rounds do
      signal("sigkill")
      if vim.wait(400, all_gone, 10) then
        break
      end
    end
    for token in pairs(unswept) do
      unswept[token] = nil
    end
  end

  return { terminate = terminate, kill_all = kill_all }
end

return E

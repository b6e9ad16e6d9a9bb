--- The process groups of the running agents, and the last word on them.
---
--- The Python host stops its agents itself, but not when it is the one that dies (a SIGKILLed host leaves
--- them to init) and not reliably at :qa (Neovim stops the host at exit, possibly before it is done). So the
--- host reports each agent's process group here when it spawns it (`add`) and withdraws it once the group is
--- empty (`remove`); whatever is still recorded is signalled — SIGTERM, then SIGKILL — when the host's job
--- exits and on VimLeavePre. Groups, not pids: launchers (`npx`, `uvx`, `sh -c`) leave the real agent and its
--- helpers as grandchildren in the same group, some of them ignoring SIGTERM.
---
--- When the last agent is gone, the terminals the agents ran (lua/acp_nvim/editor/terminal.lua) are ended too: no
--- agent is left that could read them.
local M = {}

local pgroup = require("acp_nvim.editor.process_groups")

--- Time a group gets between SIGTERM and SIGKILL when the host died (asynchronous: Neovim keeps running).
M.host_exit_grace_ms = 1000
--- Time a group gets between SIGTERM and SIGKILL at VimLeavePre (Neovim waits, so this is the bound).
M.leave_grace_ms = 1000
--- At VimLeavePre, the longest wait for the host to note that Neovim is quitting (a hung host costs this).
M.leave_notice_ms = 500

--- The host knows Neovim is quitting: the agents' end it sees next is routine, not a failure.
local leaving_noted = false

---@type table<integer, string> pgid -> agent name
local groups = {}

--- Record an agent's process group (called by the host when it spawns the agent).
---@param pgid integer
---@param name string?
function M.add(pgid, name)
  groups[pgid] = name or "agent"
end

--- Forget a group the host saw empty. When no agent is left, end the agents' terminals.
---@param pgid integer
function M.remove(pgid)
  groups[pgid] = nil
  if next(groups) == nil then
    M.end_terminals()
  end
end

--- The recorded groups, pgid -> agent name.
---@return table<integer, string>
function M.groups()
  return vim.deepcopy(groups)
end

--- SIGTERM (then SIGKILL after `grace_ms`) every command of the agents' terminals, without waiting.
function M.end_terminals()
  local ok, terminal = pcall(require, "acp_nvim.editor.terminal")
  if not ok then
    return
  end
  -- kill() keeps the terminal readable; released ones are already being killed by release(). All at once:
  -- one scan of /proc for what they left running, not one per terminal.
  terminal.kill_many(terminal.list())
end

--- The host's job ended (crash, SIGKILL, or normal exit): nobody else will stop what it left. Asynchronous,
--- so a dying host never freezes the editor.
function M.host_exited()
  local list = vim.tbl_keys(groups)
  groups = {}
  M.end_terminals()
  if #list == 0 then
    return
  end
  pgroup.terminate_later(list, M.host_exit_grace_ms)
end

--- Neovim is leaving: SIGTERM every recorded group, wait at most `grace_ms` for them to go, SIGKILL the rest.
--- Synchronous on purpose: once Neovim has exited, nothing would be left to send the SIGKILL.
---@param grace_ms integer?
function M.kill_all(grace_ms)
  local list = vim.tbl_keys(groups)
  if #list == 0 then
    return
  end
  -- Told first, so that the host logs the agents' end as the quit it is, not as agents that died.
  local noted = require("acp_nvim.host.api").leaving()
    and vim.wait(M.leave_notice_ms, function()
      return leaving_noted
    end, 5)
  pgroup.terminate(list, grace_ms or M.leave_grace_ms, 500)
  if noted then
    -- Then it gets a moment to see them end (it withdraws each group once it has): Neovim's exit takes the
    -- host with it, and an end it had not seen yet was missing from its log.
    vim.wait(M.leave_notice_ms, function()
      return next(groups) == nil
    end, 5)
  end
  groups = {}
end

--- The host's answer to `acp_leaving`.
function M.leaving_noted()
  leaving_noted = true
end

--- Installs the VimLeavePre hook; idempotent.
function M.setup()
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = vim.api.nvim_create_augroup("acp_nvim_reaper", { clear = true }),
    callback = function()
      M.kill_all()
    end,
  })
end

return M

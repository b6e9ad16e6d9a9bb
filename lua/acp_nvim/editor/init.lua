--- The editor services' set-up: what must run before the agent does anything through the editor.
local M = {}

local did_setup = false

--- Idempotent.
function M.setup()
  if did_setup then
    return
  end
  did_setup = true
  -- Each buffer's file stamp from when it is read: an edit the agent makes on disk itself is told from the
  -- text the buffer was loaded with (fs/follow_disk.lua), however late the agent starts.
  require("acp_nvim.editor.fs.stamp")
  -- No kill on status changes here: terminals belong to their session, and the host kills a session's
  -- terminals when that session ends (acp_nvim/app/editor/terminals.py), so stopping one agent leaves
  -- another's running. What no host is left to end — the last agent gone, the host dead, Neovim leaving —
  -- editor/agent_groups.lua and terminal.lua's VimLeavePre end.
end

return M

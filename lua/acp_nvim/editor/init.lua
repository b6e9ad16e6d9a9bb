--- Glue for what the agent does through the editor (files, terminals, review): :AcpReview, the chat's live
--- terminal output.
local M = {}

local did_hooks = false

---@param action string?
local function review_now(action)
  local review = require("acp_nvim.editor.review")
  local sid = require("acp_nvim.ui.status").get().session_id
  if sid ~= nil and #review.files(sid) == 0 then
    -- The session that made the edits may have ended (:AcpRestart): show what is left anyway.
    sid = nil
  end
  local function say(msg, level)
    vim.notify("acp.nvim: " .. msg, level or vim.log.levels.INFO, { title = "acp.nvim" })
  end
  if action == nil or action == "" then
    if review.quickfix(sid) == 0 then
      say("no agent edits to review")
    end
  elseif action == "accept" then
    say(("accepted %d agent edit(s)"):format(review.accept_all(sid)))
  elseif action == "reject" then
    local ok, errors = review.reject_all(sid)
    if ok then
      say("rejected the agent's edits; the files are back as they were")
    else
      local lines = {}
      for path, e in pairs(errors) do
        lines[#lines + 1] = path .. ": " .. e
      end
      say("could not restore:\n" .. table.concat(lines, "\n"), vim.log.levels.ERROR)
    end
  else
    say(("unknown :AcpReview action %q (accept, reject)"):format(action), vim.log.levels.WARN)
  end
end

--- :AcpReview [accept|reject]: without argument the current session's agent edits in the quickfix list
--- (every session's when none runs); `accept` / `reject` settles all of them.
---@param action string?
function M.review(action)
  -- What the user reviews holds every edit the agent made: those still being followed (a burst of them,
  -- in slices) are waited for, never followed in one hold.
  local follow_disk = require("acp_nvim.editor.fs.follow_disk")
  local queued = follow_disk.pending()
  if queued > 0 then
    vim.notify(
      ("acp.nvim: following %d more agent edit(s) first"):format(queued),
      vim.log.levels.INFO,
      { title = "acp.nvim" }
    )
  end
  follow_disk.when_settled(function()
    review_now(action)
  end)
end

--- Applies the options Lua draws with (again each time the host hands over new ones).
function M.apply_options()
  require("acp_nvim.ui.chat_terminal").max_lines = require("acp_nvim.config").options.chat.terminal_lines
end

--- Installs the hooks once; re-applies the options every time.
function M.setup()
  M.apply_options()
  local chat_terminal = require("acp_nvim.ui.chat_terminal")
  if did_hooks then
    return
  end
  did_hooks = true
  -- Each buffer's file stamp from when it is read: an edit the agent makes on disk itself is told from the
  -- text the buffer was loaded with (fs/follow_disk.lua), however late the agent starts.
  require("acp_nvim.editor.fs.stamp")
  local terminal = require("acp_nvim.editor.terminal")
  local prev_output, prev_exit = terminal.on_output, terminal.on_exit
  terminal.on_output = function(id, data)
    if prev_output then
      prev_output(id, data)
    end
    chat_terminal.on_output(id, data)
  end
  terminal.on_exit = function(id, status)
    if prev_exit then
      prev_exit(id, status)
    end
    chat_terminal.on_exit(id, status)
  end
  require("acp_nvim.ui.chat").on_terminal = chat_terminal.attach
  -- No kill on status changes here: terminals belong to their session, and the host kills a session's
  -- terminals when that session ends (acp_nvim/app/editor/terminals.py), so stopping one agent leaves another's
  -- running. What no host is left to end — the last agent gone, the host dead, Neovim leaving —
  -- host/agent_groups.lua and terminal.lua's VimLeavePre end.
end

return M

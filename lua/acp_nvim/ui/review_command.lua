--- :AcpReview [accept|reject]: the agent's edits of the current session, reviewed or settled at once.
local M = {}

local notify = require("acp_nvim.util.notify")

---@param action string?
local function review_now(action)
  local review = require("acp_nvim.editor.review")
  local sid = require("acp_nvim.ui.status").get().session_id
  if sid ~= nil and #review.files(sid) == 0 then
    -- The session that made the edits may have ended (:AcpRestart): show what is left anyway.
    sid = nil
  end
  if action == nil or action == "" then
    if review.quickfix(sid) == 0 then
      notify.notify("no agent edits to review")
    end
  elseif action == "accept" then
    notify.notify(("accepted %d agent edit(s)"):format(review.accept_all(sid)))
  elseif action == "reject" then
    local ok, errors = review.reject_all(sid)
    if ok then
      notify.notify("rejected the agent's edits; the files are back as they were")
    else
      local lines = {}
      for path, e in pairs(errors) do
        lines[#lines + 1] = path .. ": " .. e
      end
      notify.notify("could not restore:\n" .. table.concat(lines, "\n"), vim.log.levels.ERROR)
    end
  else
    notify.notify(("unknown :AcpReview action %q (accept, reject)"):format(action), vim.log.levels.WARN)
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
    notify.info(("following %d more agent edit(s) first"):format(queued))
  end
  follow_disk.when_settled(function()
    review_now(action)
  end)
end

return M

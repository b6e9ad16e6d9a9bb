--- :AcpReview [accept|reject|comment|comments|remove|send]: the agent's edits of the current session, reviewed
--- or settled at once, and the notes on them (editor/review/notes.lua) listed or sent into the prompt.
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
    notify.notify(
      ("unknown :AcpReview action %q (accept, reject, comment, comments, remove, send)"):format(action),
      vim.log.levels.WARN
    )
  end
end

--- `:[range]AcpReview reject {reason}`: the hunk under the cursor, or every hunk that starts in the range,
--- rejected with the reason (bottom-up, so the rows above stay where they are).
---@param reason string
---@param range integer[]?
local function reject_with_reason(reason, range)
  local review = require("acp_nvim.editor.review")
  local buf = vim.api.nvim_get_current_buf()
  local rows = {}
  if range then
    for _, h in ipairs(review.hunks()) do
      if h.bufnr == buf and h.lnum >= range[1] and h.lnum <= range[2] then
        rows[#rows + 1] = h.lnum - 1
      end
    end
    table.sort(rows, function(a, b)
      return a > b
    end)
  else
    rows[1] = vim.api.nvim_win_get_cursor(0)[1] - 1
  end
  if #rows == 0 then
    notify.warn("no agent hunk in those lines")
  end
  for _, row in ipairs(rows) do
    local ok, err = review.reject_hunk(buf, row, reason)
    if not ok then
      notify.warn(err or "could not reject the hunk")
      return
    end
  end
end

--- The words after the action, and the action's part that needs no hunk to be followed first.
---@param action string
---@param rest string
---@param range integer[]? the command's range, when it was given one
---@return boolean handled
local function notes_action(action, rest, range)
  local notes = require("acp_nvim.editor.review.notes")
  local buf = vim.api.nvim_get_current_buf()
  if action == "comment" then
    notes.comment(buf, range and range[1], range and range[2], rest ~= "" and rest or nil)
  elseif action == "comments" then
    notes.command("list", nil)
  elseif action == "remove" then
    notes.remove(buf)
  elseif action == "send" then
    notes.command("send", nil)
  elseif action == "reject" and (rest ~= "" or range) then
    reject_with_reason(rest, range)
  else
    return false
  end
  return true
end

--- :AcpReview [accept|reject]: without argument the current session's agent edits in the quickfix list
--- (every session's when none runs); `accept` / `reject` settles all of them. The review's notes:
--- `comment [text]` (the hunk under the cursor, or the range's lines), `comments`, `remove`, `send`, and
--- `reject {reason}` (the hunk under the cursor, or the range's hunks).
---@param args string?
---@param range integer[]? {line1, line2} when the command was given a range
function M.review(args, range)
  local action, rest = (args or ""):match("^%s*(%S*)%s*(.-)%s*$")
  if notes_action(action, rest, range) then
    return
  end
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

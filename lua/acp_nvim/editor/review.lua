--- Per-hunk review of the agent's edits.
---
--- Every `fs.write` made for a session is recorded here as hunks: what the lines were before the agent
--- touched them (`old`) and an extmark (namespace `acp_nvim_review`) spanning the lines the agent wrote, so a
--- hunk follows later edits around it. A hunk of pure deletion is a zero-width mark where the lines were.
--- Successive writes to one file merge: the original text is rebuilt from the buffer with every recorded hunk
--- put back, and the hunks are recomputed against it, so rejecting always restores what was there before the
--- agent's first edit in that session.
---
--- Accepting forgets a record and its marks. Rejecting restores the old lines as one undoable edit and writes
--- the file, so the original bytes are back on disk (final-newline state included once a file's last hunk is
--- rejected; a file the agent created is deleted again). A file whose path leads elsewhere than when its edit
--- was recorded (made a link, or a folder on its way) is not written: the reject says so.
---
--- Buffer-local mappings exist while a buffer has hunks: next / previous hunk, accept / reject the hunk under
--- the cursor, accept / reject every hunk of the buffer, comment; `setup{ review = { keymaps = {...} } }` names
--- the keys (declared with their defaults in acp_nvim/app/config/options.py).
---
--- The notes that go back to the agent (comments, rejections and their reasons) are the host's, per session
--- (acp_nvim/app/review/); review/notes.lua shows them, asks their words and reports the facts, and every
--- rejected hunk is reported there.
local M = {}
-- The parts, each requiring only those before it: the marks, the records, recording, rejecting, the keys,
-- moving among hunks, the notes. This module composes them and keeps the keys in step with the records.

local api = vim.api
local opt = require("acp_nvim.editor.answer").opt
local marks = require("acp_nvim.editor.review.marks")
local store = require("acp_nvim.editor.review.store")
local recorder = require("acp_nvim.editor.review.record")
local revert = require("acp_nvim.editor.review.revert")
local keymaps = require("acp_nvim.editor.review.keymaps")
local navigate = require("acp_nvim.editor.review.navigate")
local notes = require("acp_nvim.editor.review.notes")

M.ns = marks.ns
M.sign_ns = marks.sign_ns
M.original_lines = store.original_lines
M.files = store.files
M.has_file = store.has_file
M.hunks = store.hunks
M.quickfix = navigate.quickfix
M.next_hunk = navigate.next_hunk
M.prev_hunk = navigate.prev_hunk

---@param buf integer
local function update_keymaps(buf)
  keymaps.update(buf, M)
end

--- Record the agent's edit of `buf` against `original`, the lines `M.original_lines` gave before it
--- (review/record.lua says what `info` holds); the buffer's keys follow.
---@param buf integer
---@param session_id string
---@param original string[]
---@param info acp_nvim.ReviewRecordInfo?
function M.record(buf, session_id, original, info)
  recorder.record(buf, session_id, original, info)
  update_keymaps(buf)
end

---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
local function drop_file_if_empty(buf, sid, file)
  store.drop_file_if_empty(buf, sid, file)
  update_keymaps(buf)
end

---@param buf integer?
---@param row integer?
---@return integer, integer
local function where(buf, row)
  row = opt(row)
  buf = opt(buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  row = row or (api.nvim_win_get_cursor(0)[1] - 1)
  return buf, --[[@as integer]]
    row
end

--- Accept the hunk at `row` (0-based; default: the cursor's) of `buf` (default: current). Returns true when
--- there was one.
---@param buf integer?
---@param row integer?
---@return boolean
function M.accept_hunk(buf, row)
  local b, r = where(buf, row)
  local sid, file, hunk = store.hunk_at(b, r)
  if not (sid and file and hunk) then
    return false
  end
  marks.unmark(b, hunk)
  file.hunks[hunk.mark] = nil
  file.accepted_any = true
  drop_file_if_empty(b, sid, file)
  return true
end

--- Restore the old text of `items` (bottom-up) in one undo step and write the file; then forget them. The
--- user's edits since the agent's write stay (`revert.replacements`); where one overlaps the agent's change the
--- user is asked first (`keep` is the answer), and nothing changes until then.
---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
---@param items { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
---@param keep boolean?
---@param reason string? the user's words, kept with each rejection for the next prompt (review/notes.lua)
---@return boolean, string?
local function restore(buf, sid, file, items, keep, reason)
  local refusal = revert.refusal(buf, file)
  if refusal then
    return false, refusal
  end
  local replacements, overlapping = revert.replacements(buf, items, keep)
  if overlapping > 0 then
    revert.ask_overlap(buf, file, items, overlapping, function(now, keep_mine)
      restore(buf, sid, file, now, keep_mine, reason)
    end)
    return true, nil
  end
  local agent, noted = {}, {}
  for i, it in ipairs(items) do
    agent[i] = it.hunk.new or api.nvim_buf_get_lines(buf, it.row, it.end_row, false)
    noted[i] = notes.within(buf, it.row, it.end_row)
  end
  local last, unsaved = revert.put_back(buf, sid, file, items, replacements)
  update_keymaps(buf)
  -- Bottom-up: the rows of the hunks above a put-back one did not move. The notes on the agent's lines stay
  -- on the lines put back in their place (replacing lines pushes marks past them).
  for i, it in ipairs(items) do
    notes.put_on(buf, noted[i], it.row, it.row + math.max(#replacements[i], 1) - 1)
    notes.rejected(buf, sid, it.hunk, agent[i], it.row, #replacements[i], reason)
  end
  return revert.write_back(buf, file, last, unsaved)
end

--- Reject the hunk at `row` (0-based; default: the cursor's) of `buf` (default: current): its old lines come
--- back as one undoable edit and the file is written; `reason` goes with the rejection's note to the next
--- prompt (`:AcpReview send`). Returns ok, error message.
---@param buf integer?
---@param row integer?
---@param reason string?
---@return boolean, string?
function M.reject_hunk(buf, row, reason)
  local b, r = where(buf, row)
  local sid, file, hunk = store.hunk_at(b, r)
  if not (sid and file and hunk) then
    return false, "no agent hunk here"
  end
  local s, e = marks.span(b, hunk)
  return restore(b, sid, file, { { hunk = hunk, row = s, end_row = e } }, nil, reason)
end

--- The reason for a reject asked with `prompt` (optional: an empty answer rejects without one; dismissing the
--- question rejects nothing), then `reject(reason)` run on `buf`, if it is still there; its failure said.
---@param buf integer
---@param prompt string
---@param reject fun(reason: string): boolean, string?
local function ask_reason(buf, prompt, reject)
  vim.ui.input({ prompt = prompt }, function(reason)
    if reason ~= nil and api.nvim_buf_is_valid(buf) then
      local ok, err = reject(reason)
      if not ok and err then
        require("acp_nvim.util.notify").warn(err)
      end
    end
  end)
end

--- The reject key: the reason asked first, then the hunk under the cursor rejected.
function M.reject_hunk_asking()
  local buf, row = where(nil, nil)
  if not store.hunk_at(buf, row) then
    require("acp_nvim.util.notify").warn("no agent hunk here")
    return
  end
  ask_reason(buf, "Reason for rejecting (optional): ", function(reason)
    return M.reject_hunk(buf, row, reason)
  end)
end

--- The reject-file key: the reason asked first (as the reject key's), then every hunk of the buffer rejected,
--- each noted with that reason.
function M.reject_file_asking()
  local buf = where(nil, 0)
  if not store.buf_has_hunks(buf) then
    require("acp_nvim.util.notify").warn("no agent hunks in this buffer")
    return
  end
  local name = vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ":t")
  ask_reason(buf, ("Reason for rejecting every hunk of %s (optional): "):format(name), function(reason)
    return M.reject_file(buf, nil, reason)
  end)
end

--- The comment key: a comment on the hunk under the cursor (or, from Visual mode, on the lines selected); on
--- a note: its words edited.
function M.comment()
  local mode = api.nvim_get_mode().mode
  local buf = api.nvim_get_current_buf()
  if mode:match("^[vV\22]") then
    local first, last = vim.fn.line("v"), vim.fn.line(".")
    vim.cmd.normal({ args = { api.nvim_replace_termcodes("<Esc>", true, false, true) }, bang = true })
    notes.comment(buf, math.min(first, last), math.max(first, last))
  else
    notes.comment(buf)
  end
end

--- Accept every hunk of `buf` (default: current), of one session or all.
---@param buf integer?
---@param session_id string?
---@return integer number of hunks accepted
function M.accept_file(buf, session_id)
  local b = where(buf, 0)
  local n = 0
  for _, sid in ipairs(store.session_ids(session_id)) do
    local file = store.sessions[sid] and store.sessions[sid][b]
    if file then
      n = n + vim.tbl_count(file.hunks)
      marks.clear(b, file)
      drop_file_if_empty(b, sid, file)
    end
  end
  return n
end

--- Reject every hunk of `buf` (default: current), of one session or all; the file is written once. `reason`
--- goes with each rejection's note to the next prompt, as `reject_hunk`'s.
---@param buf integer?
---@param session_id string?
---@param reason string?
---@return boolean, string?
function M.reject_file(buf, session_id, reason)
  local b = where(buf, 0)
  for _, sid in ipairs(store.session_ids(session_id)) do
    local file = store.sessions[sid] and store.sessions[sid][b]
    if file then
      local ok, e = restore(b, sid, file, store.bottom_up(b, file), nil, reason)
      if not ok then
        return false, e
      end
    end
  end
  return true, nil
end

--- Accept everything a session (or every session) changed.
---@param session_id string?
---@return integer number of hunks accepted
function M.accept_all(session_id)
  local n = 0
  for _, f in ipairs(M.files(session_id)) do
    n = n + M.accept_file(f.bufnr, f.session_id)
  end
  for _, sid in ipairs(store.session_ids(session_id)) do
    store.sessions[sid] = nil
  end
  return n
end

--- Reject everything a session (or every session) changed. Returns ok and the errors per path.
---@param session_id string?
---@return boolean, table<string, string>
function M.reject_all(session_id)
  local errors = {}
  for _, f in ipairs(M.files(session_id)) do
    local ok, e = M.reject_file(f.bufnr, f.session_id)
    if not ok then
      errors[f.path] = e or "failed"
    end
  end
  return next(errors) == nil, errors
end

--- Forget a session's records without touching any text (e.g. the session ended and the user moved on).
---@param session_id string
function M.forget(session_id)
  local sessions = store.sessions
  for buf, file in pairs(sessions[session_id] or {}) do
    if api.nvim_buf_is_valid(buf) then
      marks.clear(buf, file)
    end
    sessions[session_id][buf] = nil
    update_keymaps(buf)
  end
  sessions[session_id] = nil
end

api.nvim_create_autocmd("BufWipeout", {
  group = api.nvim_create_augroup("acp_nvim_review", { clear = true }),
  callback = function(ev)
    store.wiped(ev.buf)
    keymaps.wiped(ev.buf)
    notes.wiped(ev.buf)
  end,
})
api.nvim_create_autocmd("BufFilePost", {
  group = "acp_nvim_review",
  callback = function(ev)
    notes.renamed(ev.buf)
  end,
})
api.nvim_create_autocmd("BufReadPost", {
  group = "acp_nvim_review",
  callback = function(ev)
    notes.read(ev.buf)
  end,
})

return M

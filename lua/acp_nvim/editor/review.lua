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
--- the cursor, accept / reject every hunk of the buffer; `setup{ review = { keymaps = {...} } }` names the keys
--- (declared with their defaults in acp_nvim/app/config.py).
local M = {}

local api = vim.api
local uv = vim.uv
local opt = require("acp_nvim.editor.answer").opt

M.ns = api.nvim_create_namespace("acp_nvim_review")
--- The signs of hunks that added or changed lines. They are marks of their own: a sign is drawn on every row
--- its mark spans, end row included, while the hunk's mark ends at column 0 of the row after its last line
--- (so that it grows with a line the user adds at the hunk's end).
M.sign_ns = api.nvim_create_namespace("acp_nvim_review_signs")

--- The most old lines shown as virtual text above a hunk.
local MAX_VIRT_LINES = 50

local SIGNS = { add = "+", change = "~", delete = "_" }

---@class acp_nvim.ReviewHunk
---@field mark integer extmark id
---@field old string[] the lines before the agent's edit
---@field new string[]? the lines the agent wrote (what a reject takes back: the user's later edits stay)
---@field after boolean? for a deletion at the end of the buffer: the old lines go after the mark's row
---@field sign integer? extmark id in `M.sign_ns` (hunks that added or changed lines)
---@field tool_call_id string?

---@class acp_nvim.ReviewFile
---@field path string
---@field real string? the file's real path when the agent's first edit was recorded
---@field hunks table<integer, acp_nvim.ReviewHunk>
---@field created boolean the agent created the file
---@field eol boolean 'eol' before the agent's first write
---@field fixeol boolean 'fixeol' before the agent's first write
---@field accepted_any boolean
---@field orig_empty boolean the file was empty (0 bytes) or absent

--- session id -> buffer -> file record
---@type table<string, table<integer, acp_nvim.ReviewFile>>
local sessions = {}

local drop_file_if_empty

---@return table
local function fs()
  return require("acp_nvim.editor.fs")
end

--- Current 0-based [row, end_row) of a hunk; a zero-width range is an insertion point.
---@param buf integer
---@param hunk acp_nvim.ReviewHunk
---@return integer, integer
local function span(buf, hunk)
  local m = api.nvim_buf_get_extmark_by_id(buf, M.ns, hunk.mark, { details = true })
  local row = m[1] or 0
  local end_row = (m[3] and m[3].end_row) or row
  if hunk.after then
    return row + 1, row + 1
  end
  return row, math.max(row, end_row)
end

--- The hunks of `file` ordered bottom-up, with their spans.
---@param buf integer
---@param file acp_nvim.ReviewFile
---@return { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
local function bottom_up(buf, file)
  local list = {}
  for _, h in pairs(file.hunks) do
    local row, end_row = span(buf, h)
    list[#list + 1] = { hunk = h, row = row, end_row = end_row }
  end
  table.sort(list, function(a, b)
    return a.row > b.row
  end)
  return list
end

--- Replace [row, end_row) with `lines` in a list of lines (1-based Lua list, 0-based rows).
---@param lines string[]
---@param row integer
---@param end_row integer
---@param repl string[]
local function splice(lines, row, end_row, repl)
  local out = {}
  for i = 1, row do
    out[#out + 1] = lines[i]
  end
  for _, l in ipairs(repl) do
    out[#out + 1] = l
  end
  for i = end_row + 1, #lines do
    out[#out + 1] = lines[i]
  end
  return out
end

--- The buffer's lines as they were before the session's agent edits (user edits outside hunks kept).
---@param buf integer
---@param session_id string
---@param current string[]? the buffer's lines, when the caller has them (not changed here)
---@return string[]
function M.original_lines(buf, session_id, current)
  local lines = current or fs().buf_lines(buf)
  local file = sessions[session_id] and sessions[session_id][buf]
  if not file then
    return lines
  end
  for _, it in ipairs(bottom_up(buf, file)) do
    lines = splice(lines, it.row, math.min(it.end_row, #lines), it.hunk.old)
  end
  return lines
end

---@param buf integer
---@return boolean
local function buf_has_hunks(buf)
  for _, files in pairs(sessions) do
    if files[buf] and next(files[buf].hunks) then
      return true
    end
  end
  return false
end

local keymap_names = { "next_hunk", "prev_hunk", "accept_hunk", "reject_hunk", "accept_file", "reject_file" }
local keymap_desc = {
  next_hunk = "ACP: next agent hunk",
  prev_hunk = "ACP: previous agent hunk",
  accept_hunk = "ACP: accept agent hunk",
  reject_hunk = "ACP: reject agent hunk",
  accept_file = "ACP: accept agent edits in file",
  reject_file = "ACP: reject agent edits in file",
}

---@type table<integer, table<string, string>>
local mapped = {}

---@param buf integer
local function update_keymaps(buf)
  if not api.nvim_buf_is_valid(buf) then
    mapped[buf] = nil
    return
  end
  if buf_has_hunks(buf) then
    if mapped[buf] then
      return
    end
    mapped[buf] = {}
    local keymaps = require("acp_nvim.config").options.review.keymaps
    for _, name in ipairs(keymap_names) do
      local lhs = keymaps[name]
      if lhs then
        vim.keymap.set("n", lhs, function()
          M[name]()
        end, { buffer = buf, desc = keymap_desc[name], nowait = true })
        mapped[buf][name] = lhs
      end
    end
  elseif mapped[buf] then
    for _, lhs in pairs(mapped[buf]) do
      pcall(vim.keymap.del, "n", lhs, { buffer = buf })
    end
    mapped[buf] = nil
  end
end

---@param buf integer
---@param hunk acp_nvim.ReviewHunk
local function unmark(buf, hunk)
  pcall(api.nvim_buf_del_extmark, buf, M.ns, hunk.mark)
  if hunk.sign then
    pcall(api.nvim_buf_del_extmark, buf, M.sign_ns, hunk.sign)
  end
end

---@param buf integer
---@param file acp_nvim.ReviewFile
local function clear_marks(buf, file)
  for _, hunk in pairs(file.hunks) do
    unmark(buf, hunk)
  end
  file.hunks = {}
end

--- Place the mark of one xdiff hunk of (original -> current).
---@param buf integer
---@param sa integer
---@param ca integer
---@param sb integer
---@param cb integer
---@param original string[]
---@return acp_nvim.ReviewHunk
local function place(buf, sa, ca, sb, cb, original)
  local old = {}
  for k = 0, ca - 1 do
    old[#old + 1] = original[sa + k]
  end
  local virt
  if #old > 0 then
    virt = {}
    for k = 1, math.min(#old, MAX_VIRT_LINES) do
      virt[#virt + 1] = { { old[k], "AcpNvimReviewOld" } }
    end
    if #old > MAX_VIRT_LINES then
      virt[#virt + 1] =
        { { ("… %d more removed lines"):format(#old - MAX_VIRT_LINES), "AcpNvimReviewOld" } }
    end
  end
  local hunk = { old = old }
  if cb > 0 then
    local kind = ca == 0 and "Add" or "Change"
    hunk.mark = api.nvim_buf_set_extmark(buf, M.ns, sb - 1, 0, {
      end_row = sb - 1 + cb,
      end_col = 0,
      hl_group = "AcpNvimReview" .. kind,
      hl_eol = true,
      virt_lines = virt,
      virt_lines_above = true,
    })
    hunk.sign = api.nvim_buf_set_extmark(buf, M.sign_ns, sb - 1, 0, {
      end_row = sb - 2 + cb,
      end_col = 0,
      sign_text = ca == 0 and SIGNS.add or SIGNS.change,
      sign_hl_group = "AcpNvimReview" .. kind,
    })
    return hunk
  end
  -- A deletion: the old lines went between new lines sb and sb + 1.
  local count = api.nvim_buf_line_count(buf)
  local row, after = sb, false
  if sb >= count and not (count == 1 and #fs().buf_lines(buf) == 0) then
    row, after = count - 1, true
  end
  hunk.after = after or nil
  hunk.mark = api.nvim_buf_set_extmark(buf, M.ns, math.min(row, count - 1), 0, {
    sign_text = SIGNS.delete,
    sign_hl_group = "AcpNvimReviewDelete",
    virt_lines = virt,
    virt_lines_above = not after,
  })
  return hunk
end

--- Identity of a hunk's content, to tell a hunk a later write left alone.
---@param old string[]
---@param new string[]
---@return string
local function hunk_key(old, new)
  return table.concat(old, "\n") .. "\0" .. #old .. "\0" .. table.concat(new, "\n") .. "\0" .. #new
end

---@class acp_nvim.ReviewRecordInfo
---@field tool_call_id string?
---@field created boolean?
---@field eol boolean?
---@field fixeol boolean?
---@field lines string[]?
---@field hunks integer[][]?

--- Record the agent's edit of `buf`: `original` are the lines from `M.original_lines` taken before the edit;
--- `info.lines` the buffer's lines now, when the caller has them; `info.hunks` the hunks of original -> now,
--- when the caller has them in a shape of its own (a merge's conflicts as one hunk each).
---@param buf integer
---@param session_id string
---@param original string[]
---@param info acp_nvim.ReviewRecordInfo?
function M.record(buf, session_id, original, info)
  info = info or {}
  sessions[session_id] = sessions[session_id] or {}
  local file = sessions[session_id][buf]
  local previous = {}
  if file then
    for _, h in pairs(file.hunks) do
      local row, end_row = span(buf, h)
      previous[hunk_key(h.old, api.nvim_buf_get_lines(buf, row, end_row, false))] = h.tool_call_id
    end
    clear_marks(buf, file)
  else
    local name = api.nvim_buf_get_name(buf)
    file = {
      path = name,
      -- The file the agent edited, as the host judged it: a reject writes there or nowhere.
      real = uv.fs_realpath(name),
      hunks = {},
      created = info.created == true,
      eol = info.eol ~= false,
      fixeol = info.fixeol ~= false,
      accepted_any = false,
      orig_empty = #original == 0,
    }
    sessions[session_id][buf] = file
  end
  local current = info.lines or fs().buf_lines(buf)
  for _, d in ipairs(info.hunks or fs().diff(original, current)) do
    local hunk = place(buf, d[1], d[2], d[3], d[4], original)
    -- A hunk this write did not touch keeps the tool call that made it.
    hunk.new = vim.list_slice(current, d[3], d[3] + d[4] - 1)
    local key = hunk_key(hunk.old, hunk.new)
    hunk.tool_call_id = previous[key] or info.tool_call_id
    file.hunks[hunk.mark] = hunk
  end
  drop_file_if_empty(buf, session_id, file)
end

---@param session_id string?
---@return string[]
local function session_ids(session_id)
  session_id = opt(session_id)
  if session_id ~= nil then
    return { session_id }
  end
  return vim.tbl_keys(sessions)
end

--- The files changed by a session (or all sessions): { bufnr, path, hunks = count, created, session_id }.
---@param session_id string?
---@return table[]
function M.files(session_id)
  local out = {}
  for _, sid in ipairs(session_ids(session_id)) do
    for buf, file in pairs(sessions[sid] or {}) do
      if api.nvim_buf_is_valid(buf) then
        out[#out + 1] = {
          bufnr = buf,
          path = file.path,
          hunks = vim.tbl_count(file.hunks),
          created = file.created,
          session_id = sid,
        }
      end
    end
  end
  table.sort(out, function(a, b)
    return a.path < b.path
  end)
  return out
end

--- Every hunk of a session (or all), top-down per file: { bufnr, path, lnum (1-based), end_lnum, added,
--- removed, old, tool_call_id, session_id, id }.
---@param session_id string?
---@return table[]
function M.hunks(session_id)
  local out = {}
  for _, f in ipairs(M.files(session_id)) do
    local file = sessions[f.session_id][f.bufnr]
    local list = bottom_up(f.bufnr, file)
    for i = #list, 1, -1 do
      local it = list[i]
      out[#out + 1] = {
        bufnr = f.bufnr,
        path = f.path,
        lnum = it.row + 1,
        end_lnum = it.end_row,
        added = it.end_row - it.row,
        removed = #it.hunk.old,
        old = it.hunk.old,
        tool_call_id = it.hunk.tool_call_id,
        session_id = f.session_id,
        id = it.hunk.mark,
      }
    end
  end
  return out
end

--- Fill the quickfix list with the session's hunks and open it. Returns the number of entries.
---@param session_id string?
---@return integer
function M.quickfix(session_id)
  session_id = opt(session_id)
  local items = {}
  for _, h in ipairs(M.hunks(session_id)) do
    items[#items + 1] = {
      bufnr = h.bufnr,
      lnum = math.min(h.lnum, math.max(1, api.nvim_buf_line_count(h.bufnr))),
      col = 1,
      text = ("agent edit: +%d -%d"):format(h.added, h.removed),
    }
  end
  vim.fn.setqflist(
    {},
    " ",
    { title = "ACP review" .. (session_id and (": " .. session_id) or ""), items = items }
  )
  if #items > 0 then
    vim.cmd("botright copen")
  end
  return #items
end

--- The hunk of `buf` at 0-based `row`: session id, file, hunk.
---@param buf integer
---@param row integer
---@return string?, acp_nvim.ReviewFile?, acp_nvim.ReviewHunk?
local function hunk_at(buf, row)
  for sid, files in pairs(sessions) do
    local file = files[buf]
    if file then
      for _, h in pairs(file.hunks) do
        local r, e = span(buf, h)
        if h.after then
          r, e = r - 1, r
        end
        if row >= r and row < math.max(e, r + 1) then
          return sid, file, h
        end
      end
    end
  end
  return nil, nil, nil
end

---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
function drop_file_if_empty(buf, sid, file)
  if next(file.hunks) == nil then
    sessions[sid][buf] = nil
    if next(sessions[sid]) == nil then
      sessions[sid] = nil
    end
  end
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
  local sid, file, hunk = hunk_at(b, r)
  if not (sid and file and hunk) then
    return false
  end
  unmark(b, hunk)
  file.hunks[hunk.mark] = nil
  file.accepted_any = true
  drop_file_if_empty(b, sid, file)
  return true
end

--- What rejecting `hunk` puts in its place, whose lines are now `current`: the agent's change taken back, the
--- user's later edits kept (three-way: the agent's lines as base, the user's now, the old ones). nil when an
--- edit of the user's overlaps the agent's change, unless `keep` says which wins there (true: the user's).
---@param hunk acp_nvim.ReviewHunk
---@param current string[]
---@param keep boolean?
---@return string[]?
local function reverted(hunk, current, keep)
  if hunk.new == nil or vim.deep_equal(current, hunk.new) then
    return hunk.old
  end
  local merge = require("acp_nvim.editor.fs.merge")
  local result = merge.merge(hunk.new, current, hunk.old)
  if #result.conflicts == 0 then
    return result.lines
  elseif keep == nil then
    return nil
  elseif keep then
    return merge.merge(hunk.new, hunk.old, current, nil, true).lines
  end
  return merge.merge(hunk.new, current, hunk.old, nil, true).lines
end

local restore

--- Ask whether the user's edits that overlap the agent's hunks being rejected stay, then reject.
---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
---@param items table[]
---@param count integer hunks whose lines the user edited over the agent's
local function ask_overlap(buf, sid, file, items, count)
  local choices = {
    { id = "keep", label = "Keep my edits there (reject the rest of the agent's change)" },
    { id = "old", label = "Put the old lines back there too (`u` brings my edits back)" },
  }
  vim.ui.select(choices, {
    prompt = ("You edited %d of the agent's hunk(s) in %s since it wrote them:"):format(
      count,
      vim.fn.fnamemodify(file.path, ":~:.")
    ),
    format_item = function(c)
      return c.label
    end,
  }, function(choice)
    if not (choice and api.nvim_buf_is_valid(buf)) then
      return
    end
    -- Where the hunks are now: the buffer may have changed while the question was open.
    local now = {}
    for _, it in ipairs(items) do
      if file.hunks[it.hunk.mark] then
        local row, end_row = span(buf, it.hunk)
        now[#now + 1] = { hunk = it.hunk, row = row, end_row = end_row }
      end
    end
    table.sort(now, function(a, b)
      return a.row > b.row
    end)
    restore(buf, sid, file, now, choice.id == "keep")
  end)
end

--- Restore the old text of `items` (bottom-up) in one undo step and write the file; then forget them. The
--- user's edits since the agent's write stay (`reverted`); where one overlaps the agent's change the user is
--- asked first (`keep` is the answer), and nothing changes until then.
---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
---@param items { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
---@param keep boolean?
---@return boolean, string?
function restore(buf, sid, file, items, keep)
  local now = uv.fs_realpath(file.path)
  if file.real and now and now ~= file.real then
    -- Made a link (or a folder on its way) since: writing would go to whatever it leads to now.
    local msg = ("%s now leads to %s, not to the file the agent edited (%s); not rejecting the agent's edit there"):format(
      file.path,
      now,
      file.real
    )
    vim.notify("acp: " .. msg, vim.log.levels.WARN)
    return false, msg
  end
  local why = fs().disk_conflict(buf, api.nvim_buf_get_name(buf))
  if why then
    local msg = ("%s %s; not rejecting the agent's edit over it"):format(file.path, why)
    vim.notify("acp: " .. msg, vim.log.levels.WARN)
    return false, msg
  end
  local replacements, overlapping = {}, 0
  for i, it in ipairs(items) do
    local lines = reverted(it.hunk, api.nvim_buf_get_lines(buf, it.row, it.end_row, false), keep)
    if lines == nil then
      overlapping = overlapping + 1
    end
    replacements[i] = lines
  end
  if overlapping > 0 then
    ask_overlap(buf, sid, file, items, overlapping)
    return true, nil
  end
  -- A buffer with unsaved edits (merged with the agent's, fs/merge.lua) keeps them unsaved.
  local unsaved = vim.bo[buf].modified and fs().buf_lines(buf) or nil
  fs().break_undo(buf)
  api.nvim_buf_call(buf, function()
    for i, it in ipairs(items) do
      if i > 1 then
        pcall(vim.cmd, "undojoin")
      end
      local empty = #fs().buf_lines(buf) == 0
      if empty then
        api.nvim_buf_set_lines(buf, 0, -1, false, replacements[i])
      else
        api.nvim_buf_set_lines(buf, it.row, it.end_row, false, replacements[i])
      end
      unmark(buf, it.hunk)
      file.hunks[it.hunk.mark] = nil
    end
  end)
  local last = next(file.hunks) == nil
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  if last and not file.accepted_any and file.orig_empty and #lines == 1 and lines[1] == "" then
    fs().make_empty(buf)
  end
  if last and not file.accepted_any then
    vim.bo[buf].eol = file.eol
    -- A file that had no final newline must not get one from 'fixeol'.
    vim.bo[buf].fixeol = file.eol and file.fixeol
  end
  drop_file_if_empty(buf, sid, file)
  if last and file.created and not file.accepted_any and #fs().buf_lines(buf) == 0 then
    -- The agent made the file: the state before it is no file at all.
    local ok, rm_err = os.remove(file.path)
    if not ok then
      return false, rm_err
    end
    vim.bo[buf].modified = false
    if vim.fn.bufwinid(buf) == -1 and not vim.bo[buf].buflisted then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
    return true, nil
  end
  local werr
  if unsaved then
    werr = require("acp_nvim.editor.fs.unsaved").write_reverted(buf, unsaved)
  else
    werr = fs().write_buffer(buf, false)
  end
  if werr then
    vim.notify("acp: " .. werr, vim.log.levels.ERROR)
    return false, werr
  end
  return true, nil
end

--- Reject the hunk at `row` (0-based; default: the cursor's) of `buf` (default: current): its old lines come
--- back as one undoable edit and the file is written. Returns ok, error message.
---@param buf integer?
---@param row integer?
---@return boolean, string?
function M.reject_hunk(buf, row)
  local b, r = where(buf, row)
  local sid, file, hunk = hunk_at(b, r)
  if not (sid and file and hunk) then
    return false, "no agent hunk here"
  end
  local s, e = span(b, hunk)
  return restore(b, sid, file, { { hunk = hunk, row = s, end_row = e } })
end

--- Accept every hunk of `buf` (default: current), of one session or all.
---@param buf integer?
---@param session_id string?
---@return integer number of hunks accepted
function M.accept_file(buf, session_id)
  local b = where(buf, 0)
  local n = 0
  for _, sid in ipairs(session_ids(session_id)) do
    local file = sessions[sid] and sessions[sid][b]
    if file then
      n = n + vim.tbl_count(file.hunks)
      clear_marks(b, file)
      drop_file_if_empty(b, sid, file)
    end
  end
  return n
end

--- Reject every hunk of `buf` (default: current), of one session or all; the file is written once.
---@param buf integer?
---@param session_id string?
---@return boolean, string?
function M.reject_file(buf, session_id)
  local b = where(buf, 0)
  for _, sid in ipairs(session_ids(session_id)) do
    local file = sessions[sid] and sessions[sid][b]
    if file then
      local ok, e = restore(b, sid, file, bottom_up(b, file))
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
  for _, sid in ipairs(session_ids(session_id)) do
    sessions[sid] = nil
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

---@param forward boolean
---@return boolean
local function jump(forward)
  local buf = api.nvim_get_current_buf()
  local cur = api.nvim_win_get_cursor(0)[1] - 1
  local rows = {}
  for _, files in pairs(sessions) do
    if files[buf] then
      for _, h in pairs(files[buf].hunks) do
        local r = span(buf, h)
        rows[#rows + 1] = h.after and r - 1 or r
      end
    end
  end
  table.sort(rows)
  local target
  if forward then
    for _, r in ipairs(rows) do
      if r > cur then
        target = r
        break
      end
    end
    target = target or rows[1]
  else
    for i = #rows, 1, -1 do
      if rows[i] < cur then
        target = rows[i]
        break
      end
    end
    target = target or rows[#rows]
  end
  if not target then
    return false
  end
  local last = api.nvim_buf_line_count(buf) - 1
  api.nvim_win_set_cursor(0, { math.min(target, last) + 1, 0 })
  return true
end

--- Move the cursor to the next agent hunk of the current buffer (wrapping).
---@return boolean
function M.next_hunk()
  return jump(true)
end

--- Move the cursor to the previous agent hunk of the current buffer (wrapping).
---@return boolean
function M.prev_hunk()
  return jump(false)
end

--- Forget a session's records without touching any text (e.g. the session ended and the user moved on).
---@param session_id string
function M.forget(session_id)
  for buf, file in pairs(sessions[session_id] or {}) do
    if api.nvim_buf_is_valid(buf) then
      clear_marks(buf, file)
    end
    sessions[session_id][buf] = nil
    update_keymaps(buf)
  end
  sessions[session_id] = nil
end

api.nvim_create_autocmd("BufWipeout", {
  group = api.nvim_create_augroup("acp_nvim_review", { clear = true }),
  callback = function(ev)
    for sid, files in pairs(sessions) do
      if files[ev.buf] then
        files[ev.buf] = nil
        if next(files) == nil then
          sessions[sid] = nil
        end
      end
    end
    mapped[ev.buf] = nil
  end,
})

return M

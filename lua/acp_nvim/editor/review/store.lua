--- The review's records (editor/review.lua): session id -> buffer -> file, each file's hunks, and what the
--- rest of the review and its callers ask of them.
local M = {}

local api = vim.api
local opt = require("acp_nvim.editor.answer").opt
local edit = require("acp_nvim.editor.fs.edit")
local marks = require("acp_nvim.editor.review.marks")

---@class acp_nvim.ReviewHunk
---@field mark integer extmark id
---@field old string[] the lines before the agent's edit
---@field new string[]? the lines the agent wrote (what a reject takes back: the user's later edits stay)
---@field after boolean? for a deletion at the end of the buffer: the old lines go after the mark's row
---@field sign integer? extmark id in `marks.sign_ns` (hunks that added or changed lines)
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
M.sessions = {}
local sessions = M.sessions

--- The hunks of `file` ordered bottom-up, with their spans.
---@param buf integer
---@param file acp_nvim.ReviewFile
---@return { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
function M.bottom_up(buf, file)
  local list = {}
  for _, h in pairs(file.hunks) do
    local row, end_row = marks.span(buf, h)
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
  local lines = current or edit.buf_lines(buf)
  local file = sessions[session_id] and sessions[session_id][buf]
  if not file then
    return lines
  end
  for _, it in ipairs(M.bottom_up(buf, file)) do
    lines = splice(lines, it.row, math.min(it.end_row, #lines), it.hunk.old)
  end
  return lines
end

---@param buf integer
---@return boolean
function M.buf_has_hunks(buf)
  for _, files in pairs(sessions) do
    if files[buf] and next(files[buf].hunks) then
      return true
    end
  end
  return false
end

---@param session_id string?
---@return string[]
function M.session_ids(session_id)
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
  for _, sid in ipairs(M.session_ids(session_id)) do
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

--- Whether a session's review holds `buf`.
---@param session_id string
---@param buf integer
---@return boolean
function M.has_file(session_id, buf)
  return sessions[session_id] ~= nil and sessions[session_id][buf] ~= nil
end

--- Every hunk of a session (or all), top-down per file: { bufnr, path, lnum (1-based), end_lnum, added,
--- removed, old, tool_call_id, session_id, id }.
---@param session_id string?
---@return table[]
function M.hunks(session_id)
  local out = {}
  for _, f in ipairs(M.files(session_id)) do
    local file = sessions[f.session_id][f.bufnr]
    local list = M.bottom_up(f.bufnr, file)
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

--- The hunk of `buf` at 0-based `row`: session id, file, hunk.
---@param buf integer
---@param row integer
---@return string?, acp_nvim.ReviewFile?, acp_nvim.ReviewHunk?
function M.hunk_at(buf, row)
  for sid, files in pairs(sessions) do
    local file = files[buf]
    if file then
      for _, h in pairs(file.hunks) do
        local r, e = marks.span(buf, h)
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

--- Forgets the record of a file left with no hunk (the buffer's keymaps are the caller's to update).
---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
function M.drop_file_if_empty(buf, sid, file)
  if next(file.hunks) == nil then
    sessions[sid][buf] = nil
    if next(sessions[sid]) == nil then
      sessions[sid] = nil
    end
  end
end

--- A wiped-out buffer's records go with it.
---@param buf integer
function M.wiped(buf)
  for sid, files in pairs(sessions) do
    if files[buf] then
      files[buf] = nil
      if next(files) == nil then
        sessions[sid] = nil
      end
    end
  end
end

return M

--- Recording the agent's edit of a buffer as hunks (editor/review.lua): successive writes to one file merge
--- against the original text, and a hunk a later write left alone keeps the tool call that made it.
local M = {}

local api = vim.api
local uv = vim.uv
local edit = require("acp_nvim.editor.fs.edit")
local marks = require("acp_nvim.editor.review.marks")
local store = require("acp_nvim.editor.review.store")

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

--- Record the agent's edit of `buf`: `original` are the lines from `store.original_lines` taken before the
--- edit; `info.lines` the buffer's lines now, when the caller has them; `info.hunks` the hunks of original ->
--- now, when the caller has them in a shape of its own (a merge's conflicts as one hunk each).
---@param buf integer
---@param session_id string
---@param original string[]
---@param info acp_nvim.ReviewRecordInfo?
function M.record(buf, session_id, original, info)
  info = info or {}
  local sessions = store.sessions
  sessions[session_id] = sessions[session_id] or {}
  local file = sessions[session_id][buf]
  local previous = {}
  if file then
    for _, h in pairs(file.hunks) do
      local row, end_row = marks.span(buf, h)
      previous[hunk_key(h.old, api.nvim_buf_get_lines(buf, row, end_row, false))] = h.tool_call_id
    end
    marks.clear(buf, file)
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
  local current = info.lines or edit.buf_lines(buf)
  for _, d in ipairs(info.hunks or edit.diff(original, current)) do
    local hunk = marks.place(buf, d[1], d[2], d[3], d[4], original)
    -- A hunk this write did not touch keeps the tool call that made it.
    hunk.new = vim.list_slice(current, d[3], d[3] + d[4] - 1)
    local key = hunk_key(hunk.old, hunk.new)
    hunk.tool_call_id = previous[key] or info.tool_call_id
    file.hunks[hunk.mark] = hunk
  end
  store.drop_file_if_empty(buf, session_id, file)
end

return M

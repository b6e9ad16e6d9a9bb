--- Rejecting hunks (editor/review.lua): whether the file may be written back, what each hunk's lines become
--- (the agent's change taken back, the user's later edits kept), the question when they overlap, the old lines
--- put back as one undo step and the file written (or removed, when the agent created it).
local M = {}

local notify = require("acp_nvim.util.notify")

local api = vim.api
local uv = vim.uv
local edit = require("acp_nvim.editor.fs.edit")
local stamp = require("acp_nvim.editor.fs.stamp")
local save = require("acp_nvim.editor.fs.save")
local marks = require("acp_nvim.editor.review.marks")
local store = require("acp_nvim.editor.review.store")

--- Why the agent's edit of `file` must not be taken back now, said to the user; nil when it may.
---@param buf integer
---@param file acp_nvim.ReviewFile
---@return string?
function M.refusal(buf, file)
  local now = uv.fs_realpath(file.path)
  if file.real and now and now ~= file.real then
    -- Made a link (or a folder on its way) since: writing would go to whatever it leads to now.
    local msg = ("%s now leads to %s, not to the file the agent edited (%s); not rejecting the agent's edit there"):format(
      file.path,
      now,
      file.real
    )
    notify.warn(msg)
    return msg
  end
  local why = stamp.disk_conflict(buf, api.nvim_buf_get_name(buf))
  if why then
    local msg = ("%s %s; not rejecting the agent's edit over it"):format(file.path, why)
    notify.warn(msg)
    return msg
  end
  return nil
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

--- What each of `items` becomes (nil where the user's edits overlap the agent's and `keep` says nothing), and
--- how many overlap.
---@param buf integer
---@param items { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
---@param keep boolean?
---@return (string[]?)[], integer
function M.replacements(buf, items, keep)
  local replacements, overlapping = {}, 0
  for i, it in ipairs(items) do
    local lines = reverted(it.hunk, api.nvim_buf_get_lines(buf, it.row, it.end_row, false), keep)
    if lines == nil then
      overlapping = overlapping + 1
    end
    replacements[i] = lines
  end
  return replacements, overlapping
end

--- Ask whether the user's edits that overlap the agent's hunks being rejected stay; `reject` gets the hunks
--- where they are then (bottom-up) and the answer (true: keep the user's edits).
---@param buf integer
---@param file acp_nvim.ReviewFile
---@param items table[]
---@param count integer hunks whose lines the user edited over the agent's
---@param reject fun(now: { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[], keep: boolean)
function M.ask_overlap(buf, file, items, count, reject)
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
        local row, end_row = marks.span(buf, it.hunk)
        now[#now + 1] = { hunk = it.hunk, row = row, end_row = end_row }
      end
    end
    table.sort(now, function(a, b)
      return a.row > b.row
    end)
    reject(now, choice.id == "keep")
  end)
end

--- Put `replacements` in place of `items` (bottom-up) in one undo step and forget those hunks. Returns whether
--- they were the file's last, and the buffer's lines when it held unsaved edits (merged with the agent's,
--- fs/merge.lua), which stay unsaved.
---@param buf integer
---@param sid string
---@param file acp_nvim.ReviewFile
---@param items { hunk: acp_nvim.ReviewHunk, row: integer, end_row: integer }[]
---@param replacements string[][]
---@return boolean last, string[]? unsaved
function M.put_back(buf, sid, file, items, replacements)
  local unsaved = vim.bo[buf].modified and edit.buf_lines(buf) or nil
  edit.break_undo(buf)
  api.nvim_buf_call(buf, function()
    for i, it in ipairs(items) do
      if i > 1 then
        pcall(vim.cmd, "undojoin")
      end
      local empty = #edit.buf_lines(buf) == 0
      if empty then
        api.nvim_buf_set_lines(buf, 0, -1, false, replacements[i])
      else
        api.nvim_buf_set_lines(buf, it.row, it.end_row, false, replacements[i])
      end
      marks.unmark(buf, it.hunk)
      file.hunks[it.hunk.mark] = nil
    end
  end)
  local last = next(file.hunks) == nil
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  if last and not file.accepted_any and file.orig_empty and #lines == 1 and lines[1] == "" then
    edit.make_empty(buf)
  end
  if last and not file.accepted_any then
    vim.bo[buf].eol = file.eol
    -- A file that had no final newline must not get one from 'fixeol'.
    vim.bo[buf].fixeol = file.eol and file.fixeol
  end
  store.drop_file_if_empty(buf, sid, file)
  return last, unsaved
end

--- After `put_back`: the original bytes back on disk, or no file when the agent created it.
---@param buf integer
---@param file acp_nvim.ReviewFile
---@param last boolean
---@param unsaved string[]?
---@return boolean, string?
function M.write_back(buf, file, last, unsaved)
  if last and file.created and not file.accepted_any and #edit.buf_lines(buf) == 0 then
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
    werr = save.write_buffer(buf, false)
  end
  if werr then
    notify.error(werr)
    return false, werr
  end
  return true, nil
end

return M

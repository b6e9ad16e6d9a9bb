--- A checkpoint's restore carried into the loaded buffers, and its diff as a quickfix list. The host decides
--- what is restored and writes the files (acp_nvim/app/checkpoints/restore.py); this module only makes the
--- buffers show it:
---   * `before`: a loaded buffer with unsaved edits keeps its file's text as it is now, the merge's base;
---   * `after`: a clean buffer of a restored file shows the restored text as minimal line edits in one undo
---     step (cursor, view, marks and folds stay) and takes the file as its own (no "changed on disk"
---     warning); a buffer with unsaved edits is merged three-way (base: the file before the restore, ours:
---     the buffer, theirs: the restored file), never overwritten; a clean buffer of a file the restore
---     removed is deleted;
---   * `quickfix`: the files a restore would change, each opened as a diff with `<CR>` in the list.
local M = {}

local notify = require("acp_nvim.util.notify")

local api = vim.api
local uv = vim.uv

local edit = require("acp_nvim.editor.fs.edit")
local path_of = require("acp_nvim.editor.fs.path")
local text = require("acp_nvim.editor.fs.disk_text")

--- path -> the file's lines before the restore, for the buffers with unsaved edits
---@type table<string, string[]>
local bases = {}

---@param paths string[]
local function before(paths)
  for _, path in ipairs(paths) do
    local buf = path_of.find_buffer(path)
    if buf and vim.bo[buf].modified then
      bases[path] = text.disk_lines(path) or {}
    end
  end
  return true
end

---@param buf integer
---@param path string
---@param theirs string[]
---@param eol boolean
local function show_clean(buf, path, theirs, eol)
  local bo = vim.bo[buf]
  edit.break_undo(buf)
  local current = edit.buf_lines(buf)
  edit.apply_hunks(buf, edit.diff(current, theirs), theirs)
  edit.set_file_eol(buf, theirs, eol)
  bo.modified = false
  pcall(require("acp_nvim.editor.fs.save").adopt_file, buf, uv.fs_realpath(path) or path)
  require("acp_nvim.editor.fs.stamp").record(buf)
end

--- A clean buffer of a file that is no text to diff (a NUL byte, too large): read again as Neovim reads it,
--- the views of its windows kept.
---@param buf integer
local function reload(buf)
  local unsaved = require("acp_nvim.editor.fs.unsaved")
  local views = unsaved.save_views(buf)
  api.nvim_buf_call(buf, function()
    vim.cmd("silent keepjumps edit!")
  end)
  unsaved.restore_views(views)
  require("acp_nvim.editor.fs.stamp").record(buf)
end

---@param path string
---@return integer conflicts
local function show(path)
  local buf = path_of.find_buffer(path)
  if not buf or not api.nvim_buf_is_loaded(buf) then
    return 0
  end
  local theirs, eol = text.disk_lines(path)
  local modified = vim.bo[buf].modified
  if theirs == nil then
    if uv.fs_lstat(path) == nil and not modified then
      -- Created since the checkpoint, removed by the restore: its clean buffer goes with it.
      pcall(api.nvim_buf_delete, buf, {})
    elseif not modified then
      reload(buf)
    else
      notify.warn(
        ("%s was restored on disk; its buffer has unsaved edits and is not text to merge"):format(path)
      )
    end
    return 0
  end
  if not modified then
    show_clean(buf, path, theirs, eol == true)
    return 0
  end
  local base = bases[path]
  if base == nil then
    return 0
  end
  local merge = require("acp_nvim.editor.fs.merge")
  -- Its conflicts are told in the restore's report, with the others (a message per file said them twice).
  local res = merge.apply_to_buffer(buf, base, theirs, { eol = eol == true, label = "checkpoint" })
  return res.conflicts
end

---@param paths string[]
---@return {conflicts: integer, conflicted: string[]}
local function after(paths)
  local conflicts, conflicted = 0, {}
  for _, path in ipairs(paths) do
    local ok, found = pcall(show, path)
    if ok then
      conflicts = conflicts + found
      if found > 0 then
        table.insert(conflicted, path)
      end
    else
      notify.error(("cannot show the restored %s: %s"):format(path, tostring(found)))
    end
  end
  bases = {}
  return { conflicts = conflicts, conflicted = conflicted }
end

--- `<CR>` in the quickfix window of a checkpoint's diff: the entry's file beside the checkpoint's version.
function M.open_diff()
  local list = vim.fn.getqflist({ context = 0, idx = 0, items = 0 })
  local context = type(list.context) == "table" and list.context or {}
  local idx = vim.fn.line(".")
  local entry = (context.acp_checkpoint and context.entries or {})[idx]
  if entry == nil then
    vim.cmd([[execute "normal! \<CR>"]])
    return
  end
  vim.cmd("cc " .. idx)
  if entry.theirs ~= vim.NIL and entry.theirs ~= nil and entry.shown ~= entry.theirs then
    vim.cmd("vertical diffsplit " .. vim.fn.fnameescape(entry.theirs))
    vim.bo.readonly = true
  end
end

---@param payload {title: string, items: table[]}
local function quickfix(payload)
  local items, entries = {}, {}
  for n, item in ipairs(payload.items) do
    items[n] = { filename = item.filename, lnum = item.lnum, text = item.text }
    entries[n] = { shown = item.filename, theirs = item.theirs }
  end
  vim.fn.setqflist({}, " ", {
    title = payload.title,
    items = items,
    context = { acp_checkpoint = true, entries = entries },
  })
  vim.cmd("botright copen")
  vim.keymap.set("n", "<CR>", M.open_diff, { buffer = true, desc = "acp.nvim: open as a diff" })
  return #items
end

--- The host's entry point: `action` "before" | "after" | "quickfix".
---@param action string
---@param payload table
---@return any
function M.run(action, payload)
  if action == "before" then
    return before(payload.paths)
  elseif action == "after" then
    return after(payload.paths)
  end
  return quickfix(payload)
end

return M

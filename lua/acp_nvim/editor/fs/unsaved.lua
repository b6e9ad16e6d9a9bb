--- Agent writes onto a buffer with unsaved edits of the user's: the file on disk gets the agent's text (or,
--- for a rejected review hunk, the text with that hunk's old lines back) while the buffer keeps the user's
--- edits, unsaved and undoable, and Neovim takes the file as the buffer's own (no W11/W12, no "changed
--- since reading it" prompt at the next `:w`). The merge itself is `acp_nvim.fs.merge`.
local M = {}

local edit = require("acp_nvim.editor.fs.edit")
local merge = require("acp_nvim.editor.fs.merge")

local api = vim.api

--- The cursor and view of every window showing `buf`, to put back after the text changed around them.
---@param buf integer
---@return table<integer, table>
function M.save_views(buf)
  local views = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    views[win] = api.nvim_win_call(win, vim.fn.winsaveview)
  end
  return views
end

---@param views table<integer, table>
function M.restore_views(views)
  for win, view in pairs(views) do
    if api.nvim_win_is_valid(win) then
      pcall(api.nvim_win_call, win, function()
        vim.fn.winrestview(view)
      end)
    end
  end
end

---@type { buf: integer, hunks: integer[][], lines: string[] }?
local pending

--- Runs under `:lockmarks` (see `as_file_text`); public only for that `:lua` call.
function M._apply_pending()
  local job = assert(pending)
  pending = nil
  edit.apply_hunks(job.buf, job.hunks, job.lines)
end

---@param buf integer
---@param from string[]
---@param to string[]
local function swap(buf, from, to)
  local hunks = edit.diff(from, to)
  if #hunks == 0 then
    return
  end
  pending = { buf = buf, hunks = hunks, lines = to }
  api.nvim_buf_call(buf, function()
    -- Part of the merge's undo step: `u` goes from the merged text straight back to the user's.
    pcall(vim.cmd, "undojoin")
    vim.cmd("lockmarks lua require('acp_nvim.editor.fs.unsaved')._apply_pending()")
  end)
end

--- Run `fn` while the text of `buf` is `file_lines` (the file's text on disk, or about to be), then put its
--- text back as it was, both changes joined to the current undo step. Neovim takes a file as a buffer's own
--- only while the two hold the same text (`:write`, or `:checktime` finding that only the time changed);
--- this is how a buffer whose unsaved text differs from the file gets the file's stamps, so that neither a
--- W11/W12 warning nor a "changed since reading it" prompt at the next `:w` greets the user. The lines that
--- differ are the user's unsaved ones: marks on them are kept (`:lockmarks`), and so are cursors and views;
--- other extmarks on them (diagnostics, ...) collapse to the line where they were.
--- `known`: the buffer's lines now and whether `fn` leaves the buffer's lines alone (no BufWritePre), when
--- the caller knows: each fetch of a 100,000-line buffer takes ~10 ms.
---@param buf integer
---@param file_lines string[]
---@param fn fun(): string?, string?
---@param known { lines: string[], fn_keeps_lines: boolean }?
---@return string?, string? what `fn` returned
local function as_file_text(buf, file_lines, fn, known)
  local views = M.save_views(buf)
  local now = known and known.lines or edit.buf_lines(buf)
  swap(buf, now, file_lines)
  local ok, e1, e2 = pcall(fn)
  local after = (known and known.fn_keeps_lines) and file_lines or edit.buf_lines(buf)
  swap(buf, after, now)
  M.restore_views(views)
  if not ok then
    return tostring(e1), nil
  end
  return e1, e2
end

--- Make the file on disk, which holds `file_lines`, the buffer's own again (Neovim's stamps, as after a
--- `:write`), the buffer keeping its text (and staying modified when that differs from the file).
---@param buf integer
---@param file_lines string[]
function M.adopt(buf, file_lines)
  local target = vim.uv.fs_realpath(api.nvim_buf_get_name(buf))
  if not target then
    return
  end
  as_file_text(buf, file_lines, function()
    require("acp_nvim.editor.fs.save").adopt_file(buf, target)
    vim.bo[buf].modified = false
    require("acp_nvim.editor.fs.stamp").record(buf)
    return nil
  end)
end

--- The text of the file behind `buf` as Neovim would load it (its 'fileencoding' decoded, a BOM and CRLF
--- line ends dropped), as lines; `{}` when there is no file.
---@param buf integer
---@param path string
---@return string[] lines, boolean eol
function M.disk_lines(buf, path)
  local text = require("acp_nvim.editor.fs.open").read_all(path)
  if text == nil then
    return {}, false
  end
  local bo = vim.bo[buf]
  if bo.fileencoding ~= "" and bo.fileencoding ~= "utf-8" then
    text = vim.iconv(text, bo.fileencoding, "utf-8") or text
  end
  if text:sub(1, 3) == "\239\187\191" then
    text = text:sub(4)
  end
  local lines, eol = edit.to_lines(text)
  return lines, eol
end

--- Whether the file behind `buf` holds exactly `content` (as Neovim would load it).
---@param buf integer
---@param path string
---@param content string
---@return boolean
function M.disk_holds(buf, path, content)
  local lines, eol = M.disk_lines(buf, path)
  local want, want_eol = edit.to_lines(content)
  return eol == want_eol and vim.deep_equal(lines, want)
end

---@class acp_nvim.OverUnsavedOpts
---@field eol boolean
---@field label string?
---@field autocmds boolean?
---@field ours string[]?
---@field buf_lines string[]?
---@field text acp_nvim.JoinedLines? `theirs_lines` as the agent sent them

--- `fs/write_text_file` onto `buf`, which has unsaved edits: the agent's `theirs_lines` are merged into the
--- buffer (one undo step) and written as the file, so the agent reads back what it wrote from disk, while
--- the user's unsaved edits stay in the buffer, unsaved (the buffer stays modified) and undoable. Conflicts
--- are marked once the text is final.
---@param buf integer
---@param base_lines string[] the file's text on disk (the agent's write has not touched it)
---@param theirs_lines string[]
---@param opts acp_nvim.OverUnsavedOpts
---@return { lines: string[], conflicts: integer, touched: integer, hunks: integer }?, string? error, string? kind
function M.write_over_unsaved(buf, base_lines, theirs_lines, opts)
  local result, touched, hunks = merge.apply(buf, base_lines, theirs_lines, opts)
  local werr, wkind = as_file_text(buf, theirs_lines, function()
    local lines_now = opts.autocmds ~= true and theirs_lines or nil
    return require("acp_nvim.editor.fs.save").write_buffer(buf, opts.autocmds == true, lines_now, opts.text)
  end, { lines = result.lines, fn_keeps_lines = opts.autocmds ~= true })
  if werr then
    return nil, werr, wkind
  end
  require("acp_nvim.editor.fs.conflict").mark(buf, result.conflicts)
  return {
    lines = result.lines,
    conflicts = #result.conflicts,
    conflict_lines = result.conflicts,
    touched = touched,
    hunks = hunks,
  },
    nil,
    nil
end

--- Write the file of `buf` after the review put back the old text of some agent hunks in it while it holds
--- unsaved edits of the user's (`before`: its lines until then): the disk gets the same change (the
--- agent's lines there give way to their old text) and the user's other unsaved edits stay unsaved in the
--- buffer. Where the lines put back are the user's own (a conflict's hunk), the disk gets those lines.
---@param buf integer
---@param before string[]
---@return string? error
function M.write_reverted(buf, before)
  local after = edit.buf_lines(buf)
  local disk = M.disk_lines(buf, api.nvim_buf_get_name(buf))
  local target = merge.merge(before, disk, after, nil, true).lines
  return (
    as_file_text(buf, target, function()
      return require("acp_nvim.editor.fs.save").write_buffer(buf, false, target)
    end)
  )
end

return M

--- The agent's `fs/read_text_file` and `fs/write_text_file`, served from Neovim's buffers.
---
--- Every function answers one agent request with a plain table, either
---   { ok = true, ... }                                  (the result)
--- or
---   { ok = false, fact = "<what was found>", detail = "..."?, kind = "..."? }
--- so the Python host makes one `exec_lua` call per request and never sees a Lua error. The host validates
--- each request before it comes here and decides the error an agent gets for each fact
--- (`acp_nvim/app/editor/fs_rules.py`); the facts are "path_changed", "too_large", "not_regular" (with `kind`),
--- "changed_on_disk", "not_modifiable", "readonly", "load_failed", "changed_since_check", "write_failed".
---
--- Reads (`M.read`):
---   * a loaded buffer for the file (matched by real path, so symlinks and other spellings count) answers with
---     its current text, unsaved edits included; otherwise `{ ok = true, no_buffer = true }`: the host reads
---     the files no buffer holds (`acp_nvim/client/files/disk.py`), so their text never passes through Neovim;
---   * line endings are always "\n" (a CRLF file's buffer has 'fileformat' dos);
---   * without `line`/`limit` the answer is the exact text, with the final newline if the file has one;
---   * with `line` and/or `limit` the answer is the selected lines joined by "\n" without a trailing newline
---     (as the reference client does); a `line` past the end gives "" and `limit = 0` gives "".
---
--- Writes (`M.write`) go through the file's buffer (a hidden, unlisted one is loaded when the file has none),
--- as minimal line edits in one undo step, then the buffer is saved atomically (`M.write_buffer`): Neovim's
--- `:write` of the buffer to a temp file next to the file (so the bytes are what `:write` makes of
--- 'fileformat', 'eol', 'fileencoding', 'bomb'), fsync, the file's permission bits, rename over the file (the
--- real path: a symlink stays a symlink). A reader or a crash sees the old bytes or the new, never a truncated
--- file. Neovim is then told the new file is the buffer's own without reloading it (see `adopt_file` in `save.lua`).
--- BufWrite* autocmds are not run (formatters must not change what the agent wrote); `opts.autocmds = true`
--- runs BufWritePre before the save (it may still change the buffer) and BufWritePost after; BufWriteCmd is
--- never used. After a successful write `User AcpNvimFileWritten` fires with `data = { path, bufnr }`. A
--- failed write leaves the file untouched, removes the temp file, and `M.write` undoes its buffer edit.
---
--- A write onto a buffer with unsaved edits (or conflicts, or a text that differs from the session's view of it)
--- is merged with them three-way instead (`acp_nvim.fs.merge`), against the session's view (`fs.view`) when the
--- host names one: the disk gets the agent's text, the buffer keeps the user's edits, unsaved, and overlaps
--- become conflicts (a buffer's conflicts are merged again, never nested: `fs.conflict.sides`).
---
--- A buffer whose file changed on disk since Neovim last read or wrote it is never overwritten: the agent gets
--- an error and the user a warning (both from the host), the buffer is untouched. Unless the disk already holds
--- exactly the text the agent asks to write (opencode writes the disk itself and sends the request without
--- waiting): then the write succeeds, a clean buffer takes the text and a buffer with unsaved edits is merged
--- against the disk's text from before the agent's write, as the disk watch kept it (`fs/disk_watch.lua`).
--- The module keeps its own record of each buffer's file stamp (autocmds installed when the module is first
--- required), because Neovim's timestamp is not readable and `:checktime` would consume the change.
---
--- The parts live in `acp_nvim.editor.fs.*`: `path` (buffer lookup), `open` (opens that follow no new symlink),
--- `read`, `stamp` (the conflict watch), `edit` (hunks applied to the buffer) and `save` (the atomic write);
--- this module answers the two requests and is the one other modules use.
local M = {}

local result = require("acp_nvim.editor.answer")
local path_of = require("acp_nvim.editor.fs.path")
local read = require("acp_nvim.editor.fs.read")
local stamp = require("acp_nvim.editor.fs.stamp")
local edit = require("acp_nvim.editor.fs.edit")
local save = require("acp_nvim.editor.fs.save")
local open = require("acp_nvim.editor.fs.open")

M.find_buffer = path_of.find_buffer
--- The agent's edits of `path` on disk still queued (fs/follow_disk.lua) are followed first: a request finds
--- the file's buffer as its earlier edits left it.
---@param path any
local function settle_follows(path)
  if type(path) == "string" then
    require("acp_nvim.editor.fs.follow_disk").settle(path)
  end
end

---@param path string
---@param line integer?
---@param limit integer?
---@param opts table?
---@return table
function M.read(path, line, limit, opts)
  settle_follows(path)
  return read.read(path, line, limit, opts)
end
M.disk_conflict = stamp.disk_conflict
M.buf_lines = edit.buf_lines
M.diff = edit.diff
M.apply_hunks = edit.apply_hunks
M.make_empty = edit.make_empty
M.break_undo = edit.break_undo
M.write_buffer = save.write_buffer

local api = vim.api
local uv = vim.uv

local refused, opt = result.refused, result.opt

---@param kind string? the second value of a failed `save` call
---@return string
local function failure_fact(kind)
  -- The path no longer leads where the host checked it (found right before the temp file or the rename).
  return kind == save.CHANGED and "changed_since_check" or "write_failed"
end

--- Whether the review keeps hunks of `buf` for the session (its extmarks live in the buffer).
---@param review table
---@param buf integer
---@param session_id string
---@return boolean
local function reviewed(review, buf, session_id)
  for _, f in ipairs(review.files(session_id)) do
    if f.bufnr == buf then
      return true
    end
  end
  return false
end

--- Unload a buffer this write loaded and nobody needs: a hidden buffer must not hold the file's text after
--- the write. Unloaded, not wiped: its number stays valid for the caller and a later load reuses it.
---@param buf integer
local function release(buf)
  pcall(api.nvim_buf_delete, buf, { unload = true, force = true })
end

--- Tell autocmds (`User AcpNvimFileWritten`) that the agent's write of `path`, which no buffer holds, is on
--- disk (the host writes such files itself).
---@param path string
function M.file_written(path)
  pcall(api.nvim_exec_autocmds, "User", {
    pattern = "AcpNvimFileWritten",
    modeline = false,
    data = { path = path },
  })
end

--- The file's buffer, loading a hidden one when there is none. Returns buf, created_buffer.
---@param path string
---@return integer?, boolean, string?
local function buffer_for_write(path)
  local buf = M.find_buffer(path)
  if buf then
    return buf, false, nil
  end
  buf = vim.fn.bufadd(path)
  -- No swapfile: loading must never stop at an E325 ATTENTION prompt nobody sees.
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  local ok, lerr = pcall(vim.fn.bufload, buf)
  if not ok or not api.nvim_buf_is_loaded(buf) then
    return nil, true, ("cannot load %s: %s"):format(path, tostring(lerr))
  end
  stamp.record(buf)
  return buf, true, nil
end

---@class acp_nvim.FsWriteOpts
---@field session_id string?
---@field tool_call_id string?
---@field autocmds boolean?
---@field review boolean?
---@field checked_path boolean?
---@field view string? the session whose view of the file (`fs.view`) the write derives from and updates

--- Answer `fs/write_text_file` through the file's buffer. The host validates the request (a checked real
--- path, text without NUL bytes) and writes the files no buffer holds that are too large for one itself.
---@param path string absolute path
---@param content string the whole new text of the file
---@param opts acp_nvim.FsWriteOpts?
---@return table { ok = true, bufnr, lines_touched, hunks, created, had_unsaved_edits } or a fact
local function write(path, content, opts)
  settle_follows(path)
  opts = opt(opts) or {}
  local p = path
  if opts.checked_path then
    local changed = open.refuse_if_changed(p)
    if changed then
      return changed
    end
  end
  -- Decided by stat, which never opens: a FIFO would block the load until someone opens its other end.
  local kind = open.not_regular(p)
  if kind then
    return refused("not_regular", { kind = kind })
  end
  local file_existed = uv.fs_stat(p) ~= nil

  local unsaved = require("acp_nvim.editor.fs.unsaved")
  local existing = M.find_buffer(p)
  -- For a buffer with unsaved edits, the disk's text is read before its stamp is compared: when the stamp
  -- still matches after the read, that text is the one Neovim last read or wrote, the base of the merge. Read
  -- after the check, it could already be an agent's own write (opencode writes the disk while this request
  -- is on its way), which as a base would turn the agent's change into the user's.
  local disk_before
  -- The agent wrote exactly this text to the disk itself before asking: no conflict, the buffer follows it.
  local agent_wrote_it = false
  local conflict = require("acp_nvim.editor.fs.conflict")
  local view_mod = require("acp_nvim.editor.fs.view")
  local view = opt(opts.view) and existing and view_mod.get(opts.view, existing) or nil
  if existing then
    -- With the session's view, the view is the base: the disk's text is not needed (~20 ms for 100,000 lines).
    if not view and (vim.bo[existing].modified or conflict.has(existing)) then
      disk_before = unsaved.disk_lines(existing, p)
    end
    local why = M.disk_conflict(existing, api.nvim_buf_get_name(existing))
    if why then
      -- Read again: the text read above may be from before the change the stamp shows.
      if not unsaved.disk_holds(existing, p, content) then
        return refused("changed_on_disk", { detail = why })
      end
      agent_wrote_it = true
    end
    if not vim.bo[existing].modifiable then
      return refused("not_modifiable")
    end
    if vim.bo[existing].readonly then
      return refused("readonly")
    end
  end

  local buf, created_buf, lerr = buffer_for_write(p)
  if not buf then
    return refused("load_failed", { detail = lerr or ("cannot load " .. p) })
  end
  local bo = vim.bo[buf]
  local old = view_mod.buffer_lines(opt(opts.view), buf)
  -- Merged with the buffer: unsaved edits, conflicts left to resolve, or a text that differs from what the
  -- agent last saw (the user saved or undid edits since).
  local sides = conflict.sides(buf)
  local had_unsaved = bo.modified
  local merging = had_unsaved or sides ~= nil or (view ~= nil and not vim.deep_equal(view, old))
  local new, eol, crlf = edit.to_lines(content)
  -- The bytes of the agent's text, for the save (`save.plain_bytes`): with CRLF they are not the lines'.
  local joined = not crlf and { bytes = content, eol = eol } or nil
  -- A merge finds its own hunks (against the base): a diff of the buffer and the agent's text would be spent.
  local hunks = merging and {} or M.diff(old, new)
  local old_eol, old_fixeol = bo.eol, bo.fixeol
  local eol_changed = (#new > 0) and (edit.buf_writes_eol(buf) ~= eol)

  if #hunks == 0 and not eol_changed and not merging and file_existed then
    if created_buf then
      release(buf)
    elseif opt(opts.view) then
      view_mod.wrote(opts.view, buf, new, true)
    end
    return { ok = true, bufnr = buf, lines_touched = 0, hunks = 0, created = false, had_unsaved_edits = false }
  end

  local review = opts.review ~= false and opt(opts.session_id) and require("acp_nvim.editor.review") or nil
  local original = review and review.original_lines(buf, opts.session_id, old) or nil

  local seq_before = edit.undo_seq(buf)
  local touched, lines_now, conflicts, review_hunks, werr, wkind
  -- The edits applied to the buffer: the agent's text, or its merge with the user's unsaved edits.
  local hunk_count = #hunks
  if merging then
    -- The user's unsaved edits are merged with the agent's text, never replaced by it (fs/merge.lua).
    local merge = require("acp_nvim.editor.fs.merge")
    local watch = require("acp_nvim.editor.fs.disk_watch")
    -- The text the agent's write derives from: what it last saw of the file, else the disk as Neovim last read
    -- or wrote it (when the agent already wrote the disk, the text before its write, as the disk watch kept it).
    local base = view or disk_before
    if not view and agent_wrote_it then
      base = watch.base(buf)
    end
    local ours
    if base and sides then
      -- Conflicts are merged again, never nested: the user's side against the agent's new text, over the base
      -- each conflict stands for; elsewhere the base is what the agent saw (a saved buffer's markers on disk
      -- are not: then the agent's side).
      if not view and vim.deep_equal(base, old) then
        base = sides.theirs
      end
      base = merge.merge(sides.theirs, sides.base, base, nil, true).lines
      ours = sides.ours
    end
    if base == nil then
      -- Never a guess over the user's text: the disk has the agent's text already, and the agent's tool call
      -- (whose snapshot knows the text before) brings it into the buffer when it ends (fs/follow_disk.lua).
      return {
        ok = true,
        bufnr = buf,
        lines_touched = 0,
        hunks = 0,
        created = false,
        had_unsaved_edits = had_unsaved,
      }
    end
    if not file_existed and crlf then
      bo.fileformat = "dos"
    end
    local merged
    merged, werr, wkind = unsaved.write_over_unsaved(
      buf,
      base,
      new,
      { eol = eol, autocmds = opts.autocmds == true, ours = ours, buf_lines = old, text = joined }
    )
    if merged and watch.base(buf) then
      -- The disk holds the agent's text now: the base of the next edit no tool call names.
      watch.set_base(buf, new)
    end
    if merged then
      touched, conflicts, hunk_count = merged.touched, merged.conflicts, merged.hunks
      lines_now = opts.autocmds ~= true and merged.lines or nil
      if lines_now and conflicts > 0 and original then
        review_hunks = merge.review_hunks(original, lines_now, merged.conflict_lines)
      end
    end
  else
    M.break_undo(buf)
    touched = M.apply_hunks(buf, hunks, new)
    edit.set_file_eol(buf, new, eol)
    if not file_existed and crlf then
      bo.fileformat = "dos"
    end
    -- Unless BufWritePre runs (a formatter may change the buffer), the buffer's lines are now `new`.
    lines_now = opts.autocmds ~= true and new or nil
    werr, wkind = M.write_buffer(buf, opts.autocmds == true, lines_now, joined)
  end
  if werr then
    -- The agent is told it failed, so the buffer must not keep its text.
    if #hunks > 0 or merging then
      if edit.undo_seq(buf) ~= seq_before then
        api.nvim_buf_call(buf, function()
          vim.cmd("silent undo")
        end)
      end
      local now = M.buf_lines(buf)
      if not vim.deep_equal(now, old) then
        M.break_undo(buf)
        M.apply_hunks(buf, M.diff(now, old), old)
      end
    end
    bo.eol, bo.fixeol = old_eol, old_fixeol
    if created_buf then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
    return refused(failure_fact(wkind), { detail = werr })
  end

  if opt(opts.view) then
    -- Without a merge or BufWritePre, the buffer now holds the agent's lines.
    view_mod.wrote(opts.view, buf, new, not merging and lines_now ~= nil)
  end
  if review and original then
    review.record(buf, opts.session_id, original, {
      tool_call_id = opt(opts.tool_call_id),
      created = not file_existed,
      eol = old_eol,
      fixeol = old_fixeol,
      lines = lines_now,
      hunks = review_hunks,
    })
  end
  if created_buf and not (review and reviewed(review, buf, opts.session_id)) then
    release(buf)
  end
  if conflicts and conflicts > 0 then
    require("acp_nvim.editor.fs.merge").tell_conflicts(p, conflicts)
  end
  return {
    ok = true,
    bufnr = buf,
    lines_touched = touched,
    hunks = hunk_count,
    created = not file_existed,
    had_unsaved_edits = had_unsaved,
    conflicts = conflicts or 0,
  }
end

--- `write` with the Lua collector paused: a write of a 100,000-line file makes three lists of its lines, and
--- a collection cycle run in the middle of them traverses all three on this request's time (up to ~50 ms
--- on a loaded machine); resumed after, the incremental collector spreads that work over later steps.
---@param path string absolute path
---@param content string the whole new text of the file
---@param opts acp_nvim.FsWriteOpts?
---@return table { ok = true, bufnr, lines_touched, hunks, created, had_unsaved_edits } or a fact
function M.write(path, content, opts)
  -- PUC Lua 5.1 has no "isrunning": the collector is then left alone.
  local known, running = pcall(collectgarbage, "isrunning")
  local collecting = known and running == true
  if collecting then
    collectgarbage("stop")
  end
  local ok, answer = pcall(write, path, content, opts)
  if collecting then
    collectgarbage("restart")
  end
  if not ok then
    error(answer, 0)
  end
  return answer
end

return M

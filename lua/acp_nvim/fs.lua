--- The agent's `fs/read_text_file` and `fs/write_text_file`, served from Neovim's buffers.
---
--- Every function answers one agent request with a plain table, either
---   { ok = true, ... }                                  (the result)
--- or
---   { ok = false, code = <JSON-RPC code>, message = "...", data = {...}? }
--- so the Python host makes one `exec_lua` call per request and never sees a Lua error.
---
--- Reads (`M.read`):
---   * a loaded buffer for the file (matched by real path, so symlinks and other spellings count) answers with
---     its current text, unsaved edits included; otherwise the file is read from disk without loading a buffer;
---   * line endings are always "\n" (CRLF on disk is folded);
---   * without `line`/`limit` the answer is the exact text, with the final newline if the file has one;
---   * with `line` and/or `limit` the answer is the selected lines joined by "\n" without a trailing newline
---     (as the reference client does); a `line` past the end gives "" and `limit = 0` gives "".
---
--- Writes (`M.write`) go through the file's buffer (a hidden, unlisted one is loaded when the file has none),
--- as minimal line edits in one undo step, then the buffer is saved atomically (`M.write_buffer`): Neovim's
--- `:write` of the buffer to a temp file next to the file (so the bytes are what `:write` makes of
--- 'fileformat', 'eol', 'fileencoding', 'bomb'), fsync, the file's permission bits, rename over the file (the
--- real path: a symlink stays a symlink). A reader or a crash sees the old bytes or the new, never a truncated
--- file. Neovim is then told the new file is the buffer's own without reloading it (see `adopt_file` in `fs/save.lua`).
--- BufWrite* autocmds are not run (formatters must not change what the agent wrote); `opts.autocmds = true`
--- runs BufWritePre before the save (it may still change the buffer) and BufWritePost after; BufWriteCmd is
--- never used. After a successful write `User AcpNvimFileWritten` fires with `data = { path, bufnr }`. A
--- failed write leaves the file untouched, removes the temp file, and `M.write` undoes its buffer edit.
---
--- A write onto a buffer with unsaved edits is merged with them three-way instead (`acp_nvim.fs.merge`): the
--- disk gets the agent's text, the buffer keeps the user's edits, unsaved, and overlaps become conflicts.
---
--- A buffer whose file changed on disk since Neovim last read or wrote it is never overwritten: the agent gets
--- an error and the user a warning, the buffer is untouched. The module keeps its own record of each
--- buffer's file stamp (autocmds installed when the module is first required), because Neovim's timestamp is
--- not readable and `:checktime` would consume the change.
---
--- The parts live in `acp_nvim.fs.*`: `path` (checks, buffer lookup), `read`, `stamp` (the conflict watch),
--- `edit` (hunks applied to the buffer) and `save` (the atomic write); this module answers the two requests
--- and is the one other modules use.
local M = {}

local result = require("acp_nvim.result")
local path_of = require("acp_nvim.fs.path")
local read = require("acp_nvim.fs.read")
local stamp = require("acp_nvim.fs.stamp")
local edit = require("acp_nvim.fs.edit")
local save = require("acp_nvim.fs.save")
local open = require("acp_nvim.fs.open")

M.ERR_INVALID_PARAMS = result.ERR_INVALID_PARAMS
M.ERR_INTERNAL = result.ERR_INTERNAL
M.ERR_NOT_FOUND = result.ERR_NOT_FOUND

M.find_buffer = path_of.find_buffer
M.read = read.read
M.disk_conflict = stamp.disk_conflict
M.buf_lines = edit.buf_lines
M.diff = edit.diff
M.apply_hunks = edit.apply_hunks
M.make_empty = edit.make_empty
M.break_undo = edit.break_undo
M.write_buffer = save.write_buffer

local api = vim.api
local uv = vim.uv

local err, opt = result.err, result.opt

--- Default of `opts.max_buffer_bytes` of writes (`setup{ fs = { max_buffer_bytes } }`).
M.default_max_buffer_bytes = 4 * 1024 * 1024

---@param kind string? the second value of a failed `save` call
---@return integer
local function failure_code(kind)
  -- A path that no longer leads where the host checked is refused like a path the check refuses.
  return kind == save.CHANGED and M.ERR_INVALID_PARAMS or M.ERR_INTERNAL
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
--- disk: written here, or by the host itself.
---@param path string
function M.file_written(path)
  pcall(api.nvim_exec_autocmds, "User", {
    pattern = "AcpNvimFileWritten",
    modeline = false,
    data = { path = path },
  })
end

--- Write `content` to `p`, a file no buffer holds, straight to disk without loading it (too large for a
--- buffer): atomic like `write_buffer`, not reviewable (the review lives in a buffer). With `done`, the bytes
--- are written in libuv's thread pool and `done(answer)` gets the answer; else it is returned.
---@param p string
---@param content string
---@param existed boolean
---@param done fun(answer: table)?
---@return table?
local function write_without_buffer(p, content, existed, done)
  local dir = vim.fs.dirname(p)
  local ferr = save.ensure_folder(dir)
  if ferr then
    return err(M.ERR_INTERNAL, ferr, { uri = path_of.file_uri(p) })
  end
  local target = uv.fs_realpath(p) or vim.fs.joinpath(uv.fs_realpath(dir) or dir, vim.fs.basename(p))
  ---@param werr string?
  ---@param kind string?
  ---@return table
  local function answer(werr, kind)
    if werr then
      return err(failure_code(kind), werr, { uri = path_of.file_uri(p) })
    end
    M.file_written(p)
    return { ok = true, lines_touched = 0, hunks = 0, created = not existed, had_unsaved_edits = false }
  end
  if done then
    save.write_file(target, content, function(werr, kind)
      done(answer(werr, kind))
    end)
    return nil
  end
  return answer(save.write_file(target, content))
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

--- Answer `fs/write_text_file`.
---@param path string absolute path
---@param content string the whole new text of the file
---@param opts { session_id: string?, tool_call_id: string?, autocmds: boolean?, review: boolean?, checked_path: boolean?, max_buffer_bytes: integer? }?
---@param done fun(answer: table)? for a write that goes to disk without a buffer: its bytes are then written
---  in libuv's thread pool (Neovim goes on meanwhile), `done` gets the answer and nothing is returned
---@return table? { ok = true, bufnr, lines_touched, hunks, created, had_unsaved_edits } or an error table
function M.write(path, content, opts, done)
  opts = opt(opts) or {}
  local p, e = path_of.check_path(path)
  if not p then
    return e --[[@as table]]
  end
  if type(content) ~= "string" then
    return err(M.ERR_INVALID_PARAMS, "content must be a string")
  end
  if content:find("\0", 1, true) then
    return err(M.ERR_INVALID_PARAMS, ("refusing to write binary content (NUL byte) to %s"):format(p))
  end
  if opts.checked_path then
    local refused = open.refuse_if_changed(p, "write")
    if refused then
      return refused
    end
  end
  -- Decided by stat, which never opens: a FIFO would block the load until someone opens its other end.
  local kind = open.not_regular(p)
  if kind == "directory" then
    return err(M.ERR_INVALID_PARAMS, ("%s is a directory"):format(p))
  elseif kind then
    return err(M.ERR_INVALID_PARAMS, ("%s is not a regular file (%s); refusing to write it"):format(p, kind))
  end
  local st = uv.fs_stat(p)
  local file_existed = st ~= nil

  local existing = M.find_buffer(p)
  if existing then
    local why = M.disk_conflict(existing, api.nvim_buf_get_name(existing))
    if why then
      local msg = ("%s %s; not overwriting it with the agent's write. Reload (:e) or save (:w) it first."):format(
        p,
        why
      )
      vim.notify("acp: " .. msg, vim.log.levels.WARN)
      return err(M.ERR_INTERNAL, msg, { uri = path_of.file_uri(p), reason = "changed_on_disk" })
    end
    if not vim.bo[existing].modifiable then
      return err(M.ERR_INTERNAL, ("the buffer of %s is not modifiable"):format(p))
    end
    if vim.bo[existing].readonly then
      return err(M.ERR_INTERNAL, ("the buffer of %s is read-only"):format(p))
    end
  end

  local max_buffer = opt(opts.max_buffer_bytes) or M.default_max_buffer_bytes
  if not existing and (#content > max_buffer or (st and st.size > max_buffer)) then
    -- Loading it would hold Neovim for as long as the read and the line split take, and keep its text.
    return write_without_buffer(p, content, file_existed, done)
  end

  local buf, created_buf, lerr = buffer_for_write(p)
  if not buf then
    return err(M.ERR_INTERNAL, lerr or ("cannot load " .. p))
  end
  local bo = vim.bo[buf]
  local had_unsaved = bo.modified
  local old = M.buf_lines(buf)
  local new, eol, crlf = edit.to_lines(content)
  local hunks = M.diff(old, new)
  local old_eol, old_fixeol = bo.eol, bo.fixeol
  local eol_changed = (#new > 0) and (edit.buf_writes_eol(buf) ~= eol)

  if #hunks == 0 and not eol_changed and not had_unsaved and file_existed then
    if created_buf then
      release(buf)
    end
    return { ok = true, bufnr = buf, lines_touched = 0, hunks = 0, created = false, had_unsaved_edits = false }
  end

  local review = opts.review ~= false and opt(opts.session_id) and require("acp_nvim.review") or nil
  local original = review and review.original_lines(buf, opts.session_id, old) or nil

  local seq_before = edit.undo_seq(buf)
  local touched, lines_now, conflicts, review_hunks, werr, wkind
  -- The edits applied to the buffer: the agent's text, or its merge with the user's unsaved edits.
  local hunk_count = #hunks
  if had_unsaved then
    -- The user's unsaved edits are merged with the agent's text, never replaced by it (fs/merge.lua).
    local merge = require("acp_nvim.fs.merge")
    local unsaved = require("acp_nvim.fs.unsaved")
    if not file_existed and crlf then
      bo.fileformat = "dos"
    end
    local merged
    merged, werr, wkind = unsaved.write_over_unsaved(
      buf,
      unsaved.disk_lines(buf, p),
      new,
      { eol = eol, autocmds = opts.autocmds == true }
    )
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
    if #new > 0 then
      bo.eol = eol
      if not eol then
        bo.fixeol = false
      end
    end
    if not file_existed and crlf then
      bo.fileformat = "dos"
    end
    -- Unless BufWritePre runs (a formatter may change the buffer), the buffer's lines are now `new`.
    lines_now = opts.autocmds ~= true and new or nil
    werr, wkind = M.write_buffer(buf, opts.autocmds == true, lines_now)
  end
  if werr then
    -- The agent is told it failed, so the buffer must not keep its text.
    if #hunks > 0 or had_unsaved then
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
    return err(failure_code(wkind), werr, { uri = path_of.file_uri(p) })
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
    require("acp_nvim.fs.merge").tell_conflicts(p, conflicts)
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

--- `fs/write_text_file` for the host, answered with `acp_reply(token, answer)` (`acp_nvim.ui`): at once, or
--- when a large write without a buffer is on disk. Every call is answered, a Lua error included.
---@param token integer
---@param path string
---@param content string
---@param opts table?
function M.write_for_host(token, path, content, opts)
  local answer = require("acp_nvim.ui").answer
  local ok, res = pcall(M.write, path, content, opts, function(late)
    answer(token, late)
  end)
  if not ok then
    answer(token, err(M.ERR_INTERNAL, ("cannot write %s: %s"):format(tostring(path), tostring(res))))
  elseif res ~= nil then
    answer(token, res)
  end
end

return M

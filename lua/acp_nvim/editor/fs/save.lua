--- Saving a buffer to its file atomically (temp file, fsync, rename), then making Neovim take the new file as
--- the buffer's own without a reload (see `acp_nvim.editor.fs` for what is kept and which autocmds run).
local M = {}

local stamp = require("acp_nvim.editor.fs.stamp")
local edit = require("acp_nvim.editor.fs.edit")
local open = require("acp_nvim.editor.fs.open")

local api = vim.api
local uv = vim.uv

--- Lines joined by "\n", with a final "\n" when `eol` (the agent's text, CRLF-free).
---@class acp_nvim.JoinedLines
---@field bytes string
---@field eol boolean

--- fsync a folder by path (makes a rename in it durable).
---@param path string
---@return boolean, string?
local function fsync_dir(path)
  local fd, oerr = uv.fs_open(path, "r", 0)
  if not fd then
    return false, oerr
  end
  local ok, serr = uv.fs_fsync(fd)
  uv.fs_close(fd)
  return ok == true, serr
end

--- Why the text of `buf` cannot be saved in its 'fileencoding', or nil. :write would not refuse: it puts a
--- replacement character ("?" or an inverted question mark) for what the encoding lacks and saves that.
---@param buf integer
---@return string?
local function encoding_loss(buf)
  local bo = vim.bo[buf]
  local fenc = bo.fileencoding
  if bo.binary or fenc == "" or fenc == "utf-8" then
    return nil
  end
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  local converted = vim.iconv(text, "utf-8", fenc)
  if converted == nil then
    return ("Neovim cannot convert text to 'fileencoding' %s"):format(fenc)
  end
  if vim.iconv(converted, fenc, "utf-8") ~= text then
    return ("the conversion to 'fileencoding' %s would lose characters it cannot hold"):format(fenc)
  end
  return nil
end

--- The bytes `:write` would save, when they are simply the lines joined: UTF-8 (nothing to convert), no BOM,
--- not 'binary', Unix or DOS line ends. nil for anything else, which `:write` itself then produces.
--- `joined`: those lines as one string, as the agent sent them, when the caller has it: with Unix line ends
--- it is already the bytes, and joining 100,000 lines again would hold Neovim 3-10 ms more.
---@param buf integer
---@param lines string[]? the buffer's lines, when the caller has them
---@param joined acp_nvim.JoinedLines?
---@return string?
local function plain_bytes(buf, lines, joined)
  local bo = vim.bo[buf]
  local nl = ({ unix = "\n", dos = "\r\n" })[bo.fileformat]
  if nl == nil or bo.binary or bo.bomb or (bo.fileencoding ~= "" and bo.fileencoding ~= "utf-8") then
    return nil
  end
  if joined and nl == "\n" and joined.eol == edit.buf_writes_eol(buf) and joined.bytes ~= "" then
    return joined.bytes
  end
  if edit.buf_is_empty(buf) then
    return ""
  end
  local text = table.concat(lines or api.nvim_buf_get_lines(buf, 0, -1, false), nl)
  return edit.buf_writes_eol(buf) and text .. nl or text
end

--- The second value of a failed write when the path no longer leads where it did when it was resolved (a
--- folder swapped for a symlink, the file replaced by one): nothing was written, and the agent is refused as
--- for a path the host's check refuses.
M.CHANGED = "changed"

--- Write all of `data` at the start of `fd`, continuing after a short write.
---@param fd integer
---@param data string
---@return string? error
local function write_all(fd, data)
  local off = 0
  while off < #data do
    local n, werr = uv.fs_write(fd, off == 0 and data or data:sub(off + 1), off)
    if not n or n <= 0 then
      return tostring(werr or "short write")
    end
    off = off + n
  end
  return nil
end

--- Set global options without running OptionSet (a user's autocmd must not see this save's internals).
---@param assignments string
local function set_quietly(assignments)
  vim.cmd("noautocmd set " .. assignments)
end

--- `:write` of `buf` into the temp file this module created and holds open as `fd`. Pointed at
--- /proc/self/fd/N where that exists, :write opens exactly that inode whatever its name leads to by then;
--- elsewhere at the name, checked right before to still be that file. 'writebackup' and 'backup' are off for
--- the call: making a backup renames or copies the temp file, and :write would then create a new file by
--- name, which is what a planted symlink waits for.
---@param buf integer
---@param fd integer
---@param tmp string
---@param st table the temp file's stat
---@return string? error
local function vim_write(buf, fd, tmp, st)
  local via = "/proc/self/fd/" .. fd
  local magic = uv.fs_stat(via)
  if not (magic and magic.ino == st.ino and magic.dev == st.dev) then
    via = tmp
    if not open.still(tmp, st) then
      return "the temp file was replaced before it was written"
    end
  end
  local writebackup, backup = vim.o.writebackup, vim.o.backup
  set_quietly("nowritebackup nobackup")
  -- Without autocmds: this writes a temp file, not the user's file; BufWrite* for the real file are the
  -- caller's.
  local ok, werr = pcall(api.nvim_buf_call, buf, function()
    vim.cmd("noautocmd keepalt keepjumps lockmarks silent write! " .. vim.fn.fnameescape(via))
  end)
  set_quietly(
    (writebackup and "writebackup" or "nowritebackup") .. " " .. (backup and "backup" or "nobackup")
  )
  if not ok then
    return (tostring(werr):gsub("^Vim%b():", ""))
  end
  return nil
end

---@param dir string
---@param target string
---@return string?, string?
local function moved(dir, target)
  local why = open.folder_changed(dir)
  if why then
    return ("cannot write %s: %s"):format(target, why), M.CHANGED
  end
  local now = uv.fs_lstat(target)
  if now and now.type == "link" then
    return ("cannot write %s: it became a symlink after its path was resolved"):format(target), M.CHANGED
  end
  if now and now.type ~= "file" then
    return ("cannot write %s: it is not a regular file (%s)"):format(target, now.type), M.CHANGED
  end
  return nil, nil
end

--- Replace `target` by a new file whose bytes `fill(fd, tmp, st, k)` writes (then calls `k(error?)`): temp
--- file (exclusive, random name, 0600), the old file's owner and permission bits, fsync, rename. `target`
--- holds its old or its new bytes at every moment, also across a crash. Right before the temp file is
--- created and again right before the rename (each time in one stretch of Lua with the step that follows),
--- the folder must still resolve to itself and `target` must be a regular file or absent: a symlink put there
--- meanwhile is refused, never followed. On failure the temp file is removed and `target` is untouched.
--- `done(error?, kind?)` is called once.
---@param target string the real path (symlinks resolved)
---@param fill fun(fd: integer, tmp: string, st: table, k: fun(err: string?))
---@param done fun(err: string?, kind: string?)
local function replace(target, fill, done)
  local dir = vim.fs.dirname(target)
  local merr, mkind = moved(dir, target)
  if merr then
    return done(merr, mkind)
  end
  local old = uv.fs_lstat(target)
  local fd, tmp, st = open.create_temp(target)
  if not fd then
    return done(("cannot write %s: cannot create a temp file: %s"):format(target, tostring(st)))
  end
  local tmp_st = st --[[@as table]]
  local open_fd = fd --[[@as integer?]]
  ---@param msg string
  ---@param kind string?
  local function fail(msg, kind)
    if open_fd then
      uv.fs_close(open_fd)
      open_fd = nil
    end
    -- Only the file this write created is removed, never what someone put at its name.
    if open.still(tmp, tmp_st) then
      uv.fs_unlink(tmp)
    end
    done(msg, kind)
  end
  ---@param synced boolean
  ---@param serr string?
  local function commit(synced, serr)
    uv.fs_close(fd)
    open_fd = nil
    if not synced then
      return fail(("cannot write %s: fsync failed: %s"):format(target, tostring(serr)))
    end
    if not open.still(tmp, tmp_st) then
      return fail(("cannot write %s: its temp file was replaced while it was written"):format(target))
    end
    local cerr, ckind = moved(dir, target)
    if cerr then
      return fail(cerr, ckind)
    end
    local renamed, rerr = uv.fs_rename(tmp, target)
    if not renamed then
      return fail(("cannot write %s: %s"):format(target, tostring(rerr)))
    end
    -- Makes the rename itself durable; a folder that cannot be opened or synced loses only that.
    fsync_dir(dir)
    done(nil, nil)
  end
  fill(fd, tmp, tmp_st, function(ferr)
    if ferr then
      return fail(("cannot write %s: %s"):format(target, ferr))
    end
    if old then
      if old.uid ~= uv.getuid() or old.gid ~= uv.getgid() then
        -- Keeps the owner when allowed (root, or the group of a member); otherwise the file becomes the
        -- user's, as with any editor that saves by rename.
        uv.fs_fchown(fd, old.uid, old.gid)
      end
      local chmod_ok, cerr = uv.fs_fchmod(fd, bit.band(old.mode, 4095))
      if not chmod_ok then
        return fail(("cannot write %s: cannot copy its permissions: %s"):format(target, tostring(cerr)))
      end
    elseif uv.fs_fchmod(fd, bit.band(438, bit.bnot(M.umask()))) ~= true then
      return fail(("cannot write %s: cannot set its permissions"):format(target))
    end
    -- The data must be on disk before the rename makes it the file ('fsync' may be off).
    local synced, serr = uv.fs_fsync(fd)
    commit(synced == true, serr)
  end)
end

--- `replace` done before it returns, `fill(fd, tmp, st)` returning its error.
---@param target string
---@param fill fun(fd: integer, tmp: string, st: table): string?
---@return string? error, string? kind
local function replace_now(target, fill)
  local out_err, out_kind
  replace(target, function(fd, tmp, st, k)
    k(fill(fd, tmp, st))
  end, function(e, kind)
    out_err, out_kind = e, kind
  end)
  return out_err, out_kind
end

--- The process umask, for the mode of a new file (the temp file is created 0600; a new file gets what
--- `:write` would give it).
---@return integer
function M.umask()
  local ok, mask = pcall(function()
    local line = io.open("/proc/self/status")
    if not line then
      return nil
    end
    local text = line:read("*a")
    line:close()
    local m = text:match("Umask:%s*(%d+)")
    return m and tonumber(m, 8) or nil
  end)
  return ok and mask or 18
end

--- Write `buf` to `target` atomically (see `replace`). The bytes are those of Neovim's own `:write` of the
--- buffer: joined here when that is all `:write` would do (`plain_bytes`, twice as fast for a large file),
--- else produced by `:write` into the temp file, so 'fileformat', 'eol'/'fixeol', 'fileencoding', 'bomb' and
--- 'binary' mean exactly what they mean for `:write`, and a text that cannot be converted to 'fileencoding'
--- fails here (E513) instead of being saved mangled.
---@param buf integer
---@param target string the real path (symlinks resolved)
---@param lines string[]? the buffer's lines, when the caller has them
---@param text acp_nvim.JoinedLines?
---@return string? error, string? kind
local function write_atomic(buf, target, lines, text)
  local loss = encoding_loss(buf)
  if loss then
    return ("cannot write %s: %s"):format(target, loss)
  end
  local bytes = plain_bytes(buf, lines, text)
  return replace_now(target, function(fd, tmp, st)
    if bytes then
      return write_all(fd, bytes)
    end
    return vim_write(buf, fd, tmp, st)
  end)
end

--- Run `:checktime` for `buf` with a one-shot FileChangedShell that answers `choice`.
---@param buf integer
---@param choice string
local function checktime_answering(buf, choice)
  local id = api.nvim_create_autocmd("FileChangedShell", {
    buffer = buf,
    once = true,
    callback = function()
      vim.v.fcs_choice = choice
    end,
  })
  pcall(vim.cmd, "checktime " .. buf)
  -- Neovim saw no change (same mtime on a coarse clock): the autocmd must not answer a later, real one.
  pcall(api.nvim_del_autocmd, id)
end
M.checktime_answering = checktime_answering

--- Make Neovim take the file just renamed into place as the buffer's own, as after a `:write`, without
--- reloading the buffer (cursor, marks, folds, extmarks and undo history stay).
---
--- Neovim keeps two stamps of the file: the one `:checktime` compares (W11/W12, FileChangedShell) and the one
--- `:write` compares ("The file has been changed since reading it!!!" prompt). A FileChangedShell answered ""
--- updates only the first; the second is updated only when `:checktime` finds that nothing but the time
--- changed. Hence two checks: the first, with the buffer marked modified so 'autoread' cannot reload it,
--- records the new size and time; the second, after moving the file's mtime by a microsecond (not its
--- contents), finds a time-only change and records it for `:write`.
---@param buf integer
---@param target string
function M.adopt_file(buf, target)
  local bo = vim.bo[buf]
  bo.modified = true
  checktime_answering(buf, "")
  bo.modified = false
  local st = uv.fs_stat(target)
  if not st then
    return
  end
  ---@param delta number seconds
  ---@return boolean moved
  local function bump(delta)
    local t = st.mtime.sec + (st.mtime.nsec / 1e9) + delta
    uv.fs_utime(target, st.atime.sec + st.atime.nsec / 1e9, t)
    local now = uv.fs_stat(target)
    return now ~= nil and (now.mtime.sec ~= st.mtime.sec or now.mtime.nsec ~= st.mtime.nsec)
  end
  -- A file system with a coarse clock ignores a microsecond; one second is then the smallest move it sees.
  if not bump(1e-6) then
    bump(1)
  end
  -- 'autoread' would reload the unmodified buffer instead of comparing it: off for this one check.
  local autoread = api.nvim_get_option_value("autoread", { scope = "local", buf = buf })
  bo.autoread = false
  checktime_answering(buf, "ask")
  api.nvim_buf_call(buf, function()
    if autoread == nil then
      vim.cmd("setlocal autoread<")
    else
      vim.opt_local.autoread = autoread
    end
  end)
end

--- Create the folder `dir` (and its parents) when missing. Returns nil or an error message.
---@param dir string
---@return string?
function M.ensure_folder(dir)
  if uv.fs_stat(dir) then
    return nil
  end
  local ok, mkerr = pcall(vim.fn.mkdir, dir, "p")
  if not ok or not uv.fs_stat(dir) then
    return ("cannot create folder %s: %s"):format(dir, mkerr or "mkdir failed")
  end
  return nil
end

--- Write `buf` to its file atomically (temp file and rename), the buffer staying as it is and Neovim taking the
--- new file as written; the stamp is refreshed. With `autocmds`, BufWritePre runs before (formatters may still
--- change the buffer) and BufWritePost after. Returns nil or an error message; on error the file is untouched.
--- `lines`: the buffer's lines, when the caller has them (a 1 MB buffer takes milliseconds to fetch); not used
--- with `autocmds`, as BufWritePre may change the buffer. `text`: the same lines as one string (see
--- `plain_bytes`), when the caller has it.
---@param buf integer
---@param autocmds boolean?
---@param lines string[]?
---@param text acp_nvim.JoinedLines?
---@return string? error, string? kind (`M.CHANGED` when the path no longer leads where it did)
function M.write_buffer(buf, autocmds, lines, text)
  local path = api.nvim_buf_get_name(buf)
  local parent = vim.fs.dirname(path)
  local ferr = M.ensure_folder(parent)
  if ferr then
    return ferr
  end
  -- A symlink stays a symlink: the file it points to is the one replaced.
  local target = uv.fs_realpath(path)
    or vim.fs.joinpath(uv.fs_realpath(parent) or parent, vim.fs.basename(path))
  local existed = uv.fs_stat(target) ~= nil
  if existed then
    if not uv.fs_access(target, "W") then
      return ("permission denied: %s is not writable"):format(path)
    end
  end
  if not uv.fs_access(vim.fs.dirname(target), "W") then
    return ("permission denied: cannot create files in %s"):format(vim.fs.dirname(target))
  end
  if autocmds then
    -- In the buffer's context, as :write runs them: a formatter may act on the current buffer.
    local ok, perr = pcall(api.nvim_buf_call, buf, function()
      api.nvim_exec_autocmds("BufWritePre", { buffer = buf, modeline = false })
    end)
    if not ok then
      return ("cannot write %s: BufWritePre failed: %s"):format(path, tostring(perr))
    end
  end
  local known = stamp.known(buf)
  local werr, kind =
    write_atomic(buf, target, not autocmds and lines or nil, not autocmds and lines and text or nil)
  if werr then
    return werr, kind
  end
  if not existed or (known and not known.exists) then
    -- Neovim never read this file (the buffer was made for a missing one): reading it now is the only way to
    -- bind the buffer to it, else a later :checktime warns W13 "created after editing started".
    pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent keepalt keepjumps edit!")
    end)
  else
    pcall(M.adopt_file, buf, target)
  end
  vim.bo[buf].modified = false
  if vim.bo[buf].undofile then
    -- :write would have saved the undo file; without it the old one no longer matches the file.
    pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent wundo " .. vim.fn.fnameescape(vim.fn.undofile(path)))
    end)
  end
  stamp.record(buf)
  if autocmds then
    pcall(api.nvim_buf_call, buf, function()
      api.nvim_exec_autocmds("BufWritePost", { buffer = buf, modeline = false })
    end)
  end
  pcall(api.nvim_exec_autocmds, "User", {
    pattern = "AcpNvimFileWritten",
    modeline = false,
    data = { path = path, bufnr = buf },
  })
  return nil
end

return M

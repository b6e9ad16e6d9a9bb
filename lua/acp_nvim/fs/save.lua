--- Saving a buffer to its file atomically (temp file, fsync, rename), then making Neovim take the new file as
--- the buffer's own without a reload (see `acp_nvim.fs` for what is kept and which autocmds run).
local M = {}

local stamp = require("acp_nvim.fs.stamp")
local edit = require("acp_nvim.fs.edit")

local api = vim.api
local uv = vim.uv

local temp_counter = 0

--- A fresh name for a temporary file next to `target`: the same folder (so the rename stays on one file
--- system and is atomic), hidden, and short enough for NAME_MAX even when the target's name is long.
---@param target string
---@return string
local function temp_name(target)
  temp_counter = temp_counter + 1
  local base = vim.fs.basename(target)
  if #base > 180 then
    -- Cut on a character boundary: trailing bytes of a cut multibyte character are dropped with it.
    base = base:sub(1, 180):gsub("[\128-\255]+$", "")
  end
  return ("%s/.%s.acp-%d-%d.tmp"):format(vim.fs.dirname(target), base, uv.os_getpid(), temp_counter)
end

--- fsync a file or a folder by path.
---@param path string
---@return boolean, string?
local function fsync_path(path)
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
---@param buf integer
---@param lines string[]? the buffer's lines, when the caller has them
---@return string?
local function plain_bytes(buf, lines)
  local bo = vim.bo[buf]
  local nl = ({ unix = "\n", dos = "\r\n" })[bo.fileformat]
  if nl == nil or bo.binary or bo.bomb or (bo.fileencoding ~= "" and bo.fileencoding ~= "utf-8") then
    return nil
  end
  if edit.buf_is_empty(buf) then
    return ""
  end
  local text = table.concat(lines or api.nvim_buf_get_lines(buf, 0, -1, false), nl)
  return edit.buf_writes_eol(buf) and text .. nl or text
end

--- Writes `data` to the new file `path` and syncs it. Returns nil or an error message.
---@param path string
---@param data string
---@return string?
local function write_new_file(path, data)
  -- "x": never clobbers a file that appeared at this name meanwhile.
  local fd, oerr = uv.fs_open(path, "wx", 438)
  if not fd then
    return tostring(oerr)
  end
  local written, werr = uv.fs_write(fd, data, 0)
  local synced, serr = uv.fs_fsync(fd)
  uv.fs_close(fd)
  if written ~= #data then
    return tostring(werr or "short write")
  end
  if not synced then
    return "fsync failed: " .. tostring(serr)
  end
  return nil
end

--- Write `buf` to `target` by temp file and rename, so `target` holds either its old or its new bytes at every
--- moment, also across a crash. The bytes are those of Neovim's own `:write` of the buffer: joined here when
--- that is all `:write` would do (`plain_bytes`, twice as fast for a large file), else produced by `:write`
--- to the temp file, so 'fileformat', 'eol'/'fixeol', 'fileencoding', 'bomb' and 'binary' mean exactly what
--- they mean for `:write`, and a text that cannot be converted to 'fileencoding' fails here (E513) instead of
--- being saved mangled. On failure the temp file is removed and `target` is untouched.
---@param buf integer
---@param target string the real path (symlinks resolved)
---@param lines string[]? the buffer's lines, when the caller has them
---@return string? error
local function write_atomic(buf, target, lines)
  local loss = encoding_loss(buf)
  if loss then
    return ("cannot write %s: %s"):format(target, loss)
  end
  local old = uv.fs_stat(target)
  local tmp = temp_name(target)
  for _ = 1, 4 do
    if not uv.fs_lstat(tmp) then
      break
    end
    tmp = temp_name(target)
  end
  ---@param msg string
  ---@return string
  local function fail(msg)
    if uv.fs_lstat(tmp) then
      uv.fs_unlink(tmp)
    end
    return msg
  end
  local bytes = plain_bytes(buf, lines)
  if bytes then
    local werr = write_new_file(tmp, bytes)
    if werr then
      return fail(("cannot write %s: %s"):format(target, werr))
    end
  else
    -- Without "!" :write refuses an existing name, so a file appearing at `tmp` meanwhile is never clobbered.
    -- noautocmd: this writes a temp file, not the user's file; BufWrite* for the real file are the caller's.
    local ok, werr = pcall(api.nvim_buf_call, buf, function()
      vim.cmd("noautocmd keepalt keepjumps lockmarks silent write " .. vim.fn.fnameescape(tmp))
    end)
    if not ok then
      return fail(("cannot write %s: %s"):format(target, tostring(werr):gsub("^Vim%b():", "")))
    end
    -- The data must be on disk before the rename makes it the file ('fsync' may be off).
    local synced, serr = fsync_path(tmp)
    if not synced then
      return fail(("cannot write %s: fsync failed: %s"):format(target, tostring(serr)))
    end
  end
  if old then
    if old.uid ~= uv.getuid() or old.gid ~= uv.getgid() then
      -- Keeps the owner when allowed (root, or the group of a member); otherwise the file becomes the
      -- user's, as with any editor that saves by rename.
      uv.fs_chown(tmp, old.uid, old.gid)
    end
    local chmod_ok, cerr = uv.fs_chmod(tmp, bit.band(old.mode, 4095))
    if not chmod_ok then
      return fail(("cannot write %s: cannot copy its permissions: %s"):format(target, tostring(cerr)))
    end
  end
  local renamed, rerr = uv.fs_rename(tmp, target)
  if not renamed then
    return fail(("cannot write %s: %s"):format(target, tostring(rerr)))
  end
  -- Makes the rename itself durable; a folder that cannot be opened or synced loses only that.
  fsync_path(vim.fs.dirname(target))
  return nil
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
local function adopt_file(buf, target)
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

--- Write `buf` to its file atomically (temp file and rename), the buffer staying as it is and Neovim taking the
--- new file as written; the stamp is refreshed. With `autocmds`, BufWritePre runs before (formatters may still
--- change the buffer) and BufWritePost after. Returns nil or an error message; on error the file is untouched.
--- `lines`: the buffer's lines, when the caller has them (a 1 MB buffer takes milliseconds to fetch); not used
--- with `autocmds`, as BufWritePre may change the buffer.
---@param buf integer
---@param autocmds boolean?
---@param lines string[]?
---@return string?
function M.write_buffer(buf, autocmds, lines)
  local path = api.nvim_buf_get_name(buf)
  local parent = vim.fs.dirname(path)
  if not uv.fs_stat(parent) then
    local ok, mkerr = pcall(vim.fn.mkdir, parent, "p")
    if not ok or not uv.fs_stat(parent) then
      return ("cannot create folder %s: %s"):format(parent, mkerr or "mkdir failed")
    end
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
  local werr = write_atomic(buf, target, not autocmds and lines or nil)
  if werr then
    return werr
  end
  if not existed or (known and not known.exists) then
    -- Neovim never read this file (the buffer was made for a missing one): reading it now is the only way to
    -- bind the buffer to it, else a later :checktime warns W13 "created after editing started".
    pcall(api.nvim_buf_call, buf, function()
      vim.cmd("silent keepalt keepjumps edit!")
    end)
  else
    pcall(adopt_file, buf, target)
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

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
--- file. Neovim is then told the new file is the buffer's own without reloading it (see `adopt_file`).
--- BufWrite* autocmds are not run (formatters must not change what the agent wrote); `opts.autocmds = true`
--- runs BufWritePre before the save (it may still change the buffer) and BufWritePost after; BufWriteCmd is
--- never used. After a successful write `User AcpNvimFileWritten` fires with `data = { path, bufnr }`. A
--- failed write leaves the file untouched, removes the temp file, and `M.write` undoes its buffer edit.
---
--- A buffer whose file changed on disk since Neovim last read or wrote it is never overwritten: the agent gets
--- an error and the user a warning, the buffer is untouched. The module keeps its own record of each
--- buffer's file stamp (autocmds installed when the module is first required), because Neovim's timestamp is
--- not readable and `:checktime` would consume the change.
local M = {}

local result = require("acp_nvim.result")

M.ERR_INVALID_PARAMS = result.ERR_INVALID_PARAMS
M.ERR_INTERNAL = result.ERR_INTERNAL
M.ERR_NOT_FOUND = result.ERR_NOT_FOUND

--- Default for `opts.max_bytes` of reads.
M.default_max_bytes = 10 * 1024 * 1024

local api = vim.api
local uv = vim.uv

local err, opt = result.err, result.opt

---@param path string
---@return string
local function file_uri(path)
  return vim.uri_from_fname(path)
end

--- The path as the file system sees it: the real path when the file (or, for a file not yet there, its
--- nearest existing parent) exists, else the normalized path.
---@param path string
---@return string
local function identity(path)
  local real = uv.fs_realpath(path)
  if real then
    return real
  end
  local norm = vim.fs.normalize(path)
  local parent, rest = vim.fs.dirname(norm), vim.fs.basename(norm)
  while parent and parent ~= norm do
    local rp = uv.fs_realpath(parent)
    if rp then
      return vim.fs.joinpath(rp, rest)
    end
    local up = vim.fs.dirname(parent)
    if up == parent then
      break
    end
    rest = vim.fs.basename(parent) .. "/" .. rest
    norm, parent = parent, up
  end
  return vim.fs.normalize(path)
end
M._identity = identity

---@param path any
---@return string?, table?
local function check_path(path)
  if type(path) ~= "string" or path == "" then
    return nil, err(M.ERR_INVALID_PARAMS, "path must be a non-empty string")
  end
  if path:sub(1, 1) ~= "/" then
    return nil, err(M.ERR_INVALID_PARAMS, ("path must be absolute: %s"):format(path))
  end
  if path:find("\0", 1, true) then
    return nil, err(M.ERR_INVALID_PARAMS, "path contains a NUL byte")
  end
  return vim.fs.normalize(path), nil
end

--- The loaded buffer that holds `path`, if any.
---@param path string
---@return integer?
function M.find_buffer(path)
  local want = identity(path)
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and (name == path or identity(name) == want) then
        return buf
      end
    end
  end
  return nil
end

--- True when the string is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
---@param s string
---@return boolean
local function valid_utf8(s)
  local byte, find = string.byte, string.find
  local i, n = 1, #s
  while true do
    i = find(s, "[\128-\255]", i)
    if not i then
      return true
    end
    local c = byte(s, i)
    local len, lo, hi
    if c >= 0xC2 and c <= 0xDF then
      len, lo, hi = 2, 0x80, 0xBF
    elseif c == 0xE0 then
      len, lo, hi = 3, 0xA0, 0xBF
    elseif c == 0xED then
      len, lo, hi = 3, 0x80, 0x9F
    elseif c >= 0xE1 and c <= 0xEF then
      len, lo, hi = 3, 0x80, 0xBF
    elseif c == 0xF0 then
      len, lo, hi = 4, 0x90, 0xBF
    elseif c >= 0xF1 and c <= 0xF3 then
      len, lo, hi = 4, 0x80, 0xBF
    elseif c == 0xF4 then
      len, lo, hi = 4, 0x80, 0x8F
    else
      return false
    end
    if i + len - 1 > n then
      return false
    end
    local c2 = byte(s, i + 1)
    if c2 < lo or c2 > hi then
      return false
    end
    for k = i + 2, i + len - 1 do
      local ck = byte(s, k)
      if ck < 0x80 or ck > 0xBF then
        return false
      end
    end
    i = i + len
  end
end
M._valid_utf8 = valid_utf8

--- A buffer holding no line at all (a new or emptied file), as opposed to one empty line.
---@param buf integer
---@return boolean
local function buf_is_empty(buf)
  if api.nvim_buf_line_count(buf) ~= 1 or api.nvim_buf_get_lines(buf, 0, 1, false)[1] ~= "" then
    return false
  end
  -- Counts what :write would save; line2byte() misses a buffer emptied by :%delete.
  return api.nvim_buf_call(buf, function()
    return vim.fn.wordcount().bytes == 0
  end)
end

--- Whether writing the buffer ends the file with a newline.
---@param buf integer
---@return boolean
local function buf_writes_eol(buf)
  local bo = vim.bo[buf]
  return bo.eol or (bo.fixeol and not bo.binary)
end

---@param text string
---@param line integer?
---@param limit integer?
---@return string
local function slice_text(text, line, limit)
  if line == nil and limit == nil then
    return text
  end
  line = line or 1
  local pos = 1
  for _ = 2, line do
    local nl = text:find("\n", pos, true)
    if not nl or nl == #text then
      return ""
    end
    pos = nl + 1
  end
  if pos > #text then
    return ""
  end
  if limit == nil then
    local out = text:sub(pos)
    return (out:gsub("\n$", ""))
  end
  if limit == 0 then
    return ""
  end
  local stop = pos
  for _ = 1, limit do
    if stop > #text then
      break
    end
    local nl = text:find("\n", stop, true)
    if not nl then
      stop = #text + 2
      break
    end
    stop = nl + 1
  end
  return text:sub(pos, stop - 2)
end

---@param buf integer
---@param line integer?
---@param limit integer?
---@return string
local function buffer_text(buf, line, limit)
  if line == nil and limit == nil then
    if buf_is_empty(buf) then
      return ""
    end
    local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
    -- 'eol' is what the file had when read (or was given by the last agent write); 'fixeol' only decides
    -- what a later :write will do.
    if vim.bo[buf].eol then
      text = text .. "\n"
    end
    return text
  end
  line = line or 1
  local count = api.nvim_buf_line_count(buf)
  if line > count or limit == 0 or buf_is_empty(buf) then
    return ""
  end
  local last = limit and math.min(count, line - 1 + limit) or count
  return table.concat(api.nvim_buf_get_lines(buf, line - 1, last, false), "\n")
end

---@param path string
---@param max_bytes integer
---@return string?, table?
local function read_disk(path, max_bytes)
  local stat, msg, ename = uv.fs_stat(path)
  if not stat then
    if ename == "ENOENT" or ename == "ENOTDIR" then
      return nil, err(M.ERR_NOT_FOUND, ("file not found: %s"):format(path), { uri = file_uri(path) })
    end
    return nil, err(M.ERR_INTERNAL, ("cannot read %s: %s"):format(path, msg))
  end
  if stat.type == "directory" then
    return nil, err(M.ERR_INVALID_PARAMS, ("%s is a directory, not a text file"):format(path))
  end
  if stat.type ~= "file" then
    return nil, err(M.ERR_INVALID_PARAMS, ("%s is not a regular file (%s)"):format(path, stat.type))
  end
  if stat.size > max_bytes then
    return nil,
      err(
        M.ERR_INVALID_PARAMS,
        ("%s is too large to read: %d bytes, the limit is %d"):format(path, stat.size, max_bytes)
      )
  end
  local fd, omsg = uv.fs_open(path, "r", 0)
  if not fd then
    return nil, err(M.ERR_INTERNAL, ("cannot open %s: %s"):format(path, omsg))
  end
  local chunks, total = {}, 0
  while true do
    local data, rmsg = uv.fs_read(fd, 1024 * 1024, total)
    if not data then
      uv.fs_close(fd)
      return nil, err(M.ERR_INTERNAL, ("cannot read %s: %s"):format(path, rmsg))
    end
    if data == "" then
      break
    end
    total = total + #data
    if total > max_bytes then
      uv.fs_close(fd)
      return nil,
        err(M.ERR_INVALID_PARAMS, ("%s grew beyond the read limit of %d bytes"):format(path, max_bytes))
    end
    chunks[#chunks + 1] = data
  end
  uv.fs_close(fd)
  return table.concat(chunks), nil
end

---@param v any
---@param name string
---@param min integer
---@return integer?, table?
local function check_uint(v, name, min)
  v = opt(v)
  if v == nil then
    return nil, nil
  end
  if type(v) ~= "number" or v ~= math.floor(v) or v < min then
    return nil, err(M.ERR_INVALID_PARAMS, ("%s must be an integer >= %d"):format(name, min))
  end
  return v, nil
end

--- Answer `fs/read_text_file`.
---@param path string absolute path
---@param line integer? 1-based first line
---@param limit integer? maximum number of lines
---@param opts { max_bytes: integer? }?
---@return table { ok = true, content = string, from_buffer = boolean } or an error table
function M.read(path, line, limit, opts)
  opts = opt(opts) or {}
  local p, e = check_path(path)
  if not p then
    return e --[[@as table]]
  end
  local l, le = check_uint(line, "line", 1)
  if le then
    return le
  end
  local lim, lime = check_uint(limit, "limit", 0)
  if lime then
    return lime
  end
  local max_bytes = opt(opts.max_bytes) or M.default_max_bytes

  local buf = M.find_buffer(p)
  if buf then
    local content = buffer_text(buf, l, lim)
    if #content > max_bytes then
      return err(
        M.ERR_INVALID_PARAMS,
        ("%s is too large to read: %d bytes, the limit is %d"):format(p, #content, max_bytes)
      )
    end
    if content:find("\0", 1, true) then
      return err(M.ERR_INVALID_PARAMS, ("%s is binary (contains NUL bytes)"):format(p))
    end
    return { ok = true, content = content, from_buffer = true }
  end

  local text, re = read_disk(p, max_bytes)
  if not text then
    return re --[[@as table]]
  end
  if text:find("\0", 1, true) then
    return err(M.ERR_INVALID_PARAMS, ("%s is binary (contains NUL bytes)"):format(p))
  end
  if not valid_utf8(text) then
    return err(M.ERR_INVALID_PARAMS, ("%s is not valid UTF-8 text"):format(p))
  end
  if text:find("\r", 1, true) then
    text = text:gsub("\r\n", "\n")
  end
  return { ok = true, content = slice_text(text, l, lim), from_buffer = false }
end

-- File stamps -----------------------------------------------------------------------------------------------

---@class acp_nvim.FileStamp
---@field exists boolean
---@field sec integer?
---@field nsec integer?
---@field size integer?

---@type table<integer, acp_nvim.FileStamp>
local stamps = {}

---@param path string
---@return acp_nvim.FileStamp
local function stamp_of(path)
  local st = uv.fs_stat(path)
  if not st then
    return { exists = false }
  end
  return { exists = true, sec = st.mtime.sec, nsec = st.mtime.nsec, size = st.size }
end

---@param buf integer
local function record_stamp(buf)
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  local name = api.nvim_buf_get_name(buf)
  if name == "" or vim.bo[buf].buftype ~= "" then
    stamps[buf] = nil
    return
  end
  stamps[buf] = stamp_of(name)
end

local group = api.nvim_create_augroup("acp_nvim_fs", { clear = true })
api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "FileChangedShellPost", "BufFilePost" }, {
  group = group,
  callback = function(ev)
    record_stamp(ev.buf)
  end,
})
api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
  group = group,
  callback = function(ev)
    stamps[ev.buf] = nil
  end,
})

--- Why the file behind `buf` cannot be overwritten, or nil when it is as Neovim last saw it. A file deleted
--- behind the buffer is no conflict: writing it back loses nothing.
---@param buf integer
---@param path string
---@return string?
function M.disk_conflict(buf, path)
  local known = stamps[buf]
  local now = stamp_of(path)
  if not known then
    -- Loaded before this module was: an unmodified UTF-8 buffer must match the file; a modified one is
    -- trusted. Either way the stamp is known from now on.
    stamps[buf] = now
    local fenc = vim.bo[buf].fileencoding
    if now.exists and not vim.bo[buf].modified and (fenc == "" or fenc == "utf-8") then
      local disk = read_disk(path, math.huge)
      if disk and disk:gsub("\r\n", "\n") ~= buffer_text(buf, nil, nil) then
        stamps[buf] = nil
        return "differs on disk from its unmodified buffer"
      end
    end
    return nil
  end
  if not now.exists then
    return nil
  end
  if not known.exists then
    return "was created on disk after the buffer was opened"
  end
  if now.sec ~= known.sec or now.nsec ~= known.nsec or now.size ~= known.size then
    return "changed on disk since Neovim last read or wrote it"
  end
  return nil
end

-- Writes ----------------------------------------------------------------------------------------------------

--- Split text into buffer lines and its final-newline state.
---@param content string
---@return string[] lines, boolean eol, boolean crlf
local function to_lines(content)
  local crlf = false
  if content:find("\r\n", 1, true) then
    crlf = true
    content = content:gsub("\r\n", "\n")
  end
  if content == "" then
    return {}, false, crlf
  end
  local eol = content:sub(-1) == "\n"
  if eol then
    content = content:sub(1, -2)
  end
  return vim.split(content, "\n", { plain = true }), eol, crlf
end

--- Lines of `buf` as a list, `{}` for an empty buffer.
---@param buf integer
---@return string[]
function M.buf_lines(buf)
  if buf_is_empty(buf) then
    return {}
  end
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

---@param lines string[]
---@return string
local function diff_text(lines)
  if #lines == 0 then
    return ""
  end
  return table.concat(lines, "\n") .. "\n"
end

--- Minimal hunks turning `old` into `new`: xdiff's indices { start_a, count_a, start_b, count_b }.
---@param old string[]
---@param new string[]
---@return integer[][]
function M.diff(old, new)
  -- An agent's edit usually changes a few lines of a long file. Lua compares interned strings by pointer, so
  -- cutting the unchanged head and tail first spares xdiff (and two concatenations) most of a large file.
  local head, n_old, n_new = 0, #old, #new
  while head < n_old and head < n_new and old[head + 1] == new[head + 1] do
    head = head + 1
  end
  local tail = 0
  while tail < n_old - head and tail < n_new - head and old[n_old - tail] == new[n_new - tail] do
    tail = tail + 1
  end
  if head == n_old and head == n_new then
    return {}
  end
  local hunks = vim.diff(
    diff_text(vim.list_slice(old, head + 1, n_old - tail)),
    diff_text(vim.list_slice(new, head + 1, n_new - tail)),
    { result_type = "indices" }
  ) --[[@as integer[][] ]]
  -- xdiff numbers an insertion's or deletion's empty side by the line before it, so a shift by `head` holds
  -- for every hunk.
  for _, hunk in ipairs(hunks) do
    hunk[1], hunk[3] = hunk[1] + head, hunk[3] + head
  end
  return hunks
end

--- Apply `hunks` (from `M.diff(old, new)`) to `buf`, whose lines are `old`, bottom-up so earlier indices stay
--- valid; the caller opened the undo block. Returns the number of lines touched.
---@param buf integer
---@param hunks integer[][]
---@param new string[]
---@return integer
function M.apply_hunks(buf, hunks, new)
  local touched = 0
  if #hunks > 0 and buf_is_empty(buf) then
    -- An empty buffer still shows one line; inserting before it would leave a stray empty line.
    api.nvim_buf_set_lines(buf, 0, -1, false, new)
    return #new
  end
  api.nvim_buf_call(buf, function()
    for i = #hunks, 1, -1 do
      local sa, ca, sb, cb = unpack(hunks[i])
      local repl = {}
      for k = 0, cb - 1 do
        repl[#repl + 1] = new[sb + k]
      end
      local from = ca == 0 and sa or sa - 1
      if i < #hunks then
        pcall(vim.cmd, "undojoin")
      end
      api.nvim_buf_set_lines(buf, from, from + ca, false, repl)
      touched = touched + math.max(ca, cb)
    end
    if #new == 0 and #hunks > 0 then
      M.make_empty(buf)
    end
  end)
  return touched
end

--- Deleting every line through the API leaves one empty line, which :write saves as "\n"; `:%delete` makes
--- the buffer truly empty (a 0-byte file), joined to the current undo block.
---@param buf integer
function M.make_empty(buf)
  if buf_is_empty(buf) then
    return
  end
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "undojoin")
    vim.cmd("silent keepjumps keepmarks %delete _")
  end)
end

--- Start a new undo block in `buf`, so that what follows is undone on its own.
---@param buf integer
function M.break_undo(buf)
  api.nvim_buf_call(buf, function()
    local ul = vim.bo[buf].undolevels
    vim.bo[buf].undolevels = ul
  end)
end

---@param buf integer
---@return integer
local function undo_seq(buf)
  return api.nvim_buf_call(buf, function()
    return vim.fn.undotree().seq_cur
  end)
end

-- Atomic writes ---------------------------------------------------------------------------------------------

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

--- Write `buf` to `target` by temp file and rename, so `target` holds either its old or its new bytes at every
--- moment, also across a crash. The bytes are produced by Neovim's own `:write` of the buffer to the temp file,
--- so 'fileformat', 'eol'/'fixeol', 'fileencoding', 'bomb' and 'binary' mean exactly what they mean for
--- `:write`, and a text that cannot be converted to 'fileencoding' fails here (E513) instead of being saved
--- mangled. On failure the temp file is removed and `target` is untouched.
---@param buf integer
---@param target string the real path (symlinks resolved)
---@return string? error
local function write_atomic(buf, target)
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
---@param buf integer
---@param autocmds boolean?
---@return string?
function M.write_buffer(buf, autocmds)
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
  local known = stamps[buf]
  local werr = write_atomic(buf, target)
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
  record_stamp(buf)
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
  record_stamp(buf)
  return buf, true, nil
end

--- Answer `fs/write_text_file`.
---@param path string absolute path
---@param content string the whole new text of the file
---@param opts { session_id: string?, tool_call_id: string?, autocmds: boolean?, review: boolean? }?
---@return table { ok = true, bufnr, lines_touched, hunks, created, had_unsaved_edits } or an error table
function M.write(path, content, opts)
  opts = opt(opts) or {}
  local p, e = check_path(path)
  if not p then
    return e --[[@as table]]
  end
  if type(content) ~= "string" then
    return err(M.ERR_INVALID_PARAMS, "content must be a string")
  end
  if content:find("\0", 1, true) then
    return err(M.ERR_INVALID_PARAMS, ("refusing to write binary content (NUL byte) to %s"):format(p))
  end
  local st = uv.fs_stat(p)
  if st and st.type == "directory" then
    return err(M.ERR_INVALID_PARAMS, ("%s is a directory"):format(p))
  end
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
      return err(M.ERR_INTERNAL, msg, { uri = file_uri(p), reason = "changed_on_disk" })
    end
    if not vim.bo[existing].modifiable then
      return err(M.ERR_INTERNAL, ("the buffer of %s is not modifiable"):format(p))
    end
    if vim.bo[existing].readonly then
      return err(M.ERR_INTERNAL, ("the buffer of %s is read-only"):format(p))
    end
  end

  local buf, created_buf, lerr = buffer_for_write(p)
  if not buf then
    return err(M.ERR_INTERNAL, lerr or ("cannot load " .. p))
  end
  local bo = vim.bo[buf]
  local had_unsaved = bo.modified
  local old = M.buf_lines(buf)
  local new, eol, crlf = to_lines(content)
  local hunks = M.diff(old, new)
  local old_eol, old_fixeol = bo.eol, bo.fixeol
  local eol_changed = (#new > 0) and (buf_writes_eol(buf) ~= eol)

  if #hunks == 0 and not eol_changed and not had_unsaved and file_existed then
    return { ok = true, bufnr = buf, lines_touched = 0, hunks = 0, created = false, had_unsaved_edits = false }
  end

  local review = opts.review ~= false and opt(opts.session_id) and require("acp_nvim.review") or nil
  local original = review and review.original_lines(buf, opts.session_id) or nil

  local seq_before = undo_seq(buf)
  M.break_undo(buf)
  local touched = M.apply_hunks(buf, hunks, new)
  if #new > 0 then
    bo.eol = eol
    if not eol then
      bo.fixeol = false
    end
  end
  if not file_existed and crlf then
    bo.fileformat = "dos"
  end

  local werr = M.write_buffer(buf, opts.autocmds == true)
  if werr then
    -- The agent is told it failed, so the buffer must not keep its text.
    if #hunks > 0 then
      if undo_seq(buf) ~= seq_before then
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
    return err(M.ERR_INTERNAL, werr, { uri = file_uri(p) })
  end

  if review and original then
    review.record(buf, opts.session_id, original, {
      tool_call_id = opt(opts.tool_call_id),
      created = not file_existed,
      eol = old_eol,
      fixeol = old_fixeol,
    })
  end
  if had_unsaved then
    vim.notify(
      ("acp: the agent rewrote %s over your unsaved edits; `u` in that buffer brings them back"):format(
        vim.fn.fnamemodify(p, ":~:.")
      ),
      vim.log.levels.INFO
    )
  end
  return {
    ok = true,
    bufnr = buf,
    lines_touched = touched,
    hunks = #hunks,
    created = not file_existed,
    had_unsaved_edits = had_unsaved,
  }
end

return M

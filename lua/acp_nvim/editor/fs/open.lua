--- Opening files the agent names without following a symlink nobody checked.
---
--- The host checks a path and hands Lua its real path; anything can change on disk after that (the agent is a
--- process of its own and may swap a folder for a symlink). So every open here verifies, in the same Lua call
--- (no other Neovim work runs in between), that the parent folder still is what it was (its real path is
--- itself) and that the final component is the regular file it was: opened with O_NOFOLLOW where the
--- platform's value is known, and its inode compared with an lstat taken before the open everywhere (the
--- check that also holds where O_NOFOLLOW is unknown). O_NONBLOCK keeps an open of a FIFO from waiting for a
--- writer. Temp files are created with O_CREAT|O_EXCL (which never follows a symlink, dangling or not) under
--- a random name that is never reused, mode 0600.
local M = {}

local result = require("acp_nvim.editor.answer")

local uv = vim.uv
local C = uv.constants

-- luv exposes the O_* constants libuv knows; O_NOFOLLOW is not among them on every build, and its value
-- differs by platform.
---@return integer?
local function nofollow_flag()
  if C.O_NOFOLLOW then
    return C.O_NOFOLLOW
  end
  local u = uv.os_uname()
  if u.sysname == "Linux" then
    local m = u.machine
    if m == "x86_64" or m == "aarch64" or m == "riscv64" or m:match("^i%d86$") or m:match("^ppc64") then
      return m:match("^ppc64") and 0x8000 or 0x20000
    end
    if m:match("^arm") then
      return 0x8000
    end
    return nil
  end
  if u.sysname == "Darwin" or u.sysname:match("BSD$") then
    return 0x100
  end
  return nil
end

M.O_NOFOLLOW = nofollow_flag()

---@param ... integer
---@return integer
local function flags(...)
  local f = bit.bor(...)
  if M.O_NOFOLLOW then
    f = bit.bor(f, M.O_NOFOLLOW)
  end
  return f
end

--- Why `dir` is not the folder the caller expects (its real path differs: a component became a symlink, or
--- it is gone), or nil.
---@param dir string an absolute real path
---@return string?
function M.folder_changed(dir)
  local real = uv.fs_realpath(dir)
  if real == dir then
    return nil
  end
  if real == nil then
    return ("%s is gone"):format(dir)
  end
  return ("%s now leads to %s (a symlink appeared after the path was checked)"):format(dir, real)
end

--- Why `path`, a real path the host checked, no longer names what it did, or nil: its parent folder must
--- still resolve to itself, and the file itself must not be a symlink (a file that does not exist yet is
--- fine; its nearest existing folder must resolve to itself).
---@param path string
---@return string?
function M.path_changed(path)
  local lst = uv.fs_lstat(path)
  if lst and lst.type == "link" then
    return ("%s is now a symlink (it was not when the path was checked)"):format(path)
  end
  local dir = vim.fs.dirname(path)
  while dir and not uv.fs_lstat(dir) do
    local up = vim.fs.dirname(dir)
    if up == dir then
      return nil
    end
    dir = up
  end
  return dir and M.folder_changed(dir) or nil
end

--- The fact for `path`, a real path the host checked, when something other than what was checked is there
--- now (put there after the check): `{ ok = false, fact = "path_changed", detail }`, or nil.
---@param path string
---@return table?
function M.refuse_if_changed(path)
  local why = M.path_changed(path)
  if not why then
    return nil
  end
  return result.refused("path_changed", { detail = why })
end

--- The type of what is at `path` when it is not a regular file ("fifo", "socket", "char", "block",
--- "directory", ...), following symlinks; nil for a regular file or nothing at all. Never opens it.
---@param path string
---@return string?
function M.not_regular(path)
  local st = uv.fs_stat(path)
  if st and st.type ~= "file" then
    return st.type
  end
  return nil
end

---@param a table
---@param b table
---@return boolean
local function same_inode(a, b)
  return a.ino == b.ino and a.dev == b.dev
end

--- Open the regular file `path` for reading without following a symlink at its last component and without
--- blocking on a FIFO. Returns fd, stat, or nil, error message, error name ("ENOENT", "ELOOP", "ENOTREG").
---@param path string
---@return integer?, table|string?, string?
function M.open_read(path)
  local before, lmsg, lname = uv.fs_lstat(path)
  if not before then
    return nil, lmsg, lname
  end
  if before.type ~= "file" then
    return nil, ("%s is not a regular file (%s)"):format(path, before.type), "ENOTREG"
  end
  local fd, omsg, oname = uv.fs_open(path, flags(C.O_RDONLY, C.O_NONBLOCK), 0)
  if not fd then
    return nil, omsg, oname
  end
  local st = uv.fs_fstat(fd)
  if not st or st.type ~= "file" or not same_inode(st, before) then
    uv.fs_close(fd)
    return nil, ("%s changed while it was opened"):format(path), "ELOOP"
  end
  return fd, st, nil
end

--- The whole content of the regular file at `path` (symlinks followed to the real file, opened as
--- `open_read` does), or nil when it cannot be read.
---@param path string
---@return string?
function M.read_all(path)
  local fd = M.open_read(uv.fs_realpath(path) or path)
  if not fd then
    return nil
  end
  local chunks, total = {}, 0
  while true do
    local data = uv.fs_read(fd, 1024 * 1024, total)
    if not data then
      uv.fs_close(fd)
      return nil
    end
    if data == "" then
      break
    end
    total = total + #data
    chunks[#chunks + 1] = data
  end
  uv.fs_close(fd)
  return table.concat(chunks)
end

---@return string
local function random_hex()
  local ok, bytes = pcall(uv.random, 8)
  if not ok or type(bytes) ~= "string" then
    -- No entropy source: still unpredictable enough per name, and O_EXCL is what makes it safe.
    bytes = tostring(uv.hrtime()) .. tostring(math.random())
    return vim.fn.sha256(bytes):sub(1, 16)
  end
  return (bytes:gsub(".", function(c)
    return ("%02x"):format(c:byte())
  end))
end

--- Create a new temp file next to `target` (same folder: the rename stays on one file system and is atomic),
--- exclusively, mode 0600, under a random name. Returns fd, path, stat or nil, error message.
---@param target string
---@return integer?, string, table|string?
function M.create_temp(target)
  local dir = vim.fs.dirname(target)
  local base = vim.fs.basename(target)
  if #base > 180 then
    -- Cut on a character boundary: trailing bytes of a cut multibyte character are dropped with it.
    base = base:sub(1, 180):gsub("[\128-\255]+$", "")
  end
  local last = "no name was free"
  for _ = 1, 8 do
    local tmp = ("%s/.%s.acp-%s.tmp"):format(dir, base, random_hex())
    local fd, msg, name = uv.fs_open(tmp, flags(C.O_WRONLY, C.O_CREAT, C.O_EXCL), 384)
    if fd then
      local st = uv.fs_fstat(fd)
      if st then
        return fd, tmp, st
      end
      uv.fs_close(fd)
      uv.fs_unlink(tmp)
      return nil, tmp, "cannot stat the temp file"
    end
    last = tostring(msg)
    if name ~= "EEXIST" then
      break
    end
  end
  return nil, "", last
end

--- Whether `path` still is the regular file `st` (same inode, not replaced by a symlink or another file).
---@param path string
---@param st table
---@return boolean
function M.still(path, st)
  local now = uv.fs_lstat(path)
  return now ~= nil and now.type == "file" and same_inode(now, st)
end

return M

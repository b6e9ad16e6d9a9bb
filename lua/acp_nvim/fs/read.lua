--- `fs/read_text_file`: a loaded buffer's text (unsaved edits included) or the file on disk, whole or as a
--- `line`/`limit` slice (see `acp_nvim.fs` for the rules).
local M = {}

local result = require("acp_nvim.result")
local path_of = require("acp_nvim.fs.path")
local edit = require("acp_nvim.fs.edit")
local open = require("acp_nvim.fs.open")
local conflict = require("acp_nvim.fs.conflict")

local api = vim.api
local uv = vim.uv

local err, opt = result.err, result.opt

--- Default for `opts.max_bytes` of reads.
M.default_max_bytes = 10 * 1024 * 1024

--- True when the string is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
---@param s string
---@return boolean
function M.valid_utf8(s)
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
function M.buffer_text(buf, line, limit)
  -- Unresolved merge conflicts read as the agent's side (fs/conflict.lua).
  local agent_view = conflict.agent_view(buf)
  if agent_view then
    if line == nil and limit == nil then
      local text = table.concat(agent_view, "\n")
      return (#agent_view > 0 and vim.bo[buf].eol) and text .. "\n" or text
    end
    line = line or 1
    if line > #agent_view or limit == 0 then
      return ""
    end
    return table.concat(
      agent_view,
      "\n",
      line,
      limit and math.min(#agent_view, line - 1 + limit) or #agent_view
    )
  end
  if line == nil and limit == nil then
    if edit.buf_is_empty(buf) then
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
  if line > count or limit == 0 or edit.buf_is_empty(buf) then
    return ""
  end
  local last = limit and math.min(count, line - 1 + limit) or count
  return table.concat(api.nvim_buf_get_lines(buf, line - 1, last, false), "\n")
end

---@param path string
---@param max_bytes integer
---@return string?, table?
function M.read_disk(path, max_bytes)
  local stat, msg, ename = uv.fs_stat(path)
  if not stat then
    if ename == "ENOENT" or ename == "ENOTDIR" then
      return nil,
        err(result.ERR_NOT_FOUND, ("file not found: %s"):format(path), { uri = path_of.file_uri(path) })
    end
    return nil, err(result.ERR_INTERNAL, ("cannot read %s: %s"):format(path, msg))
  end
  if stat.type == "directory" then
    return nil, err(result.ERR_INVALID_PARAMS, ("%s is a directory, not a text file"):format(path))
  end
  if stat.type ~= "file" then
    return nil, err(result.ERR_INVALID_PARAMS, ("%s is not a regular file (%s)"):format(path, stat.type))
  end
  if stat.size > max_bytes then
    return nil,
      err(
        result.ERR_INVALID_PARAMS,
        ("%s is too large to read: %d bytes, the limit is %d"):format(path, stat.size, max_bytes)
      )
  end
  -- The real file, opened without following a symlink swapped in since the stat and without blocking on a
  -- FIFO swapped in.
  local fd, omsg = open.open_read(uv.fs_realpath(path) or path)
  if not fd then
    return nil, err(result.ERR_INTERNAL, ("cannot open %s: %s"):format(path, tostring(omsg)))
  end
  local chunks, total = {}, 0
  -- One read for the whole file as stat saw it (one byte more tells that it grew); 1 MiB ones after.
  local want = math.min(max_bytes, stat.size) + 1
  while true do
    local data, rmsg = uv.fs_read(fd, want, total)
    want = 1024 * 1024
    if not data then
      uv.fs_close(fd)
      return nil, err(result.ERR_INTERNAL, ("cannot read %s: %s"):format(path, rmsg))
    end
    if data == "" then
      break
    end
    total = total + #data
    if total > max_bytes then
      uv.fs_close(fd)
      return nil,
        err(result.ERR_INVALID_PARAMS, ("%s grew beyond the read limit of %d bytes"):format(path, max_bytes))
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
    return nil, err(result.ERR_INVALID_PARAMS, ("%s must be an integer >= %d"):format(name, min))
  end
  return v, nil
end

--- Answer `fs/read_text_file`.
---@param path string absolute path
---@param line integer? 1-based first line
---@param limit integer? maximum number of lines
---@param opts { max_bytes: integer?, checked_path: boolean? }?
---@return table { ok = true, content = string, from_buffer = boolean } or an error table
function M.read(path, line, limit, opts)
  opts = opt(opts) or {}
  local p, e = path_of.check_path(path)
  if not p then
    return e --[[@as table]]
  end
  if opts.checked_path then
    local refused = open.refuse_if_changed(p, "read")
    if refused then
      return refused
    end
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

  local buf = path_of.find_buffer(p)
  if buf then
    local content = M.buffer_text(buf, l, lim)
    if #content > max_bytes then
      return err(
        result.ERR_INVALID_PARAMS,
        ("%s is too large to read: %d bytes, the limit is %d"):format(p, #content, max_bytes)
      )
    end
    if content:find("\0", 1, true) then
      return err(result.ERR_INVALID_PARAMS, ("%s is binary (contains NUL bytes)"):format(p))
    end
    return { ok = true, content = content, from_buffer = true }
  end
  if opts.buffer_only then
    -- The host reads the disk itself: sending the text of a large file back through Neovim would hold it.
    return { ok = true, no_buffer = true }
  end

  local text, re = M.read_disk(p, max_bytes)
  if not text then
    return re --[[@as table]]
  end
  if text:find("\0", 1, true) then
    return err(result.ERR_INVALID_PARAMS, ("%s is binary (contains NUL bytes)"):format(p))
  end
  if not M.valid_utf8(text) then
    return err(result.ERR_INVALID_PARAMS, ("%s is not valid UTF-8 text"):format(p))
  end
  if text:find("\r", 1, true) then
    text = text:gsub("\r\n", "\n")
  end
  return { ok = true, content = slice_text(text, l, lim), from_buffer = false }
end

return M

--- A file's text as buffer lines, read from disk, and the identity of its content as stat sees it: what
--- following the agent's own edits (`editor/fs/follow_disk.lua`, `editor/fs/disk_watch.lua`) compares and applies.
local M = {}

local uv = vim.uv

local edit = require("acp_nvim.editor.fs.edit")

--- Largest file followed (as the host's snapshots).
M.max_bytes = 4 * 1024 * 1024

---@param buf integer
---@return boolean
function M.utf8_buffer(buf)
  local fenc = vim.bo[buf].fileencoding
  return fenc == "" or fenc == "utf-8"
end

--- `edit.to_lines` for the common case (no CRLF), without vim.split's iterator: a 1 MB file is split in
--- under a millisecond instead of several, which is most of what following an edit costs.
---@param text string
---@return string[] lines, boolean eol
function M.split_lines(text)
  if text:find("\r\n", 1, true) then
    local lines, eol = edit.to_lines(text)
    return lines, eol
  end
  local find, sub = string.find, string.sub
  local out, n, pos = {}, 0, 1
  while true do
    local nl = find(text, "\n", pos, true)
    if not nl then
      break
    end
    n = n + 1
    out[n] = sub(text, pos, nl - 1)
    pos = nl + 1
  end
  if pos <= #text then
    out[n + 1] = sub(text, pos)
    return out, false
  end
  return out, n > 0
end

--- The disk's text of `path` as lines, or nil (absent, too large, not text).
---@param path string
---@return string[]?, boolean?
function M.disk_lines(path)
  local st = vim.uv.fs_stat(path)
  if not st or st.type ~= "file" or st.size > M.max_bytes then
    return nil, nil
  end
  local text = require("acp_nvim.editor.fs.open").read_all(path)
  if not text or text:find("\0", 1, true) then
    return nil, nil
  end
  return M.split_lines(text)
end

--- Identity of a file's content as stat sees it: a write (in place or by rename) changes it.
---@param name string
---@return string
function M.stat_key(name)
  local st = uv.fs_stat(name)
  return st and ("%d:%d:%d:%d"):format(st.ino, st.mtime.sec, st.mtime.nsec, st.size) or "absent"
end

return M

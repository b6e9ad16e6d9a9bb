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

--- A file's text as buffer lines and its final-newline state (`edit.to_lines`, CRLF line ends dropped).
---@param text string
---@return string[] lines, boolean eol
function M.split_lines(text)
  local lines, eol = edit.to_lines(text)
  return lines, eol
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

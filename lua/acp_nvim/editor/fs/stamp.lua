--- Each buffer's file stamp as Neovim last read or wrote it, so an agent write never overwrites a file that
--- changed on disk behind its buffer. Kept here because Neovim's own stamp is not readable and `:checktime`
--- would consume the change; the autocmds are installed when the module is first required.
local M = {}

local read = require("acp_nvim.editor.fs.read")
local open = require("acp_nvim.editor.fs.open")

local api = vim.api
local uv = vim.uv

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
function M.record(buf)
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

--- Forget `buf`'s stamp: its file is compared by content at the next check (it may have changed unseen).
---@param buf integer
function M.forget(buf)
  stamps[buf] = nil
end

--- The stamp recorded for `buf`, or nil when there is none.
---@param buf integer
---@return acp_nvim.FileStamp?
function M.known(buf)
  return stamps[buf]
end

local group = api.nvim_create_augroup("acp_nvim_fs", { clear = true })
api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "FileChangedShellPost", "BufFilePost" }, {
  group = group,
  callback = function(ev)
    M.record(ev.buf)
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
      local disk = open.read_all(path)
      if disk and disk:gsub("\r\n", "\n") ~= read.buffer_text(buf, nil, nil) then
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

return M

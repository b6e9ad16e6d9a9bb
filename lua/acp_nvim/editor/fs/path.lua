--- Paths of agent requests, matched to loaded buffers.
---
--- The host validates and resolves the agent's path once (symlinks, `..`, no `$VAR` or `~` expansion) and
--- judges that real path; the path given here is that one, and it is used as given: nothing here re-reads it
--- another way (`vim.fs.normalize` would expand `$VAR` and fold `..` before symlinks, naming another file).
local M = {}

local api = vim.api
local uv = vim.uv

---@param path string
---@return string
local function basename(path)
  return path:match("^.*/(.*)$") or path
end

--- Whether `name`'s last component is `tail`, without building a string (a thousand names per request).
---@param name string
---@param tail string
---@return boolean
local function ends_in(name, tail)
  local start = #name - #tail
  return start >= 1 and name:byte(start) == 47 and name:sub(start + 1) == tail
end

--- The path as the file system sees it: its real path when it exists; else the real path of its longest
--- existing prefix with the rest appended, `.` and `..` of that rest folded (it does not exist, so it holds no
--- symlink). Linear in the path's length: a prefix resolves only if every shorter one does, so the longest is
--- found by bisection (log2(n) lookups), never by one lookup per parent.
---@param path string
---@return string
function M.identity(path)
  local real = uv.fs_realpath(path)
  if real then
    return real
  end
  local cuts = {}
  for pos in path:gmatch("()/") do
    cuts[#cuts + 1] = pos
  end
  local function prefix(k)
    return k == 1 and "/" or path:sub(1, cuts[k] - 1)
  end
  -- Invariant: prefix(lo) resolves (the root always does), prefix(hi + 1) does not.
  local lo, hi = 1, #cuts
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if uv.fs_realpath(prefix(mid)) then
      lo = mid
    else
      hi = mid - 1
    end
  end
  local base = uv.fs_realpath(prefix(lo)) or "/"
  local parts = {}
  for name in base:gmatch("[^/]+") do
    parts[#parts + 1] = name
  end
  local folded = false
  for name in path:sub(cuts[lo] + 1):gmatch("[^/]+") do
    if name == ".." then
      parts[#parts] = nil
      folded = true
    elseif name ~= "." then
      parts[#parts + 1] = name
    end
  end
  local joined = "/" .. table.concat(parts, "/")
  -- A `..` may have led back to something that exists (and may be a symlink).
  return folded and uv.fs_realpath(joined) or joined
end

-- Whether a buffer's file name is itself a symlink, per buffer and name: a buffer opened through a link can
-- have any name, and asking the file system for each of a thousand buffers on every request is what must not
-- happen. Learnt when Neovim reads, writes or renames the buffer's file (one readlink beside reading a file),
-- else on the first lookup that meets the buffer.
---@type table<integer, { name: string, link: boolean }>
local links = {}

---@param buf integer
---@param name string
---@return boolean
local function learn(buf, name)
  -- readlink fails at once on anything but a symlink, and builds no stat table.
  local link = uv.fs_readlink(name) ~= nil
  links[buf] = { name = name, link = link }
  return link
end

---@param buf integer
---@param name string
---@return boolean
local function is_link(buf, name)
  local known = links[buf]
  if known and known.name == name then
    return known.link
  end
  return learn(buf, name)
end

local group = api.nvim_create_augroup("acp_nvim_fs_path", { clear = true })
api.nvim_create_autocmd({ "BufReadPost", "BufWritePost", "BufFilePost", "FileChangedShellPost" }, {
  group = group,
  callback = function(ev)
    learn(ev.buf, api.nvim_buf_get_name(ev.buf))
  end,
})
api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
  group = group,
  callback = function(ev)
    links[ev.buf] = nil
  end,
})

---@param buf integer
---@return boolean
local function holds_a_file(buf)
  return api.nvim_buf_is_loaded(buf) and api.nvim_get_option_value("buftype", { buf = buf }) == ""
end

--- The loaded buffer that holds `path`, if any: by name first, then a buffer whose name leads to the same
--- real path (opened through a symlinked folder: same last name; through a symlinked file: a link).
---@param path string
---@return integer?
function M.find_buffer(path)
  local want = M.identity(path)
  local tail = basename(want)
  local others = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local name = api.nvim_buf_get_name(buf)
    if name == want or name == path then
      if holds_a_file(buf) then
        return buf
      end
    elseif name ~= "" and api.nvim_buf_is_loaded(buf) and (ends_in(name, tail) or is_link(buf, name)) then
      others[#others + 1] = buf
    end
  end
  for _, buf in ipairs(others) do
    if holds_a_file(buf) and M.identity(api.nvim_buf_get_name(buf)) == want then
      return buf
    end
  end
  return nil
end

--- Counts the changes of the buffer list that an index can miss (a buffer added, renamed, loaded, unloaded or
--- wiped): an index made at one count is that list's as long as the count stays.
M.generation = 0
api.nvim_create_autocmd({ "BufAdd", "BufFilePost", "BufReadPost", "BufUnload", "BufWipeout", "BufDelete" }, {
  group = group,
  callback = function()
    M.generation = M.generation + 1
  end,
})

---@class acp_nvim.BufferIndex
---@field by_name table<string, integer> each loaded buffer's name -> the buffer
---@field tails table<string, true> the last components of those names
---@field links boolean some buffer's name is a symlink

--- A buffer loaded since the index was made.
---@param index acp_nvim.BufferIndex
---@param buf integer
function M.index_add(index, buf)
  local name = api.nvim_buf_get_name(buf)
  if name ~= "" then
    index.by_name[name] = index.by_name[name] or buf
    index.tails[basename(name)] = true
    index.links = index.links or is_link(buf, name)
  end
end

--- The loaded buffers by name, for many lookups in a row (`M.find_indexed`): one pass over the buffers instead
--- of one per path (10,000 new files beside 100 buffers were a million API calls in one callback).
---@return acp_nvim.BufferIndex
function M.index()
  local index = { by_name = {}, tails = {}, links = false }
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      M.index_add(index, buf)
    end
  end
  return index
end

--- `M.find_buffer(path)`, through an index of the buffers made before. A path that is no buffer's name can
--- still be a buffer's file only under another name: one with a buffer's last component (a symlinked folder),
--- when some buffer's name is a link, or when the path is itself a link; only those are looked up in full, so
--- the answer is `M.find_buffer`'s.
---@param index acp_nvim.BufferIndex
---@param path string
---@return integer?
function M.find_indexed(index, path)
  local buf = index.by_name[path]
  if buf and holds_a_file(buf) and api.nvim_buf_get_name(buf) == path then
    return buf
  end
  if index.tails[basename(path)] or index.links or uv.fs_readlink(path) ~= nil then
    return M.find_buffer(path)
  end
  return nil
end

return M

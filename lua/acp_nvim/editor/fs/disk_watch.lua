--- While a turn runs, the folders of the buffers loaded under the session's roots are watched (libuv fs
--- events): a loaded file that changed behind its buffer is reported to the host (`host_api.disk_changed`),
--- which decides whether to follow it (`editor/fs/follow_disk.lua`). `M.unwatch` looks once more at every watched
--- buffer first. A file already changed behind its buffer when the watch began is not the agent's doing: it
--- counts only once it changes again; unless it was written after the turn began (`since`, from the host): the
--- watch is asked for with the turn's first chat change and the prompt goes out without waiting for it, so an
--- agent quick enough may write before Neovim runs it.
---
--- For a buffer with unsaved edits the disk's text as it was is kept from the start of the watch (or from
--- when the buffer became modified during it): `M.base(buf)`, the base of a merge when no tool call named
--- the file. One read of each such file; nothing for clean buffers.
local M = {}

local api = vim.api
local uv = vim.uv

local path_of = require("acp_nvim.editor.fs.path")
local stamp = require("acp_nvim.editor.fs.stamp")
local text = require("acp_nvim.editor.fs.disk_text")
local opt = require("acp_nvim.editor.answer").opt

--- Events of one file come in bursts (a temp file, a rename, a chmod): reported once they settle.
M.settle_ms = 20
--- How long one main-loop tick of a settle may look at the paths seen changing: an agent that creates 10,000
--- files beside the watched buffers has them looked at across ticks, the user's keys handled in between.
M.slice_ns = 4e6

--- buffer -> the disk's lines before the agent, for a buffer with unsaved edits
---@type table<integer, string[]>
local bases = {}

--- The disk's lines of a modified buffer's file from before the agent wrote, when kept.
---@param buf integer
---@return string[]?
function M.base(buf)
  return bases[buf]
end

--- The bases as they are now, the table itself: a follow queued before its turn ended (`follow_disk.lua`
--- follows on later ticks) keeps its turn's bases, which `M.unwatch` leaves behind when the last watch ends.
---@return table<integer, string[]>
function M.current_bases()
  return bases
end

--- The disk's lines now, after a merge: the base of the next edit no tool call names.
---@param buf integer
---@param lines string[]
function M.set_base(buf, lines)
  bases[buf] = lines
end

---@class acp_nvim.DiskWatch
---@field roots string[]
---@field since number seconds since the epoch, when the turn began (the host's clock, less its allowance)
---@field before acp_nvim.DiskBefore? the files when the prompt was sent, when it was sent from here
---@field dirs table<string, uv.uv_fs_event_t>
---@field changed table<string, true> full paths seen changing, not yet looked at
---@field stale table<string, string> files already changed behind their buffer when the watch began (not the
---  agent's doing): their stat then, so that they count only once they change again
---@field timer uv.uv_timer_t?

---@type table<string, acp_nvim.DiskWatch>
local watches = {}

---@class acp_nvim.DiskBefore
---@field stats table<string, string> each loaded file's stat (`disk_text.stat_key`), by name
---@field behind table<string, true> the files already changed behind their buffer
---@field bases table<integer, string[]> the disk's lines of each buffer with unsaved edits

--- The loaded files as they were when the user sent the prompt (`M.before_prompt`), for the watch that the
--- host starts for it: that watch travels with the prompt's first chat change and the prompt goes to the agent
--- without waiting for it, so an agent may write before Neovim runs it.
---@type acp_nvim.DiskBefore?
local before_prompt = nil

---@param name string
---@param roots string[]
---@return boolean
local function under(name, roots)
  for _, root in ipairs(roots) do
    if name == root or name:sub(1, #root + 1) == root .. "/" then
      return true
    end
  end
  return false
end

--- The loaded file buffers of a watch, by name.
---@param w acp_nvim.DiskWatch
---@return table<integer, string>
local function watched_buffers(w)
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" and under(name, w.roots) then
        out[buf] = name
      end
    end
  end
  return out
end

--- Whether `buf`'s file changed behind it during the watch.
---@param w acp_nvim.DiskWatch
---@param buf integer?
---@return boolean
local function behind(w, buf)
  local own = buf and api.nvim_buf_get_name(buf)
  return own ~= nil and stamp.disk_conflict(buf, own) ~= nil and w.stale[own] ~= text.stat_key(own)
end

--- The paths among `names` whose loaded buffer's file changed behind it during the watch.
---@param w acp_nvim.DiskWatch
---@param names string[]
---@param bufs table<string, integer> the buffers of the names
---@return string[]
local function behind_buffers(w, names, bufs)
  local out = {}
  for _, name in ipairs(names) do
    if behind(w, bufs[name]) then
      out[#out + 1] = name
    end
  end
  return out
end

---@param session_id string
---@param paths string[]
local function report(session_id, paths)
  if #paths > 0 then
    require("acp_nvim.host.api").disk_changed(session_id, paths)
  end
end

--- The paths seen changing, looked at in slices of `M.slice_ns` (each found behind its buffer reported with its
--- slice), the rest on a later tick after the input that came meanwhile. The watch's end looks at every
--- watched buffer once more, so a settle still under way then stops.
---@param session_id string
local function settle(session_id)
  local w = watches[session_id]
  if not w then
    return
  end
  local names = vim.tbl_keys(w.changed)
  w.changed = {}
  local index = path_of.index()
  local next_name = 1
  local function slice()
    if watches[session_id] ~= w then
      return
    end
    local deadline = uv.hrtime() + M.slice_ns
    local out = {}
    while next_name <= #names and uv.hrtime() < deadline do
      local name = names[next_name]
      next_name = next_name + 1
      if behind(w, path_of.find_indexed(index, name)) then
        out[#out + 1] = name
      end
    end
    report(session_id, out)
    if next_name <= #names then
      require("acp_nvim.util.after_input").schedule(slice)
    end
  end
  slice()
end

--- A path seen changing: looked at once the burst it belongs to settles. Runs in libuv's callback (a fast
--- context: no API call), one per event: a burst of 10,000 files is 30,000 of them, so each only notes its path
--- and restarts the timer, and one main-loop callback looks at them all.
---@param session_id string
---@param w acp_nvim.DiskWatch
---@param path string
local function note_change(session_id, w, path)
  w.changed[path] = true
  if not w.timer then
    w.timer = uv.new_timer()
  end
  w.timer:stop()
  w.timer:start(M.settle_ms, 0, function()
    vim.schedule(function()
      settle(session_id)
    end)
  end)
end

---@param session_id string
---@param w acp_nvim.DiskWatch
---@param dir string
local function watch_dir(session_id, w, dir)
  if w.dirs[dir] then
    return
  end
  local handle = uv.new_fs_event()
  if not handle then
    return
  end
  local ok = handle:start(dir, {}, function(e, filename)
    if e or not filename or watches[session_id] ~= w then
      return
    end
    note_change(session_id, w, dir .. "/" .. filename)
  end)
  if ok then
    w.dirs[dir] = handle
  else
    handle:close()
  end
end

--- What a buffer with unsaved edits is merged against when no tool call names its file.
---@param buf integer
---@param name string
local function keep_base(buf, name)
  if bases[buf] == nil and vim.bo[buf].modified and text.utf8_buffer(buf) then
    bases[buf] = text.disk_lines(name)
  end
end

---@param session_id string
---@param w acp_nvim.DiskWatch
---@param buf integer
---@param name string
local function add_buffer(session_id, w, buf, name)
  local before = w.before
  local stat = before and before.stats[name]
  if stat ~= nil then
    ---@cast before acp_nvim.DiskBefore
    if before.behind[name] then
      -- Changed behind its buffer before the prompt: not the agent's doing, until it changes again.
      w.stale[name] = stat
    elseif bases[buf] == nil and before.bases[buf] ~= nil then
      bases[buf] = before.bases[buf]
    end
    if text.stat_key(name) ~= stat then
      -- Written since the prompt was sent, before this watch began: the agent's.
      note_change(session_id, w, name)
    end
  elseif stamp.disk_conflict(buf, name) ~= nil then
    -- Its disk text is not what the buffer was loaded from. No base is better than that one, which would make
    -- the agent's change look like the user's undoing it.
    local st = uv.fs_stat(name)
    if st and st.mtime.sec + st.mtime.nsec / 1e9 >= w.since then
      -- Written since the turn began, before this watch did: the agent's, looked at like any change seen.
      note_change(session_id, w, name)
    else
      w.stale[name] = text.stat_key(name)
    end
  else
    keep_base(buf, name)
  end
  watch_dir(session_id, w, vim.fs.dirname(name))
end

--- The loaded files as they are now, just before a prompt goes to the host: one stat of each, and one read of
--- each that has unsaved edits (what `M.watch` would do, done before the agent can write anything).
function M.before_prompt()
  ---@type acp_nvim.DiskBefore
  local now = { stats = {}, behind = {}, bases = {} }
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = api.nvim_buf_get_name(buf)
      if name ~= "" then
        now.stats[name] = text.stat_key(name)
        if stamp.disk_conflict(buf, name) ~= nil then
          now.behind[name] = true
        elseif vim.bo[buf].modified and text.utf8_buffer(buf) then
          now.bases[buf] = text.disk_lines(name)
        end
      end
    end
  end
  before_prompt = now
end

--- Watch the files loaded under `roots` while the session's turn runs.
---@param session_id string
---@param roots string[]
---@param since number? when the turn began (seconds since the epoch); files written since are the agent's
function M.watch(session_id, roots, since)
  M.unwatch(session_id, true)
  local real = {}
  for _, root in ipairs(roots or {}) do
    real[#real + 1] = (uv.fs_realpath(root) or root):gsub("/+$", "")
  end
  ---@type acp_nvim.DiskWatch
  local w =
    { roots = real, since = since or math.huge, before = before_prompt, dirs = {}, changed = {}, stale = {} }
  before_prompt = nil
  watches[session_id] = w
  for buf, name in pairs(watched_buffers(w)) do
    add_buffer(session_id, w, buf, name)
  end
end

--- Stop watching; unless `quiet`, first report every watched buffer whose file changed behind it.
---@param session_id string
---@param quiet boolean?
function M.unwatch(session_id, quiet)
  local w = watches[session_id]
  if not w then
    return
  end
  watches[session_id] = nil
  if w.timer then
    w.timer:stop()
    w.timer:close()
  end
  for _, handle in pairs(w.dirs) do
    handle:stop()
    handle:close()
  end
  if not opt(quiet) then
    local names, bufs = {}, {}
    for buf, name in pairs(watched_buffers(w)) do
      names[#names + 1], bufs[name] = name, buf
    end
    report(session_id, behind_buffers(w, names, bufs))
  end
  if next(watches) == nil then
    bases = {}
  end
end

--- Whether a session's watch is on (for tests and :checkhealth).
---@param session_id string
---@return boolean
function M.watching(session_id)
  return watches[session_id] ~= nil
end

local group = api.nvim_create_augroup("acp_nvim_disk_watch", { clear = true })
api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufFilePost" }, {
  group = group,
  callback = function(ev)
    local name = api.nvim_buf_get_name(ev.buf)
    for sid, w in pairs(watches) do
      if name ~= "" and vim.bo[ev.buf].buftype == "" and under(name, w.roots) then
        add_buffer(sid, w, ev.buf, name)
      end
    end
  end,
})
api.nvim_create_autocmd("BufModifiedSet", {
  group = group,
  callback = function(ev)
    if not vim.bo[ev.buf].modified then
      bases[ev.buf] = nil
      return
    end
    local name = api.nvim_buf_get_name(ev.buf)
    for _, w in pairs(watches) do
      if name ~= "" and under(name, w.roots) and stamp.disk_conflict(ev.buf, name) == nil then
        keep_base(ev.buf, name)
        return
      end
    end
  end,
})
api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
  group = group,
  callback = function(ev)
    bases[ev.buf] = nil
  end,
})

return M

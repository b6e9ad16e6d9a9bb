--- Edits the agent made on disk itself, carried into Neovim: the host decides which files and what they held
--- before (`acp_nvim/client/agent_edits.py`); this module makes each loaded buffer show the new text and puts
--- the edit in the review, like an `fs/write_text_file`.
---
--- `M.apply(session_id, tool_call_id, files)`: for each `{ path, known, absent, before }`
---   * a clean buffer of the file gets the new text as minimal line edits in one undo step (cursor, view,
---     marks and folds stay), is taken as the file's own (as after `:e`, no "changed on disk" warning), and
---     its change is recorded for review against what it showed;
---   * a buffer with unsaved edits is merged three-way (`acp_nvim.fs.merge`: base = the file before the agent
---     wrote, ours = the buffer, theirs = the disk) and stays modified; without a known base it is not touched;
---   * a file no buffer holds, whose previous content is known, is loaded into a hidden buffer so that its
---     edit is reviewable (a file the agent created is removed again by rejecting it).
--- A buffer whose file is as Neovim last read or wrote it is left alone (the client's own writes, no change).
---
--- `M.watch(session_id, roots)` / `M.unwatch(session_id)`: while a turn runs, the folders of the buffers
--- loaded under the session's roots are watched (libuv fs events); a loaded file that changed behind its
--- buffer is reported to the host (`host_api.disk_changed`), which decides whether to follow it. Unwatching
--- looks once more at every watched buffer first. For a buffer with unsaved edits the disk text as it was is
--- kept from the start of the watch (or from when the buffer became modified during it): the base of a
--- merge when no tool call named the file.
local M = {}

local api = vim.api
local uv = vim.uv

local edit = require("acp_nvim.fs.edit")
local path_of = require("acp_nvim.fs.path")
local read = require("acp_nvim.fs.read")
local save = require("acp_nvim.fs.save")
local stamp = require("acp_nvim.fs.stamp")
local opt = require("acp_nvim.result").opt

--- Events of one file come in bursts (a temp file, a rename, a chmod): reported once they settle.
M.settle_ms = 20

--- Largest file followed (as the host's snapshots).
M.max_bytes = 4 * 1024 * 1024

---@param msg string
---@param level integer?
local function notify(msg, level)
  vim.notify("acp: " .. msg, level or vim.log.levels.WARN)
end

---@param path string
---@return string
local function short(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

---@class acp_nvim.DiskEdit
---@field path string
---@field known boolean
---@field absent boolean?
---@field before string?

--- buffer -> the disk's lines before the agent, for a buffer with unsaved edits (see the module's comment)
---@type table<integer, string[]>
local bases = {}

--- buffer -> the file's stat when the user was told its buffer was left alone
---@type table<integer, string>
local left_alone = {}

---@param buf integer
---@return boolean
local function utf8_buffer(buf)
  local fenc = vim.bo[buf].fileencoding
  return fenc == "" or fenc == "utf-8"
end

--- `edit.to_lines` for the common case (no CRLF), without vim.split's iterator: a 1 MB file is split in
--- under a millisecond instead of several, which is most of what following an edit costs.
---@param text string
---@return string[] lines, boolean eol
local function split_lines(text)
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
local function disk_lines(path)
  local text = read.read_disk(path, M.max_bytes)
  if not text or text:find("\0", 1, true) then
    return nil, nil
  end
  return split_lines(text)
end

--- Identity of a file's content as stat sees it: a write (in place or by rename) changes it.
---@param name string
---@return string
local function stat_key(name)
  local st = uv.fs_stat(name)
  return st and ("%d:%d:%d:%d"):format(st.ino, st.mtime.sec, st.mtime.nsec, st.size) or "absent"
end

---@param buf integer
---@param session_id string
---@param tool_call_id string?
---@param theirs string[]
---@param eol boolean
---@param read_as string
local function follow_clean(buf, session_id, tool_call_id, theirs, eol, read_as)
  local review = require("acp_nvim.review")
  local bo = vim.bo[buf]
  local current = edit.buf_lines(buf)
  local original = review.original_lines(buf, session_id, current)
  local old_eol, old_fixeol = bo.eol, bo.fixeol
  edit.break_undo(buf)
  edit.apply_hunks(buf, edit.diff(current, theirs), theirs)
  if #theirs > 0 then
    bo.eol = eol
    if not eol then
      bo.fixeol = false
    end
  end
  bo.modified = false
  local name = api.nvim_buf_get_name(buf)
  local before_adopt = stat_key(name)
  pcall(save.adopt_file, buf, uv.fs_realpath(name) or name)
  stamp.record(buf)
  if before_adopt ~= read_as then
    -- Written again since it was read: the stamp just recorded would hide that write; forgotten, the next
    -- look compares the content and follows it.
    stamp.forget(buf)
  end
  review.record(buf, session_id, original, {
    tool_call_id = tool_call_id,
    eol = old_eol,
    fixeol = old_fixeol,
    lines = theirs,
  })
end

---@param buf integer
---@param session_id string
---@param tool_call_id string?
---@param base string[]?
---@param theirs string[]
---@param eol boolean
---@param read_as string
local function follow_modified(buf, session_id, tool_call_id, base, theirs, eol, read_as)
  local name = short(api.nvim_buf_get_name(buf))
  local has_merge, merge = pcall(require, "acp_nvim.fs.merge")
  if not has_merge or base == nil then
    -- Never a guess over the user's text: the buffer stays as it is, and so does its record of the file, so
    -- that no later write of the agent goes over it either. Said once for each state of the file.
    if left_alone[buf] == read_as then
      return
    end
    left_alone[buf] = read_as
    notify(
      (
        "the agent changed %s on disk while its buffer has unsaved edits; the buffer is left as it is"
        .. " (:w keeps yours, :e! takes the agent's)"
      ):format(name)
    )
    return
  end
  local review = require("acp_nvim.review")
  local ours = edit.buf_lines(buf)
  local original = review.original_lines(buf, session_id, ours)
  local res = merge.apply_to_buffer(buf, base, theirs, {
    eol = eol,
    label = tool_call_id and ("agent (" .. tool_call_id .. ")") or "agent",
  })
  -- The file on disk is the agent's now: Neovim must not warn that it changed behind the buffer.
  pcall(save.checktime_answering, buf, "")
  stamp.record(buf)
  if stat_key(api.nvim_buf_get_name(buf)) ~= read_as then
    stamp.forget(buf)
  end
  bases[buf] = theirs
  review.record(buf, session_id, original, { tool_call_id = tool_call_id, lines = res and res.lines })
  if res and (res.conflicts or 0) > 0 then
    notify(("%d conflicts between your unsaved edits and the agent's edit of %s"):format(res.conflicts, name))
  elseif res and res.user_text_replaced then
    notify(("the agent's edit of %s replaced some of your unsaved text; `u` brings it back"):format(name))
  end
end

---@param session_id string
---@param tool_call_id string?
---@param file acp_nvim.DiskEdit
local function review_unloaded(session_id, tool_call_id, file)
  local theirs = disk_lines(file.path)
  if not theirs then
    return
  end
  local buf = vim.fn.bufadd(file.path)
  -- As fs.write's hidden buffers: never an E325 ATTENTION prompt nobody sees.
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  local ok = pcall(vim.fn.bufload, buf)
  if not ok or not api.nvim_buf_is_loaded(buf) then
    return
  end
  stamp.record(buf)
  local before, eol = {}, true
  if not file.absent then
    before, eol = split_lines(file.before or "")
  end
  local review = require("acp_nvim.review")
  review.record(
    buf,
    session_id,
    before,
    { tool_call_id = tool_call_id, created = file.absent == true, eol = eol }
  )
  for _, f in ipairs(review.files(session_id)) do
    if f.bufnr == buf then
      return
    end
  end
  pcall(api.nvim_buf_delete, buf, { unload = true, force = true })
end

---@param session_id string
---@param tool_call_id string?
---@param file acp_nvim.DiskEdit
local function follow_one(session_id, tool_call_id, file)
  local buf = path_of.find_buffer(file.path)
  if not buf then
    if file.known then
      review_unloaded(session_id, tool_call_id, file)
    end
    return
  end
  local name = api.nvim_buf_get_name(buf)
  if stamp.disk_conflict(buf, name) == nil then
    return
  end
  if not utf8_buffer(buf) then
    notify(("the agent changed %s on disk; its buffer is not UTF-8, reload it with :e"):format(short(name)))
    return
  end
  local read_as = stat_key(name)
  local theirs, eol = disk_lines(name)
  if not theirs then
    return
  end
  if not vim.bo[buf].modified then
    follow_clean(buf, session_id, tool_call_id, theirs, eol == true, read_as)
    return
  end
  local base = bases[buf]
  if file.known then
    base = file.absent and {} or split_lines(file.before or "")
  end
  follow_modified(buf, session_id, tool_call_id, base, theirs, eol == true, read_as)
end

--- Follow the agent's on-disk edits of `files` (see the module's comment). Never raises.
---@param session_id string
---@param tool_call_id string|userdata|nil
---@param files acp_nvim.DiskEdit[]
function M.apply(session_id, tool_call_id, files)
  local call = opt(tool_call_id) --[[@as string?]]
  for _, file in ipairs(files or {}) do
    file.before = opt(file.before)
    local ok, e = pcall(follow_one, session_id, call, file)
    if not ok then
      notify(
        ("cannot follow the agent's edit of %s: %s"):format(tostring(file.path), tostring(e)),
        vim.log.levels.ERROR
      )
    end
  end
end

-- ---- the watcher ---------------------------------------------------------------------------------------

---@class acp_nvim.DiskWatch
---@field roots string[]
---@field dirs table<string, uv.uv_fs_event_t>
---@field changed table<string, true> full paths seen changing, not yet looked at
---@field stale table<string, string> files already changed behind their buffer when the watch began (not the
---  agent's doing): their stat then, so that they count only once they change again
---@field timer uv.uv_timer_t?

---@type table<string, acp_nvim.DiskWatch>
local watches = {}

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

--- The paths among `names` whose loaded buffer's file changed behind it during the watch.
---@param w acp_nvim.DiskWatch
---@param names string[]
---@param bufs table<string, integer>? the buffers of the names, when known (no lookup among all buffers)
---@return string[]
local function behind_buffers(w, names, bufs)
  local out = {}
  for _, name in ipairs(names) do
    local buf = bufs and bufs[name] or path_of.find_buffer(name)
    local own = buf and api.nvim_buf_get_name(buf)
    if own and stamp.disk_conflict(buf, own) ~= nil and w.stale[own] ~= stat_key(own) then
      out[#out + 1] = name
    end
  end
  return out
end

---@param session_id string
---@param paths string[]
local function report(session_id, paths)
  if #paths > 0 then
    require("acp_nvim.host_api").disk_changed(session_id, paths)
  end
end

---@param session_id string
local function settle(session_id)
  local w = watches[session_id]
  if not w then
    return
  end
  local names = vim.tbl_keys(w.changed)
  w.changed = {}
  report(session_id, behind_buffers(w, names))
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
    if e or not filename then
      return
    end
    vim.schedule(function()
      local live = watches[session_id]
      if live ~= w then
        return
      end
      w.changed[dir .. "/" .. filename] = true
      if not w.timer then
        w.timer = uv.new_timer()
      end
      w.timer:stop()
      w.timer:start(M.settle_ms, 0, function()
        vim.schedule(function()
          settle(session_id)
        end)
      end)
    end)
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
  if bases[buf] == nil and vim.bo[buf].modified and utf8_buffer(buf) then
    bases[buf] = disk_lines(name)
  end
end

---@param session_id string
---@param w acp_nvim.DiskWatch
---@param buf integer
---@param name string
local function add_buffer(session_id, w, buf, name)
  if stamp.disk_conflict(buf, name) ~= nil then
    w.stale[name] = stat_key(name)
  end
  keep_base(buf, name)
  watch_dir(session_id, w, vim.fs.dirname(name))
end

--- Watch the files loaded under `roots` while the session's turn runs.
---@param session_id string
---@param roots string[]
function M.watch(session_id, roots)
  M.unwatch(session_id, true)
  local real = {}
  for _, root in ipairs(roots or {}) do
    real[#real + 1] = (uv.fs_realpath(root) or root):gsub("/+$", "")
  end
  ---@type acp_nvim.DiskWatch
  local w = { roots = real, dirs = {}, changed = {}, stale = {} }
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

local group = api.nvim_create_augroup("acp_nvim_follow_disk", { clear = true })
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
    left_alone[ev.buf] = nil
  end,
})

return M

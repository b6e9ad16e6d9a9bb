--- Edits the agent made on disk itself, carried into Neovim: the host decides which files and what they held
--- before (`acp_nvim/client/files/agent_edits.py`); this module makes each loaded buffer show the new text and puts
--- the edit in the review, like an `fs/write_text_file`. Edits no tool call names are found by
--- `editor/fs/disk_watch.lua` and come back here through the host.
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
--- `real` is the real path the host found inside the session's roots (absent or "": `path` itself): a file
--- whose path resolves elsewhere now (made a link, or a folder on its way, since the host looked) is neither
--- read nor reviewed.
---
--- Files are followed in the order they come, in slices of `M.slice_ns` of one main-loop tick each: 2,000 tool
--- calls completed at once (each a file to load, diff and record) go on across ticks, the keys and requests
--- that arrived meanwhile handled in between. A file's queued follows are done before an `fs/*` request on
--- it (`M.settle(path)`), so that the agent's requests find its earlier edits where they were made.
local M = {}

local api = vim.api
local uv = vim.uv

local edit = require("acp_nvim.editor.fs.edit")
local path_of = require("acp_nvim.editor.fs.path")
local save = require("acp_nvim.editor.fs.save")
local stamp = require("acp_nvim.editor.fs.stamp")
local text = require("acp_nvim.editor.fs.disk_text")
local watch = require("acp_nvim.editor.fs.disk_watch")
local opt = require("acp_nvim.editor.answer").opt

local notify = require("acp_nvim.util.notify")

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
---@field real string?

--- buffer -> the file's stat when the user was told its buffer was left alone
---@type table<integer, string>
local left_alone = {}

---@param buf integer
---@param session_id string
---@param tool_call_id string?
---@param theirs string[]
---@param eol boolean
---@param read_as string
local function follow_clean(buf, session_id, tool_call_id, theirs, eol, read_as)
  local review = require("acp_nvim.editor.review")
  local bo = vim.bo[buf]
  local current = edit.buf_lines(buf)
  local original = review.original_lines(buf, session_id, current)
  local old_eol, old_fixeol = bo.eol, bo.fixeol
  edit.break_undo(buf)
  edit.apply_hunks(buf, edit.diff(current, theirs), theirs)
  edit.set_file_eol(buf, theirs, eol)
  bo.modified = false
  local name = api.nvim_buf_get_name(buf)
  local before_adopt = text.stat_key(name)
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
  if base == nil then
    -- Never a guess over the user's text: the buffer stays as it is, and so does its record of the file, so
    -- that no later write of the agent goes over it either. Said once for each state of the file.
    if left_alone[buf] == read_as then
      return
    end
    left_alone[buf] = read_as
    notify.warn(
      (
        "the agent changed %s on disk while its buffer has unsaved edits; the buffer is left as it is"
        .. " (:w keeps yours, :e! takes the agent's)"
      ):format(name)
    )
    return
  end
  local review = require("acp_nvim.editor.review")
  local ours = edit.buf_lines(buf)
  local original = review.original_lines(buf, session_id, ours)
  local res = require("acp_nvim.editor.fs.merge").apply_to_buffer(buf, base, theirs, {
    eol = eol,
    label = tool_call_id and ("agent (" .. tool_call_id .. ")") or "agent",
  })
  -- The file on disk is the agent's now: Neovim must not warn that it changed behind the buffer.
  pcall(save.checktime_answering, buf, "")
  stamp.record(buf)
  if text.stat_key(api.nvim_buf_get_name(buf)) ~= read_as then
    stamp.forget(buf)
  end
  watch.set_base(buf, theirs)
  review.record(buf, session_id, original, { tool_call_id = tool_call_id, lines = res.lines })
  -- The merge never replaces the user's text: what overlaps is a conflict, said here.
  if res.conflicts > 0 then
    notify.warn(
      ("%d conflicts between your unsaved edits and the agent's edit of %s"):format(res.conflicts, name)
    )
  end
end

---@param session_id string
---@param tool_call_id string?
---@param file acp_nvim.DiskEdit
---@param index acp_nvim.BufferIndex
local function review_unloaded(session_id, tool_call_id, file, index)
  local theirs = text.disk_lines(file.path)
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
    before, eol = text.split_lines(file.before or "")
  end
  local review = require("acp_nvim.editor.review")
  review.record(
    buf,
    session_id,
    before,
    { tool_call_id = tool_call_id, created = file.absent == true, eol = eol }
  )
  if review.has_file(session_id, buf) then
    path_of.index_add(index, buf)
    return
  end
  pcall(api.nvim_buf_delete, buf, { unload = true, force = true })
end

---@param session_id string
---@param tool_call_id string?
---@param file acp_nvim.DiskEdit
---@param index acp_nvim.BufferIndex the loaded buffers, kept up to date by the follows of this slice
---@param bases table<integer, string[]> the turn's bases (`disk_watch.current_bases` when it was queued)
local function follow_one(session_id, tool_call_id, file, index, bases)
  local real = opt(file.real)
  real = (real == nil or real == "") and file.path or real
  local now = uv.fs_realpath(file.path)
  if now ~= nil and now ~= real then
    -- Changed under the host's check (a link made since): what it leads to now was never judged.
    notify.warn(
      ("the agent's edit of %s is not followed: it no longer leads to %s"):format(short(file.path), real)
    )
    return
  end
  local buf = path_of.find_indexed(index, file.path)
  if not buf then
    if file.known then
      review_unloaded(session_id, tool_call_id, file, index)
    end
    return
  end
  local name = api.nvim_buf_get_name(buf)
  if stamp.disk_conflict(buf, name) == nil then
    return
  end
  if not text.utf8_buffer(buf) then
    notify.warn(
      ("the agent changed %s on disk; its buffer is not UTF-8, reload it with :e"):format(short(name))
    )
    return
  end
  local read_as = text.stat_key(name)
  local theirs, eol = text.disk_lines(name)
  if not theirs then
    return
  end
  if not vim.bo[buf].modified then
    follow_clean(buf, session_id, tool_call_id, theirs, eol == true, read_as)
    return
  end
  local base = bases[buf]
  if file.known then
    base = file.absent and {} or text.split_lines(file.before or "")
  end
  follow_modified(buf, session_id, tool_call_id, base, theirs, eol == true, read_as)
end

--- How long one main-loop tick may follow files for; the rest is followed on later ticks.
M.slice_ns = 8e6

---@class acp_nvim.DiskFollow
---@field session_id string
---@field tool_call_id string?
---@field file acp_nvim.DiskEdit
---@field real string the file's real path (`path_of.identity`): an `fs/*` request names it so
---@field done boolean? followed ahead of its turn, by `M.settle`
---@field bases table<integer, string[]> the disk's lines before the agent, of the turn that queued it: the
--- turn's end (its watch's) may come before the follow

--- The files still to follow, in order: `queue[first]` .. `queue[last]`.
---@type table<integer, acp_nvim.DiskFollow>
local queue = {}
local first, last = 1, 0
--- real path -> how many of the queued follows name it
---@type table<string, integer>
local pending = {}
local scheduled = false
--- Run once the queue is empty (`M.when_settled`).
---@type fun()[]
local on_settled = {}

---@param item acp_nvim.DiskFollow
---@param index acp_nvim.BufferIndex
local function follow_item(item, index)
  local file = item.file
  pending[item.real] = pending[item.real] - 1
  if pending[item.real] == 0 then
    pending[item.real] = nil
  end
  local ok, e = pcall(follow_one, item.session_id, item.tool_call_id, file, index, item.bases)
  if not ok then
    notify.error(("cannot follow the agent's edit of %s: %s"):format(tostring(file.path), tostring(e)))
  end
end

--- The loaded buffers by name, as of `path_of.generation` = `index_generation`: made again only when the
--- buffers changed otherwise than by the follows themselves, which add theirs (with 6,000 buffers, making
--- it is ~5 ms, most of a slice).
---@type acp_nvim.BufferIndex?
local index = nil
local index_generation = -1

---@return acp_nvim.BufferIndex
local function current_index()
  if index == nil or index_generation ~= path_of.generation then
    index, index_generation = path_of.index(), path_of.generation
  end
  return index
end

--- Follows queued files for one slice.
local function drain()
  local deadline = uv.hrtime() + M.slice_ns
  local buffers = current_index()
  while first <= last do
    local item = queue[first]
    queue[first] = nil
    first = first + 1
    if not item.done then
      follow_item(item, buffers)
    end
    index_generation = path_of.generation
    if uv.hrtime() >= deadline then
      break
    end
  end
  if first > last then
    -- Nothing left to follow: the index is not kept for the next burst.
    index, index_generation = nil, -1
    local waiting = on_settled
    on_settled = {}
    for _, callback in ipairs(waiting) do
      local ok, e = pcall(callback)
      if not ok then
        notify.error(("after the agent's edits were followed: %s"):format(tostring(e)))
      end
    end
  end
end

local function continue()
  scheduled = false
  drain()
  if first <= last and not scheduled then
    scheduled = true
    require("acp_nvim.util.after_input").schedule(continue)
  end
end

--- Follow the agent's on-disk edits of `files` (see the module's comment), from the next tick on: a call per
--- tool call comes from the host, 2,000 of them at once are read before any request that came after them,
--- so each only queues its files. Never raises.
---@param session_id string
---@param tool_call_id string|userdata|nil
---@param files acp_nvim.DiskEdit[]
function M.apply(session_id, tool_call_id, files)
  local call = opt(tool_call_id) --[[@as string?]]
  for _, file in ipairs(files or {}) do
    file.before = opt(file.before)
    last = last + 1
    local real = path_of.identity(file.path)
    queue[last] = {
      session_id = session_id,
      tool_call_id = call,
      file = file,
      real = real,
      bases = watch.current_bases(),
    }
    pending[real] = (pending[real] or 0) + 1
  end
  if not scheduled then
    scheduled = true
    require("acp_nvim.util.after_input").schedule(continue)
  end
end

--- Follows now the queued edits of `path`, in their order, ahead of the rest (the files are independent):
--- an `fs/*` request of the agent, or "follow the agent", finds the file as its earlier edits left it.
---@param path string
function M.settle(path)
  if next(pending) == nil then
    return
  end
  local real = path_of.identity(path)
  if pending[real] == nil then
    return
  end
  local buffers = current_index()
  for at = first, last do
    local item = queue[at]
    if item.real == real and not item.done then
      item.done = true
      follow_item(item, buffers)
      index_generation = path_of.generation
    end
  end
end

--- Runs `callback` once every queued edit is followed: at once when none is queued, else after the slice that
--- follows the last (the review of a burst of 2,000 edits waits for them without holding Neovim).
---@param callback fun()
function M.when_settled(callback)
  if first > last then
    callback()
    return
  end
  on_settled[#on_settled + 1] = callback
end

--- How many files are still to follow (for tests and :checkhealth).
---@return integer
function M.pending()
  return last - first + 1
end

api.nvim_create_autocmd({ "BufUnload", "BufWipeout" }, {
  group = api.nvim_create_augroup("acp_nvim_follow_disk", { clear = true }),
  callback = function(ev)
    left_alone[ev.buf] = nil
  end,
})

return M

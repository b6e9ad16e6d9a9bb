--- What an agent's session last saw of a file through Neovim: the base its next `fs/write_text_file` of that
--- file derives from (`fs.write` merges the user's edits against it, `acp_nvim.fs.merge`).
---
--- The host decides which requests set a session's view and which writes derive from it
--- (`acp_nvim/app/editor/files.py`); this module keeps the text. A session's view of a buffer is
---   * after a whole `fs/read_text_file`: the text it was answered (the buffer's, unsaved edits included, a
---     conflict read as the agent's side);
---   * after a `line`/`limit` read: its previous view (or the file on disk, when it had none) with the
---     differences the read showed it taken in, those lying wholly inside the lines it read; a difference
---     that straddles the slice's edge was not seen whole and stays as the previous view had it;
---   * after its write: the text it wrote.
--- One view per session and buffer (a new one replaces the old), at most `M.MAX_VIEWS` per session (the oldest
--- goes first: that file's next write merges against the disk), dropped when the buffer is unloaded or the
--- session ends (`M.forget`). Each holds the lines as Lua strings: the size of the file, once.
local M = {}

local edit = require("acp_nvim.editor.fs.edit")

local api = vim.api

--- Memory, not policy: more files than this read by one session and the oldest view goes.
M.MAX_VIEWS = 32

--- session id -> buffer -> { lines, seq, tick }; `tick`: the buffer's b:changedtick when `lines` were exactly
--- its lines (a whole read without conflicts, an agent write that merged nothing), else nil.
---@type table<string, table<integer, { lines: string[], seq: integer, tick: integer? }>>
local views = {}
local seq = 0

---@param session string
---@param buf integer
---@param lines string[]
---@param tick integer?
local function keep(session, buf, lines, tick)
  seq = seq + 1
  local of = views[session] or {}
  views[session] = of
  of[buf] = { lines = lines, seq = seq, tick = tick }
  while vim.tbl_count(of) > M.MAX_VIEWS do
    local oldest, at = nil, math.huge
    for b, v in pairs(of) do
      if v.seq < at then
        oldest, at = b, v.seq
      end
    end
    of[oldest] = nil
  end
end

--- `base` with the differences of `base` -> `now` taken in that lie wholly in `now`'s 0-based rows
--- [from, to): what an agent that knew `base` knows after reading those rows of `now`.
---@param base string[]
---@param now string[]
---@param from integer
---@param to integer
---@return string[]
local function seen(base, now, from, to)
  local out, at = {}, 0
  for _, h in ipairs(edit.diff(base, now)) do
    local sa, ca, sb, cb = h[1], h[2], h[3], h[4]
    local a0 = ca > 0 and sa - 1 or sa
    local b0 = cb > 0 and sb - 1 or sb
    -- A deletion is seen when the rows around its point were read.
    local inside = cb > 0 and (b0 >= from and b0 + cb <= to) or (b0 > from and b0 < to)
    if inside then
      for i = at + 1, a0 do
        out[#out + 1] = base[i]
      end
      for i = b0 + 1, b0 + cb do
        out[#out + 1] = now[i]
      end
      at = a0 + ca
    end
  end
  for i = at + 1, #base do
    out[#out + 1] = base[i]
  end
  return out
end

--- The session read rows `line`.. (`limit` of them; nil, nil: all) of `buf`, whose text as the agent reads it
--- is `lines_of()`; `disk` gives the file's lines when the session has no view yet (only called for a slice).
--- Both are called only when needed: a slice of a clean buffer the session has no view of keeps nothing, and
--- fetching a 100,000-line buffer for it would cost ~10 ms.
---@param session string
---@param buf integer
---@param lines_of fun(): string[]
---@param line integer?
---@param limit integer?
---@param disk fun(): string[]
---@param buffers_own boolean? `lines_of()` are the buffer's lines as they are now
function M.read(session, buf, lines_of, line, limit, disk, buffers_own)
  if line == nil and limit == nil then
    keep(session, buf, lines_of(), buffers_own and api.nvim_buf_get_changedtick(buf) or nil)
    return
  end
  local had = views[session] and views[session][buf]
  if not had and not vim.bo[buf].modified then
    -- The slice shows what the disk holds: the disk stays the base.
    return
  end
  local lines = lines_of()
  local from = (line or 1) - 1
  local to = limit and from + limit or #lines
  keep(session, buf, seen(had and had.lines or disk(), lines, from, to))
end

--- The session wrote `lines` into the file of `buf`.
---@param session string
---@param buf integer
---@param lines string[]
---@param buffers_own boolean? `lines` are the buffer's lines as they are now
function M.wrote(session, buf, lines, buffers_own)
  keep(session, buf, lines, buffers_own and api.nvim_buf_get_changedtick(buf) or nil)
end

--- The buffer's lines, taken from the session's view when that holds them still (no change since): fetching
--- 100,000 lines holds Neovim ~10 ms.
---@param session string?
---@param buf integer
---@return string[]
function M.buffer_lines(session, buf)
  local v = session and views[session] and views[session][buf]
  if v and v.tick == api.nvim_buf_get_changedtick(buf) then
    return v.lines
  end
  return edit.buf_lines(buf)
end

--- The session's view of `buf`, or nil.
---@param session string
---@param buf integer
---@return string[]?
function M.get(session, buf)
  local v = views[session] and views[session][buf]
  return v and v.lines or nil
end

--- Forget a session's views (it ended).
---@param session string
function M.forget(session)
  views[session] = nil
end

api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
  group = api.nvim_create_augroup("acp_nvim_fs_view", { clear = true }),
  callback = function(ev)
    for session, of in pairs(views) do
      of[ev.buf] = nil
      if next(of) == nil then
        views[session] = nil
      end
    end
  end,
})

return M

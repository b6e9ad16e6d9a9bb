--- Three-way merge of an agent's edit with the user's unsaved buffer, so that nothing of the user's is lost.
---
--- base: the text the agent's write derives from (what its session last saw of the file, `fs.view`, else the
--- file on disk before the agent wrote); ours: the buffer; theirs: the agent's text. Each side's changes
--- against base come from `vim.diff` (xdiff, in C; through `fs.edit.diff`, which spares it the unchanged head
--- and tail). Changes of one side only are taken; the same change on both sides is taken once; changes whose
--- base ranges overlap (or that insert different lines at one point) are compared side against side: shared
--- lines are taken once, and where one side holds exactly the base's lines the other side's are taken. What
--- remains becomes a conflict, written as git-style markers with the user's lines first:
---
---     <<<<<<< yours
---     the buffer's lines
---     =======
---     the agent's lines
---     >>>>>>> agent
---
--- Lines that both sides of a conflict share at its start or end are kept outside the markers. Changes next to
--- each other (one ends where the other starts) are not a conflict: both are kept.
---
--- `apply_to_buffer` is the way in for an edit the agent made on disk itself; `fs.write` (the agent's
--- `fs/write_text_file`) goes through `acp_nvim.fs.unsaved`, which writes the disk while the buffer keeps the
--- user's edits; `acp_nvim.fs.conflict` tracks and resolves the conflicts.
local M = {}

local notify = require("acp_nvim.util.notify")

--- A three-way merge's result: the merged lines and, 1-based in them, each conflict's `<<<<<<<`,
--- `=======` and `>>>>>>>` lines.
---@class acp_nvim.Merge3
---@field lines string[]
---@field conflicts { first: integer, separator: integer, last: integer, base: string[] }[] `base`: the base
---  lines the conflict stands for

local edit = require("acp_nvim.editor.fs.edit")

M.OURS_MARKER = "<<<<<<<"
M.SEPARATOR = "======="
M.THEIRS_MARKER = ">>>>>>>"

--- Most lines changed in place for `side_hunks` to keep to its positional scan.
local POSITIONAL_MAX_LINES = 256

--- Hunks turning `base` into `side`. A side with as many lines as base whose differences are a few lines
--- changed in place (the usual unsaved edit) is diffed by comparing lines at the same position: the same
--- hunks as xdiff's for such edits, without joining and hashing the whole file once more. Anything else goes
--- to xdiff (`fs.edit.diff`).
---@param base string[]
---@param side string[]
---@return integer[][]
local function side_hunks(base, side)
  local n = #base
  if n ~= #side then
    return edit.diff(base, side)
  end
  local hunks, changed, i = {}, 0, 1
  while i <= n do
    if base[i] ~= side[i] then
      local j = i
      while j < n and base[j + 1] ~= side[j + 1] do
        j = j + 1
      end
      changed = changed + (j - i + 1)
      if changed > POSITIONAL_MAX_LINES then
        return edit.diff(base, side)
      end
      hunks[#hunks + 1] = { i, j - i + 1, i, j - i + 1 }
      i = j + 1
    else
      i = i + 1
    end
  end
  return hunks
end

--- The changes turning `base` into `side`, as 0-based half-open base ranges with their net line count
--- (`s == e`: an insertion before base line `s`).
---@param base string[]
---@param side string[]
---@param tag integer
---@return { s: integer, e: integer, net: integer, side: integer }[]
local function changes(base, side, tag)
  local out = {}
  for _, h in ipairs(side_hunks(base, side)) do
    local sa, ca, cb = h[1], h[2], h[4]
    -- xdiff numbers an empty side by the line before it.
    local s = ca > 0 and sa - 1 or sa
    out[#out + 1] = { s = s, e = s + ca, net = cb - ca, side = tag }
  end
  return out
end

--- Whether two changes of different sides touch the same base lines, or insert at the same point. A change
--- that ends where the other starts does not: their order in the result is clear.
---@param a { s: integer, e: integer }
---@param b { s: integer, e: integer }
---@return boolean
local function clash(a, b)
  local a_point, b_point = a.s == a.e, b.s == b.e
  if a_point and b_point then
    return a.s == b.s
  elseif a_point then
    return b.s < a.s and a.s < b.e
  elseif b_point then
    return a.s < b.s and b.s < a.e
  end
  return a.s < b.e and b.s < a.e
end

--- Both sides' changes, grouped so that a group holds every change that clashes with another of it; groups
--- come in base order and do not clash with each other.
---@param ours_changes table[]
---@param theirs_changes table[]
---@return { s: integer, e: integer, members: table[] }[]
local function groups(ours_changes, theirs_changes)
  local all = {}
  for _, c in ipairs(ours_changes) do
    all[#all + 1] = c
  end
  for _, c in ipairs(theirs_changes) do
    all[#all + 1] = c
  end
  -- An insertion sorts before a change that starts at its point: it goes before it in the result.
  table.sort(all, function(x, y)
    if x.s ~= y.s then
      return x.s < y.s
    end
    if x.e ~= y.e then
      return x.e < y.e
    end
    return x.side < y.side
  end)
  local out = {}
  local current
  for _, c in ipairs(all) do
    local joins = false
    if current then
      for _, m in ipairs(current.members) do
        if m.side ~= c.side and clash(m, c) then
          joins = true
          break
        end
      end
    end
    if joins then
      current.members[#current.members + 1] = c
      current.e = math.max(current.e, c.e)
    else
      current = { s = c.s, e = c.e, members = { c } }
      out[#out + 1] = current
    end
  end
  return out
end

---@param list string[]
---@param from integer 0-based
---@param to integer 0-based, exclusive
---@param out string[]
local function append(list, from, to, out)
  for i = from + 1, to do
    out[#out + 1] = list[i]
  end
end

---@param a string[]
---@param a0 integer
---@param a1 integer
---@param b string[]
---@param b0 integer
---@param b1 integer
---@return boolean
local function same(a, a0, a1, b, b0, b1)
  if a1 - a0 ~= b1 - b0 then
    return false
  end
  for k = 1, a1 - a0 do
    if a[a0 + k] ~= b[b0 + k] then
      return false
    end
  end
  return true
end

--- Where each line of one side's slice of a group sits in base: `base_of[k]` for a line the side left as it
--- was, and for every line the base position right before it (`before[k]`) and right after it (`after[k]`)
--- where that is known: a changed line knows only the edges of its change (the first one where the change
--- starts in base, the last one where it ends).
---@param members table[] the group's changes (sorted by base start)
---@param tag integer the side
---@param s integer the group's base start (0-based)
---@param e integer the group's base end
---@return { base_of: integer[], before: integer[], after: integer[], n: integer }
local function side_map(members, tag, s, e)
  local map = { base_of = {}, before = {}, after = {}, n = 0 }
  local b, k = s, 0
  local function unchanged_to(stop)
    while b < stop do
      k = k + 1
      map.base_of[k], map.before[k], map.after[k] = b, b, b + 1
      b = b + 1
    end
  end
  for _, m in ipairs(members) do
    if m.side == tag then
      unchanged_to(m.s)
      local count = (m.e - m.s) + m.net
      for i = 1, count do
        k = k + 1
        if i == 1 then
          map.before[k] = m.s
        end
        if i == count then
          map.after[k] = m.e
        end
      end
      b = m.e
    end
  end
  unchanged_to(e)
  map.n = k
  return map
end

--- The base range one side's lines [a, a + c) (0-based in its slice) stand for, and whether they are exactly
--- those base lines: bounded on each side by a known base position, every line left as it was, in order.
---@param map table from `side_map`
---@param a integer
---@param c integer
---@param s integer the group's base start
---@param e integer the group's base end
---@return integer? lo, integer? hi, boolean unchanged
local function base_range(map, a, c, s, e)
  local lo = a == 0 and s or map.after[a]
  local hi = a + c == map.n and e or map.before[a + c + 1]
  if lo == nil or hi == nil or hi - lo ~= c then
    return lo, hi, false
  end
  for k = 1, c do
    if map.base_of[a + k] ~= lo + k - 1 then
      return lo, hi, false
    end
  end
  return lo, hi, true
end

--- A group both sides changed differently, resolved as far as it goes: the two slices are diffed against
--- each other; lines they share are taken once, and between them, where one side holds exactly the base's
--- lines (it did not change them), the other side's text is taken. What remains is a conflict, with the base
--- lines it stands for (kept by `fs.conflict` for a later re-merge).
---@param g { s: integer, e: integer, members: table[] }
---@param base string[]
---@param ours string[]
---@param o0 integer
---@param o1 integer
---@param theirs string[]
---@param t0 integer
---@param t1 integer
---@param label string?
---@param lines string[] the result so far, appended to
---@param conflicts table[] appended to
local function resolve_group(g, base, ours, o0, o1, theirs, t0, t1, label, lines, conflicts)
  local os_, ts = vim.list_slice(ours, o0 + 1, o1), vim.list_slice(theirs, t0 + 1, t1)
  local om, tm = side_map(g.members, 1, g.s, g.e), side_map(g.members, 2, g.s, g.e)
  local oa_prev = 0
  local function chunk(oa, ca, ta, cb)
    append(os_, oa_prev, oa, lines)
    oa_prev = oa + ca
    local olo, ohi, ours_is_base = base_range(om, oa, ca, g.s, g.e)
    local tlo, thi, theirs_is_base = base_range(tm, ta, cb, g.s, g.e)
    if ours_is_base then
      append(ts, ta, ta + cb, lines)
    elseif theirs_is_base then
      append(os_, oa, oa + ca, lines)
    else
      local lo, hi = olo or tlo or g.s, ohi or thi or g.e
      if lo > hi then
        lo, hi = g.s, g.e
      end
      local first = #lines + 1
      lines[#lines + 1] = M.OURS_MARKER .. " yours"
      append(os_, oa, oa + ca, lines)
      local separator = #lines + 1
      lines[#lines + 1] = M.SEPARATOR
      append(ts, ta, ta + cb, lines)
      lines[#lines + 1] = M.THEIRS_MARKER .. " " .. (label or "agent")
      conflicts[#conflicts + 1] =
        { first = first, last = #lines, separator = separator, base = vim.list_slice(base, lo + 1, hi) }
    end
  end
  for _, d in ipairs(edit.diff(os_, ts)) do
    local ca, cb = d[2], d[4]
    chunk(ca > 0 and d[1] - 1 or d[1], ca, cb > 0 and d[3] - 1 or d[3], cb)
  end
  append(os_, oa_prev, #os_, lines)
end

--- The merge, with the hunks that turn `ours` into its result (xdiff's { start_a, count_a, start_b,
--- count_b }, as `fs.edit.apply_hunks` takes them) and the conflicts' marker lines.
---@param base string[]
---@param ours string[]
---@param theirs string[]
---@param label string? names the agent's side in the markers
---@param take_theirs boolean? a conflict takes theirs, without markers (and is not counted)
---@return acp_nvim.Merge3, integer[][]
function M.merge(base, ours, theirs, label, take_theirs)
  local lines, conflicts, hunks = {}, {}, {}
  local delta = { 0, 0 }
  local at = 0 -- base lines before `at` are in `lines`
  for _, g in ipairs(groups(changes(base, ours, 1), changes(base, theirs, 2))) do
    append(base, at, g.s, lines)
    local net = { 0, 0 }
    local has = { false, false }
    for _, m in ipairs(g.members) do
      net[m.side] = net[m.side] + m.net
      has[m.side] = true
    end
    -- Each side's text for base lines [g.s, g.e): no change of that side straddles the group's edges.
    local from, to = {}, {}
    for side = 1, 2 do
      from[side] = g.s + delta[side]
      to[side] = g.e + delta[side] + net[side]
      delta[side] = delta[side] + net[side]
    end
    local o0, o1, t0, t1 = from[1], to[1], from[2], to[2]
    local result_start = #lines
    if not has[2] or same(ours, o0, o1, theirs, t0, t1) then
      append(ours, o0, o1, lines)
    elseif not has[1] or take_theirs then
      append(theirs, t0, t1, lines)
    else
      resolve_group(g, base, ours, o0, o1, theirs, t0, t1, label, lines, conflicts)
    end
    local ca, cb = o1 - o0, #lines - result_start
    if not same(ours, o0, o1, lines, result_start, #lines) then
      hunks[#hunks + 1] = { ca > 0 and o0 + 1 or o0, ca, cb > 0 and result_start + 1 or result_start, cb }
    end
    at = g.e
  end
  append(base, at, #base, lines)
  return { lines = lines, conflicts = conflicts }, hunks
end

--- Merge `ours` and `theirs`, both changed from `base`.
---@param base_lines string[]
---@param ours_lines string[]
---@param theirs_lines string[]
---@param label string? names the agent's side in conflict markers (default "agent")
---@return { lines: string[], conflicts: { first: integer, last: integer }[] } `first`/`last`: 1-based lines
---  of a conflict's `<<<<<<<` and `>>>>>>>` markers in `lines`
function M.merge3(base_lines, ours_lines, theirs_lines, label)
  return (M.merge(base_lines, ours_lines, theirs_lines, label))
end

--- Apply the merge of `theirs_lines` into `buf` as one undo step of minimal line edits; conflicts are not
--- marked yet (the caller marks them once the text is final).
---@param buf integer
---@param base_lines string[]
---@param theirs_lines string[]
---@param opts { eol: boolean?, label: string?, ours: string[]?, buf_lines: string[]? } `ours`: the user's side
---  when it is not the buffer's lines (a buffer with conflicts: their user side); `buf_lines`: the buffer's lines
---@return acp_nvim.Merge3 merged, integer lines_touched, integer hunks
function M.apply(buf, base_lines, theirs_lines, opts)
  -- Fetching a 100,000-line buffer takes ~10 ms: the caller's copy of its lines is used when it has one.
  local now = opts.buf_lines or edit.buf_lines(buf)
  local result, hunks = M.merge(base_lines, opts.ours or now, theirs_lines, opts.label)
  if opts.ours then
    hunks = edit.diff(now, result.lines)
  end
  local touched = 0
  if #hunks > 0 then
    edit.break_undo(buf)
    touched = edit.apply_hunks(buf, hunks, result.lines)
  end
  if opts.eol ~= nil and #result.lines > 0 then
    vim.bo[buf].eol = opts.eol
    if not opts.eol then
      vim.bo[buf].fixeol = false
    end
  end
  return result, touched, #hunks
end

--- The agent's text (`theirs_lines`, written to disk by the agent itself, changed from `base_lines`) merged
--- into `buf`, whose current lines are the user's side: the result is applied as one undo step of minimal
--- line edits (cursor, view, marks, folds and extmarks outside the changed lines stay), the file on disk
--- becomes the buffer's own again (Neovim's stamps, as after a `:write`, without a W11/W12 warning; the
--- buffer stays modified when it holds unsaved text of the user's), and conflicts are marked in the buffer
--- (`acp_nvim.fs.conflict`: highlights, `:AcpConflict`, `]x`/`[x`). The user's text is never replaced: what
--- the agent changed over it is a conflict (`user_text_replaced` is always false). Nothing is said here:
--- the caller tells the user about conflicts with `M.tell_conflicts`.
---@param buf integer
---@param base_lines string[]
---@param theirs_lines string[] the file's text on disk now
---@param opts { eol: boolean?, label: string? }? `eol`: whether the agent's text ends with a newline (set on
---  the buffer as the agent's write sets it); `label` names the agent's side in the markers
---@return { conflicts: integer, user_text_replaced: boolean, lines: string[] }
function M.apply_to_buffer(buf, base_lines, theirs_lines, opts)
  opts = opts or {}
  local result = M.apply(buf, base_lines, theirs_lines, opts)
  require("acp_nvim.editor.fs.unsaved").adopt(buf, theirs_lines)
  require("acp_nvim.editor.fs.conflict").mark(buf, result.conflicts)
  return { conflicts = #result.conflicts, user_text_replaced = false, lines = result.lines }
end

--- Tell the user that a merge into the buffer of `path` left `count` conflicts to resolve (nothing is said of
--- a merge without conflicts: there is nothing to do).
---@param path string
---@param count integer
function M.tell_conflicts(path, count)
  -- Short: a message wider than the screen stops at a hit-enter prompt.
  notify.warn(
    ("%s: %d conflict(s) of the agent's edit with your unsaved edits (:AcpConflict)"):format(
      vim.fn.fnamemodify(path, ":~:."),
      count
    )
  )
end

--- The hunks of `original` -> `lines` (xdiff's indices) with those inside one conflict joined into one, so
--- that the review shows each conflict as one hunk (rejecting it gives back the user's lines, markers gone)
--- rather than the pieces around the user's lines that the markers split it into.
---@param original string[]
---@param lines string[]
---@param conflicts { first: integer, last: integer }[] 1-based marker lines in `lines`
---@return integer[][]
function M.review_hunks(original, lines, conflicts)
  ---@param h integer[]
  ---@return integer, integer, integer, integer 0-based half-open ranges of both sides
  local function ranges(h)
    local as = h[2] > 0 and h[1] - 1 or h[1]
    local bs = h[4] > 0 and h[3] - 1 or h[3]
    return as, as + h[2], bs, bs + h[4]
  end
  ---@param bs integer
  ---@param be integer
  ---@return integer? the conflict the new lines [bs, be) are in
  local function owner(bs, be)
    for k, c in ipairs(conflicts) do
      local f, e = c.first - 1, c.last
      if (bs < be and bs < e and be > f) or (bs == be and f < bs and bs < e) then
        return k
      end
    end
    return nil
  end
  local out, owners = {}, {}
  for _, h in ipairs(edit.diff(original, lines)) do
    local _, ae, bs, be = ranges(h)
    local k = owner(bs, be)
    if k and owners[#out] == k then
      local pas, _, pbs = ranges(out[#out])
      local ca, cb = ae - pas, be - pbs
      out[#out] = { ca > 0 and pas + 1 or pas, ca, cb > 0 and pbs + 1 or pbs, cb }
    else
      out[#out + 1] = { h[1], h[2], h[3], h[4] }
      owners[#out] = k
    end
  end
  return out
end

return M

--- Conflicts a three-way merge left in a buffer (`acp_nvim.fs.merge`): highlighted, listed, navigated and
--- resolved.
---
--- Each conflict is tracked by extmarks (namespace `acp_nvim_conflict`) on its `<<<<<<<`, `=======` and
--- `>>>>>>>` lines, so it follows edits around it, and only the markers the merge wrote count: a file that
--- holds git conflict markers of its own is left alone. A conflict counts while those three lines are still
--- its markers; resolving it keeps its extmarks, so that an undo, which puts them back where they were,
--- brings the conflict back too. Highlights are drawn at redraw for the conflicts that count.
--- `:AcpConflict ours|theirs|both` resolves the conflict under the cursor as one undoable edit (`both`: the
--- user's lines, then the agent's); `:AcpConflict` alone lists every conflict in the quickfix list. While a
--- buffer has conflicts, `]x` / `[x` (`setup{ conflict = { keymaps = ... } }`) jump to the next / previous
--- one.
local M = {}

local api = vim.api

M.ns = api.nvim_create_namespace("acp_nvim_conflict")

---@class acp_nvim.Conflict
---@field first integer extmark on the `<<<<<<<` line
---@field separator integer extmark on the `=======` line
---@field last integer extmark on the `>>>>>>>` line
---@field text string[] its lines as the merge wrote them, markers included (to find it again after a redo)
---@field base string[] the base lines it stands for (the base of a later re-merge)

--- buffer -> conflicts (in no particular order)
---@type table<integer, acp_nvim.Conflict[]>
local tracked = {}

---@type table<integer, boolean>
local mapped = {}

---@param buf integer
---@param id integer
---@return integer? 0-based row
local function row_of(buf, id)
  local pos = api.nvim_buf_get_extmark_by_id(buf, M.ns, id, {})
  return pos[1]
end

---@param buf integer
---@param row integer
---@return integer
local function track(buf, row)
  return api.nvim_buf_set_extmark(buf, M.ns, row, 0, {})
end

--- The rows of a conflict's marker lines, or nil when they are not its markers (resolved, or edited).
---@param buf integer
---@param c acp_nvim.Conflict
---@return integer?, integer?, integer?
local function rows(buf, c)
  local first, sep, last = row_of(buf, c.first), row_of(buf, c.separator), row_of(buf, c.last)
  if not (first and sep and last) or not (first < sep and sep < last) then
    return nil, nil, nil
  end
  local lines = api.nvim_buf_get_lines(buf, first, last + 1, false)
  local merge = require("acp_nvim.editor.fs.merge")
  if
    not vim.startswith(lines[1], merge.OURS_MARKER)
    or lines[sep - first + 1] ~= merge.SEPARATOR
    or not vim.startswith(lines[#lines], merge.THEIRS_MARKER)
  then
    return nil, nil, nil
  end
  return first, sep, last
end

--- Whether rows [row, row + #text) of `lines` (0-based rows of the window that starts at `top`) hold `text`.
---@param lines string[]
---@param top integer
---@param row integer
---@param text string[]
---@return boolean
local function holds(lines, top, row, text)
  for k, l in ipairs(text) do
    if lines[row - top + k] ~= l then
      return false
    end
  end
  return true
end

--- buffer -> the changedtick its lost conflicts were last looked for at
---@type table<integer, integer>
local searched = {}

--- Find again the conflicts of `buf` whose marks lost their lines while the lines came back: a redo (or an
--- undo over a later edit) puts a merge's lines back without its marks, which stay where the lines went.
--- Only near the marks, and only the exact lines the merge wrote: a file's own markers are never taken.
---@param buf integer
---@param lost acp_nvim.Conflict[]
---@param taken table<integer, boolean> rows of `<<<<<<<` lines of conflicts that count
local function find_lost(buf, lost, taken)
  local tick = api.nvim_buf_get_changedtick(buf)
  if searched[buf] == tick then
    return
  end
  searched[buf] = tick
  local count = api.nvim_buf_line_count(buf)
  for _, c in ipairs(lost) do
    local at = row_of(buf, c.first)
    if at then
      local top = math.max(0, at - #c.text)
      local bottom = math.min(count, at + #c.text + 1)
      local lines = api.nvim_buf_get_lines(buf, top, bottom, false)
      for row = top, bottom - #c.text do
        if not taken[row] and lines[row - top + 1] == c.text[1] and holds(lines, top, row, c.text) then
          local sep = row + (#c.text - #c.theirs - 2)
          api.nvim_buf_set_extmark(buf, M.ns, row, 0, { id = c.first })
          api.nvim_buf_set_extmark(buf, M.ns, sep, 0, { id = c.separator })
          api.nvim_buf_set_extmark(buf, M.ns, row + #c.text - 1, 0, { id = c.last })
          taken[row] = true
          break
        end
      end
    end
  end
end

--- The buffer's conflicts that count (their markers intact), top-down, with their rows.
---@param buf integer
---@return { conflict: acp_nvim.Conflict, first: integer, separator: integer, last: integer }[]
local function live(buf)
  local out, lost, taken = {}, {}, {}
  local function scan()
    out, lost = {}, {}
    for _, c in ipairs(tracked[buf] or {}) do
      local first, sep, last = rows(buf, c)
      if first and not taken[first] then
        taken[first] = true
        out[#out + 1] = { conflict = c, first = first, separator = sep, last = last }
      else
        lost[#lost + 1] = c
      end
    end
  end
  scan()
  if #lost > 0 and searched[buf] ~= api.nvim_buf_get_changedtick(buf) then
    find_lost(buf, lost, taken)
    taken = {}
    scan()
  end
  table.sort(out, function(a, b)
    return a.first < b.first
  end)
  return out
end

--- buffer -> the keys mapped in it
---@type table<integer, string[]>
local mapped_keys = {}

---@param buf integer
local function update_keymaps(buf)
  if not api.nvim_buf_is_valid(buf) then
    mapped[buf], mapped_keys[buf] = nil, nil
    return
  end
  local has = tracked[buf] ~= nil and #live(buf) > 0
  if has and not mapped[buf] then
    mapped[buf], mapped_keys[buf] = true, {}
    -- `setup{ conflict = { keymaps = ... } }`: the keys that jump between conflicts while a buffer has any.
    local keymaps = require("acp_nvim.config").options.conflict.keymaps
    for _, dir in ipairs({ "next", "prev" }) do
      local lhs = keymaps[dir]
      if lhs then
        vim.keymap.set(
          "n",
          lhs,
          function()
            M.jump(dir == "next")
          end,
          { buffer = buf, desc = ("ACP: %s merge conflict"):format(dir == "next" and "next" or "previous") }
        )
        table.insert(mapped_keys[buf], lhs)
      end
    end
  elseif not has and mapped[buf] then
    for _, lhs in ipairs(mapped_keys[buf] or {}) do
      pcall(vim.keymap.del, "n", lhs, { buffer = buf })
    end
    mapped[buf], mapped_keys[buf] = nil, nil
  end
end

--- Track and highlight the conflicts a merge just wrote into `buf` (`first`, `separator`, `last`: 1-based
--- marker lines, as `fs.merge` reports them; `base`: the base lines each stands for). The conflicts tracked
--- before stay tracked (an undo may bring them back); the most recent `MAX_TRACKED` are kept.
---@param buf integer
---@param conflicts { first: integer, separator: integer, last: integer, base: string[]? }[]
function M.mark(buf, conflicts)
  tracked[buf] = tracked[buf] or {}
  local list = tracked[buf]
  for _, c in ipairs(conflicts) do
    local first, sep, last = c.first - 1, c.separator - 1, c.last - 1
    local text = api.nvim_buf_get_lines(buf, first, last + 1, false)
    table.insert(list, {
      first = track(buf, first),
      separator = track(buf, sep),
      last = track(buf, last),
      text = text,
      theirs = vim.list_slice(text, sep - first + 2, #text - 1),
      base = c.base or {},
    })
  end
  while #list > M.MAX_TRACKED do
    local old = table.remove(list, 1)
    for _, id in ipairs({ old.first, old.separator, old.last }) do
      pcall(api.nvim_buf_del_extmark, buf, M.ns, id)
    end
  end
  update_keymaps(buf)
end

--- The most conflicts a buffer keeps track of, counting those resolved (an undo may bring them back).
M.MAX_TRACKED = 200

--- Whether `buf` has conflicts that count.
---@param buf integer
---@return boolean
function M.has(buf)
  return tracked[buf] ~= nil and #live(buf) > 0
end

--- The three texts a buffer with conflicts holds: each conflict read as the user's side (`ours`), as the
--- agent's (`theirs`, what the agent reads) and as the base lines it stands for (`base`); the lines outside
--- conflicts are in all three. nil when it has none.
---@param buf integer
---@return { ours: string[], theirs: string[], base: string[] }?
function M.sides(buf)
  if not tracked[buf] then
    return nil
  end
  local list = live(buf)
  if #list == 0 then
    return nil
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local ours, theirs, base, at = {}, {}, {}, 0
  local function add(out, from, to)
    for r = from, to do
      out[#out + 1] = lines[r + 1]
    end
  end
  for _, it in ipairs(list) do
    for _, out in ipairs({ ours, theirs, base }) do
      add(out, at, it.first - 1)
    end
    add(ours, it.first + 1, it.separator - 1)
    add(theirs, it.separator + 1, it.last - 1)
    vim.list_extend(base, it.conflict.base)
    at = it.last + 1
  end
  for _, out in ipairs({ ours, theirs, base }) do
    add(out, at, #lines - 1)
  end
  return { ours = ours, theirs = theirs, base = base }
end

--- The conflicts of `buf` (default: every buffer's): { bufnr, lnum (1-based, the `<<<<<<<` line), end_lnum }.
---@param buf integer?
---@return { bufnr: integer, lnum: integer, end_lnum: integer }[]
function M.list(buf)
  local out = {}
  local bufs = buf and { buf } or vim.tbl_keys(tracked)
  table.sort(bufs)
  for _, b in ipairs(bufs) do
    if api.nvim_buf_is_valid(b) then
      for _, it in ipairs(live(b)) do
        out[#out + 1] = { bufnr = b, lnum = it.first + 1, end_lnum = it.last + 1 }
      end
      update_keymaps(b)
    end
  end
  return out
end

--- Resolve the conflict at 0-based `row` of `buf` (defaults: the cursor's): `how` is "ours" (the buffer's
--- lines), "theirs" (the agent's) or "both" (the buffer's, then the agent's). One undoable edit. Returns
--- ok, error message.
---@param how string
---@param buf integer?
---@param row integer?
---@return boolean, string?
function M.resolve(how, buf, row)
  if how ~= "ours" and how ~= "theirs" and how ~= "both" then
    return false, ("unknown way to resolve a conflict %q (ours, theirs, both)"):format(tostring(how))
  end
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  row = row or (api.nvim_win_get_cursor(0)[1] - 1)
  for _, it in ipairs(live(buf)) do
    if row >= it.first and row <= it.last then
      local ours = api.nvim_buf_get_lines(buf, it.first + 1, it.separator, false)
      local theirs = api.nvim_buf_get_lines(buf, it.separator + 1, it.last, false)
      local keep = how == "ours" and ours or how == "theirs" and theirs or vim.list_extend(ours, theirs)
      api.nvim_buf_set_lines(buf, it.first, it.last + 1, false, keep)
      update_keymaps(buf)
      return true, nil
    end
  end
  update_keymaps(buf)
  return false, "no agent merge conflict under the cursor"
end

--- Move the cursor to the next (or previous) conflict of the current buffer, wrapping. Returns whether
--- there was one.
---@param forward boolean
---@return boolean
function M.jump(forward)
  local buf = api.nvim_get_current_buf()
  local cur = api.nvim_win_get_cursor(0)[1] - 1
  local list = live(buf)
  update_keymaps(buf)
  if #list == 0 then
    return false
  end
  local target
  if forward then
    for _, it in ipairs(list) do
      if it.first > cur then
        target = it.first
        break
      end
    end
    target = target or list[1].first
  else
    for i = #list, 1, -1 do
      if list[i].first < cur then
        target = list[i].first
        break
      end
    end
    target = target or list[#list].first
  end
  api.nvim_win_set_cursor(0, { target + 1, 0 })
  return true
end

local say = require("acp_nvim.util.notify").notify

--- `:AcpConflict [ours|theirs|both]`.
---@param how string
function M.command(how)
  if how == "" then
    local items = {}
    for _, c in ipairs(M.list()) do
      items[#items + 1] =
        { bufnr = c.bufnr, lnum = c.lnum, col = 1, text = "merge conflict with the agent's edit" }
    end
    vim.fn.setqflist({}, " ", { title = "ACP merge conflicts", items = items })
    if #items == 0 then
      say("no merge conflicts")
    else
      vim.cmd("botright copen")
    end
    return
  end
  local ok, why = M.resolve(how)
  if not ok then
    say(why or "cannot resolve", vim.log.levels.WARN)
  end
end

--- The buffer's lines with every conflict that counts replaced by the agent's side, or nil when it has none:
--- what `fs/read_text_file` answers, so that the agent reads back what it wrote (and the user's merged
--- edits), never the markers.
---@param buf integer
---@return string[]?
function M.agent_view(buf)
  local sides = M.sides(buf)
  return sides and sides.theirs or nil
end

--- Rows to highlight in the window being drawn: row -> group.
---@type table<integer, string>
local drawing = {}
---@type table<integer, boolean>
local keymaps_due = {}

api.nvim_set_decoration_provider(M.ns, {
  on_win = function(_, _, buf)
    if not tracked[buf] then
      return false
    end
    drawing = {}
    local list = live(buf)
    for _, it in ipairs(list) do
      drawing[it.first], drawing[it.separator], drawing[it.last] =
        "AcpNvimConflictMarker", "AcpNvimConflictMarker", "AcpNvimConflictMarker"
      for r = it.first + 1, it.separator - 1 do
        drawing[r] = "AcpNvimConflictOurs"
      end
      for r = it.separator + 1, it.last - 1 do
        drawing[r] = "AcpNvimConflictTheirs"
      end
    end
    -- An undo may have brought a conflict back (or an edit broken one): the mappings follow, outside the
    -- redraw, where no buffer may be changed.
    if (#list > 0) ~= (mapped[buf] == true) and not keymaps_due[buf] then
      keymaps_due[buf] = true
      vim.schedule(function()
        keymaps_due[buf] = nil
        update_keymaps(buf)
      end)
    end
    return next(drawing) ~= nil
  end,
  on_line = function(_, _, buf, row)
    local group = drawing[row]
    if group then
      -- A range to the next line's start, not `line_hl_group`, which an ephemeral mark cannot set.
      api.nvim_buf_set_extmark(
        buf,
        M.ns,
        row,
        0,
        { end_row = row + 1, end_col = 0, hl_group = group, hl_eol = true, ephemeral = true }
      )
    end
  end,
})

api.nvim_create_autocmd({ "BufWipeout", "BufUnload" }, {
  group = api.nvim_create_augroup("acp_nvim_conflict", { clear = true }),
  callback = function(ev)
    tracked[ev.buf], searched[ev.buf] = nil, nil
    mapped[ev.buf], mapped_keys[ev.buf] = nil, nil
  end,
})

return M

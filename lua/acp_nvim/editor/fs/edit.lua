--- Buffer edits for agent writes: text to lines, minimal hunks, applied in one undo step.
local M = {}

local api = vim.api

--- A buffer holding no line at all (a new or emptied file), as opposed to one empty line.
---@param buf integer
---@return boolean
function M.buf_is_empty(buf)
  if api.nvim_buf_line_count(buf) ~= 1 or api.nvim_buf_get_lines(buf, 0, 1, false)[1] ~= "" then
    return false
  end
  -- Counts what :write would save; line2byte() misses a buffer emptied by :%delete.
  return api.nvim_buf_call(buf, function()
    return vim.fn.wordcount().bytes == 0
  end)
end

--- Whether writing the buffer ends the file with a newline.
---@param buf integer
---@return boolean
function M.buf_writes_eol(buf)
  local bo = vim.bo[buf]
  return bo.eol or (bo.fixeol and not bo.binary)
end

--- Shows in `buf` whether the file's text `lines` ends with a newline ('eol'); one that does not keeps none
--- when the buffer is saved ('fixeol' off: else `:w` would add the newline the file never had).
---@param buf integer
---@param lines string[]
---@param eol boolean
function M.set_file_eol(buf, lines, eol)
  if #lines > 0 then
    local bo = vim.bo[buf]
    bo.eol = eol
    if not eol then
      bo.fixeol = false
    end
  end
end

local find, sub = string.find, string.sub

--- `vim.split(text, "\n", { plain = true })` in one loop of plain finds: half its time on a 100,000-line
--- text (~6 against ~12 ms), which `fs.write` spends on Neovim's loop for the agent's text and the disk's.
---@param text string
---@return string[]
local function split_lines(text)
  local lines, n, from = {}, 0, 1
  while true do
    local at = find(text, "\n", from, true)
    if not at then
      break
    end
    n = n + 1
    lines[n] = sub(text, from, at - 1)
    from = at + 1
  end
  lines[n + 1] = sub(text, from)
  return lines
end

--- Split text into buffer lines and its final-newline state.
---@param content string
---@return string[] lines, boolean eol, boolean crlf
function M.to_lines(content)
  local crlf = false
  if content:find("\r\n", 1, true) then
    crlf = true
    content = content:gsub("\r\n", "\n")
  end
  if content == "" then
    return {}, false, crlf
  end
  local lines = split_lines(content)
  -- The final newline ends the last line: the empty piece after it is no line (and the text is not copied
  -- without it, 4.7 MB for 100,000 lines).
  local eol = lines[#lines] == ""
  if eol then
    lines[#lines] = nil
  end
  return lines, eol, crlf
end

--- Lines of `buf` as a list, `{}` for an empty buffer.
---@param buf integer
---@return string[]
function M.buf_lines(buf)
  if M.buf_is_empty(buf) then
    return {}
  end
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

--- Lines `from`..`to` of `lines` as xdiff's input, joined in place (no copy of the list).
---@param lines string[]
---@param from integer
---@param to integer
---@return string
local function diff_text(lines, from, to)
  if to < from then
    return ""
  end
  -- Joined with an empty last element for the final newline: `.. "\n"` would copy a 1 MB text once more.
  local after = lines[to + 1]
  lines[to + 1] = ""
  local text = table.concat(lines, "\n", from, to + 1)
  lines[to + 1] = after
  return text
end

--- The share of a range's lines that may differ for `changed_runs` to walk it instead of xdiff.
local SCATTERED_LIMIT = 1 / 16

--- When `old` and `new` hold as many lines after `head` up to their ends and only a few of them differ (an
--- agent's edit of some lines of a long file), the hunks of each run of differing lines, diffed on its own:
--- a walk over the lines compares interned strings by pointer, where xdiff over the whole range would hash a
--- 100,000-line file (tens of ms, the editor held). nil when the counts differ or too many lines do (a shift
--- makes every line after it differ: xdiff then finds the alignment).
---@param old string[]
---@param new string[]
---@param head integer lines before the range, the same in both
---@param old_end integer
---@param new_end integer
---@return integer[][]?
local function changed_runs(old, new, head, old_end, new_end)
  local span = old_end - head
  if new_end - head ~= span or span < 64 then
    return nil
  end
  local budget = math.floor(span * SCATTERED_LIMIT)
  local hunks = {}
  local i = head + 1
  while i <= old_end do
    if old[i] ~= new[i] then
      local j = i
      while j + 1 <= old_end and old[j + 1] ~= new[j + 1] do
        j = j + 1
      end
      budget = budget - (j - i + 1)
      if budget < 0 then
        return nil
      end
      local run = vim.diff(diff_text(old, i, j), diff_text(new, i, j), { result_type = "indices" }) --[[@as integer[][] ]]
      for _, hunk in ipairs(run) do
        hunk[1], hunk[3] = hunk[1] + i - 1, hunk[3] + i - 1
        hunks[#hunks + 1] = hunk
      end
      i = j + 1
    end
    i = i + 1
  end
  return hunks
end

--- Minimal hunks turning `old` into `new`: xdiff's indices { start_a, count_a, start_b, count_b }.
---@param old string[]
---@param new string[]
---@return integer[][]
function M.diff(old, new)
  -- An agent's edit usually changes a few lines of a long file. Lua compares interned strings by pointer, so
  -- cutting the unchanged head and tail first spares xdiff (and two concatenations) most of a large file.
  local head, n_old, n_new = 0, #old, #new
  while head < n_old and head < n_new and old[head + 1] == new[head + 1] do
    head = head + 1
  end
  local tail = 0
  while tail < n_old - head and tail < n_new - head and old[n_old - tail] == new[n_new - tail] do
    tail = tail + 1
  end
  if head == n_old and head == n_new then
    return {}
  end
  local runs = changed_runs(old, new, head, n_old - tail, n_new - tail)
  if runs then
    return runs
  end
  local hunks = vim.diff(
    diff_text(old, head + 1, n_old - tail),
    diff_text(new, head + 1, n_new - tail),
    { result_type = "indices" }
  ) --[[@as integer[][] ]]
  -- xdiff numbers an insertion's or deletion's empty side by the line before it, so a shift by `head` holds
  -- for every hunk.
  for _, hunk in ipairs(hunks) do
    hunk[1], hunk[3] = hunk[1] + head, hunk[3] + head
  end
  return hunks
end

--- Apply `hunks` (from `M.diff(old, new)`) to `buf`, whose lines are `old`, bottom-up so earlier indices stay
--- valid; the caller opened the undo block. Returns the number of lines touched.
---@param buf integer
---@param hunks integer[][]
---@param new string[]
---@return integer
function M.apply_hunks(buf, hunks, new)
  local touched = 0
  if #hunks > 0 and M.buf_is_empty(buf) then
    -- An empty buffer still shows one line; inserting before it would leave a stray empty line.
    api.nvim_buf_set_lines(buf, 0, -1, false, new)
    return #new
  end
  api.nvim_buf_call(buf, function()
    for i = #hunks, 1, -1 do
      local sa, ca, sb, cb = unpack(hunks[i])
      local repl = {}
      for k = 0, cb - 1 do
        repl[#repl + 1] = new[sb + k]
      end
      local from = ca == 0 and sa or sa - 1
      if i < #hunks then
        pcall(vim.cmd, "undojoin")
      end
      api.nvim_buf_set_lines(buf, from, from + ca, false, repl)
      touched = touched + math.max(ca, cb)
    end
    if #new == 0 and #hunks > 0 then
      M.make_empty(buf)
    end
  end)
  return touched
end

--- Deleting every line through the API leaves one empty line, which :write saves as "\n"; `:%delete` makes
--- the buffer truly empty (a 0-byte file), joined to the current undo block.
---@param buf integer
function M.make_empty(buf)
  if M.buf_is_empty(buf) then
    return
  end
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "undojoin")
    vim.cmd("silent keepjumps keepmarks %delete _")
  end)
end

--- Start a new undo block in `buf`, so that what follows is undone on its own.
---@param buf integer
function M.break_undo(buf)
  api.nvim_buf_call(buf, function()
    local ul = vim.bo[buf].undolevels
    vim.bo[buf].undolevels = ul
  end)
end

---@param buf integer
---@return integer
function M.undo_seq(buf)
  return api.nvim_buf_call(buf, function()
    return vim.fn.undotree().seq_cur
  end)
end

return M

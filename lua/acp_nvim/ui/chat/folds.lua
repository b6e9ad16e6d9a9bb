-- The chat's folds: the fold levels the host gives an item's lines (thoughts, a tool call's details, a long
-- output), kept on the item and made manual folds ('foldmethod' manual) in the chat's windows as the item is
-- drawn, closed when new. Neovim then asks nothing per line: a 'foldexpr' was called for every changed line,
-- and for every line of a replay drawn while the user typed the next prompt when Insert mode ended (Neovim
-- updates no 'foldexpr' folds in Insert mode), 39-80 ms in that keypress. New folds made in Insert mode stay
-- open until it ends, as those of a 'foldexpr' did: then one `:foldclose!` closes them. Which folds the user
-- opened is kept whenever they are made again (ui/chat/fold_state.lua).

local M = {}

local api = vim.api
local config = require("acp_nvim.config")
local fold_state = require("acp_nvim.ui.chat.fold_state")
local item_at = require("acp_nvim.ui.chat.items").item_at
local item_range = require("acp_nvim.ui.chat.items").item_range
local state = require("acp_nvim.ui.chat.state")
local chat_of_buf = state.chat_of_buf

--- The folds an item keeps of those drawn: none for thoughts unless chat.fold_thoughts.
---@param item table view model
---@param drawn AcpDrawn
---@return (integer|boolean)[]|nil
function M.item_folds(item, drawn)
  if drawn.folds ~= nil and item.kind == "thought" and not config.options.chat.fold_thoughts then
    return nil
  end
  return drawn.folds
end

--- The fold level of the row `offset` of an item's body, as a 'foldexpr' would give it.
---@param folds (integer|boolean)[] see AcpDrawn.folds
---@param offset integer
---@return string
local function fold_level(folds, offset)
  local found = nil
  for i = 1, #folds, 3 do
    if folds[i] > offset then
      break
    end
    found = i
  end
  if found == nil then
    return "0"
  end
  local level = folds[found + 1]
  if folds[found + 2] and folds[found] == offset then
    return ">" .. level
  end
  return tostring(level)
end

M.fold_level = fold_level

local fold_ranges = fold_state.fold_ranges
M.fold_ranges = fold_ranges

local build

--- The chat's windows that keep its folds. One that shows the chat without them made (a split of the chat
--- window: its folds were copied, and are not followed; the chat shown by the user in a window of theirs) gets
--- them all first, and is left out with `skip_built` (they hold what was just drawn).
---@param chat AcpChat
---@param skip_built boolean|nil
---@return integer[]
local function fold_windows(chat, skip_built)
  local out = {}
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    if vim.wo[win].foldmethod == "manual" then
      local built = vim.w[win].acp_chat_folds ~= chat.buf
      if built then
        build(chat, win)
      end
      if not (built and skip_built) then
        out[#out + 1] = win
      end
    end
  end
  return out
end

--- The commands that make the folds `ranges` (rows from `base`), added to `cmds`.
---@param cmds string[]
---@param base integer
---@param ranges integer[]
local function fold_commands(cmds, base, ranges)
  for i = 1, #ranges, 3 do
    cmds[#cmds + 1] = ("%d,%dfold"):format(base + ranges[i] + 1, base + ranges[i + 1] + 1)
  end
end

---@param win integer
---@param script string
local function run_in(win, script)
  api.nvim_win_call(win, function()
    api.nvim_exec2(script, {})
  end)
end

local function inserting()
  local mode = api.nvim_get_mode().mode:sub(1, 1)
  return mode == "i" or mode == "R"
end

local insert_leave_group = api.nvim_create_augroup("acp_nvim_chat_folds", { clear = true })

--- New folds from row `first` on wait for the end of Insert mode to be closed (those of a 'foldexpr' were not
--- made before it).
---@param chat AcpChat
---@param first integer
local function close_after_insert(chat, first)
  if chat.close_from == nil then
    api.nvim_create_autocmd("InsertLeave", {
      group = insert_leave_group,
      once = true,
      callback = function()
        local from = chat.close_from
        chat.close_from = nil
        if from == nil or not api.nvim_buf_is_valid(chat.buf) then
          return
        end
        local command = ("silent! keepjumps %d,%dfoldclose!"):format(
          from + 1,
          api.nvim_buf_line_count(chat.buf)
        )
        for _, win in ipairs(fold_windows(chat)) do
          api.nvim_win_call(win, function()
            vim.cmd(command)
            -- The window scrolled while the folds were open: its top line may now be inside one.
            local top = vim.fn.foldclosed(vim.fn.line("w0"))
            if top > 0 then
              vim.fn.winrestview({ topline = top })
            end
          end)
        end
      end,
    })
  end
  chat.close_from = math.min(chat.close_from or first, first)
end

--- Makes all the chat's folds in `win` (the chat shown in it, again): those it kept are of an older text.
--- Those open in the chat window the user last left are opened (see ui/chat/fold_state.lua).
---@param chat AcpChat
---@param win integer
function build(chat, win)
  if not api.nvim_win_is_valid(win) or api.nvim_win_get_buf(win) ~= chat.buf then
    return
  end
  local buf = chat.buf
  -- Each fold closed unless the user opened it (a window showing the chat anew may keep a zR's level).
  if vim.wo[win][0].foldlevel ~= 0 then
    vim.wo[win][0].foldlevel = 0
  end
  -- The chat window the user last left, where it still shows the chat with its folds: their state is read
  -- now, not when it was left (a window left keeps its folds; reading a long chat's costs ~3 ms per 1,000
  -- items, on every move between windows).
  local left = chat.fold_left
  if left ~= nil and left ~= win and api.nvim_win_is_valid(left) and vim.w[left].acp_chat_folds == buf then
    fold_state.remember(chat, left)
  end
  local cmds = { "silent! normal! zE" }
  local remembered = chat.fold_open
  fold_state.each(chat, function(entry, body, ranges)
    fold_commands(cmds, body, ranges)
    if remembered ~= nil then
      fold_state.open_commands(cmds, body, ranges, remembered[entry])
    end
  end)
  if chat.close_from ~= nil then
    cmds[#cmds + 1] = ("silent! %d,%dfoldopen!"):format(chat.close_from + 1, api.nvim_buf_line_count(buf))
  end
  vim.w[win].acp_chat_folds = buf
  run_in(win, table.concat(cmds, "\n"))
end
M.build = build

--- The folds of new items drawn from row `first` to `stop` (exclusive): `cmds` makes them (see
--- `M.commands`). Closed, or in Insert mode open until it ends.
---@param chat AcpChat
---@param cmds string[]
---@param first integer
---@param stop integer
function M.add(chat, cmds, first, stop)
  local open = inserting()
  if open then
    close_after_insert(chat, first)
  end
  local wins = fold_windows(chat, true)
  if #cmds == 0 or #wins == 0 then
    return
  end
  if open then
    cmds[#cmds + 1] = ("silent! %d,%dfoldopen!"):format(first + 1, stop)
  end
  local script = table.concat(cmds, "\n")
  for _, win in ipairs(wins) do
    run_in(win, script)
  end
end

--- Adds to `cmds` what makes the folds `folds` of an item's body at row `body`, `count` rows.
---@param cmds string[]
---@param body integer
---@param folds (integer|boolean)[]
---@param count integer
function M.commands(cmds, body, folds, count)
  fold_commands(cmds, body, fold_ranges(folds, count))
end

---@class AcpFoldsBefore
---@field wins integer[]
---@field ranges integer[]|nil the item's folds before the change (see fold_ranges)
---@field open (table<integer, true>|false)[]|nil by window: the keys of its open folds (see fold_state.read)

--- Before an item's lines change: the chat's fold windows, and which of its folds (`folds`, rows from `body`,
--- `count` rows) are open in each.
---@param chat AcpChat
---@param body integer
---@param folds (integer|boolean)[]|nil
---@param count integer
---@return AcpFoldsBefore
function M.before(chat, body, folds, count)
  local wins = fold_windows(chat)
  if folds == nil or #wins == 0 then
    return { wins = wins }
  end
  local ranges = fold_ranges(folds, count)
  local open = {}
  for w, win in ipairs(wins) do
    open[w] = api.nvim_win_call(win, function()
      return fold_state.looking(function()
        return fold_state.read(body, ranges) or false
      end)
    end)
  end
  return { wins = wins, ranges = ranges, open = open }
end

--- After an item's lines changed: its folds made again (rows from `body`, `count` rows), each open where the
--- fold it replaces (same first row and level) was; `new`: it had none, they are closed (in Insert mode, when
--- it ends).
---@param chat AcpChat
---@param before AcpFoldsBefore
---@param body integer
---@param folds (integer|boolean)[]|nil
---@param count integer
---@param new boolean
function M.after(chat, before, body, folds, count, new)
  local wins, old = before.wins, before.ranges
  if #wins == 0 or (folds == nil and old == nil) then
    return
  end
  local ranges = folds and fold_ranges(folds, count) or {}
  local cmds = {}
  fold_commands(cmds, body, ranges)
  local open_new = new and inserting()
  if open_new then
    cmds[#cmds + 1] = ("silent! %d,%dfoldopen!"):format(body + 1, body + count)
    close_after_insert(chat, body)
  end
  local made = #cmds
  for w, win in ipairs(wins) do
    api.nvim_win_call(win, function()
      if old ~= nil then
        -- What Neovim kept of the old folds (moved, cut by the change): all of them go.
        local view = vim.fn.winsaveview()
        vim.cmd(("silent! keepjumps normal! %dGV%dGzD"):format(body + 1, body + math.max(count, 1)))
        vim.fn.winrestview(view)
      end
      if old ~= nil and not open_new then
        for k = #cmds, made + 1, -1 do
          cmds[k] = nil
        end
        fold_state.open_commands(cmds, body, ranges, before.open[w] or nil)
      end
      if cmds[1] ~= nil then
        api.nvim_exec2(table.concat(cmds, "\n"), {})
      end
    end)
  end
end

--- Before the lines of item `entry` change otherwise than by draw.lua (a long message's cut moved): which of
--- its folds are open; `M.item_after` makes them again.
---@param chat AcpChat
---@param entry AcpChatItem
---@return AcpFoldsBefore
function M.item_before(chat, entry)
  local first, last = item_range(chat, entry)
  local body = first + (chat.bare[entry] and 0 or 1)
  return M.before(chat, body, chat.fold_runs[entry], last - body + 1)
end

---@param chat AcpChat
---@param entry AcpChatItem
---@param before AcpFoldsBefore
function M.item_after(chat, entry, before)
  local first, last = item_range(chat, entry)
  local body = first + (chat.bare[entry] and 0 or 1)
  M.after(chat, before, body, chat.fold_runs[entry], last - body + 1, false)
end

--- The chat was emptied (a reload): its windows keep no fold.
---@param chat AcpChat
function M.clear(chat)
  chat.close_from = nil
  chat.fold_open = nil
  for _, win in ipairs(fold_windows(chat)) do
    run_in(win, "silent! normal! zE")
  end
end

-- While the plugin itself moves the cursor through chat windows: the user's window when it began. Leaving
-- another then is not the user's.
local passing = nil ---@type integer|nil

--- Calls `move()`, which moves the cursor through chat windows (ui/chat/window.lua's open): no window it
--- leaves but the user's own becomes the one the user last left, whose folds are read when it goes (a chat
--- of 100,000 updates: ~25 ms).
---@param move fun()
function M.passing_through(move)
  passing = api.nvim_get_current_win()
  local ok, err = pcall(move)
  passing = nil
  if not ok then
    error(err, 0)
  end
end

--- The chat's folds made in `win`, its window, and again whenever the chat is shown in a window.
---@param chat AcpChat
---@param win integer
function M.attach(chat, win)
  if vim.w[win].acp_chat_folds ~= chat.buf then
    M.build(chat, win)
  end
  if chat.folds_attached then
    return
  end
  chat.folds_attached = true
  local buf = chat.buf
  api.nvim_create_autocmd("BufWinEnter", {
    buffer = buf,
    callback = function()
      local current = api.nvim_get_current_win()
      if vim.wo[current].foldmethod == "manual" and chat_of_buf(buf) == chat then
        M.build(chat, current)
      end
    end,
  })
  api.nvim_create_autocmd("WinNew", {
    buffer = buf,
    callback = function()
      -- A split of a chat window: Neovim gave it a copy of that window's folds, open and closed as there (a
      -- new tab page has no previous window: its folds are made, see `build`).
      local previous = vim.fn.winnr("#")
      local origin = previous > 0 and vim.fn.win_getid(previous) or 0
      if origin ~= 0 and api.nvim_win_get_buf(origin) == buf and vim.w[origin].acp_chat_folds == buf then
        vim.w.acp_chat_folds = buf
      end
    end,
  })
  -- Leaving a window of the chat, to another: the one whose folds a window that shows the chat anew takes
  -- (read then, in `build`).
  api.nvim_create_autocmd({ "WinLeave", "BufLeave" }, {
    buffer = buf,
    callback = function()
      local current = api.nvim_get_current_win()
      if
        (passing == nil or passing == current)
        and chat_of_buf(buf) == chat
        and vim.w[current].acp_chat_folds == buf
      then
        chat.fold_left = current
      end
    end,
  })
  -- The window's folds go with it, or with the chat leaving it: what the user last saw folded is read first.
  local function losing(leaving)
    if leaving == chat.fold_left and chat_of_buf(buf) == chat and vim.w[leaving].acp_chat_folds == buf then
      fold_state.remember(chat, leaving)
    end
  end
  api.nvim_create_autocmd("WinClosed", {
    buffer = buf,
    callback = function(args)
      local closing = tonumber(args.match)
      if closing ~= nil and api.nvim_win_is_valid(closing) then
        losing(closing)
      end
    end,
  })
  api.nvim_create_autocmd("BufWinLeave", {
    buffer = buf,
    callback = function()
      losing(api.nvim_get_current_win())
    end,
  })
end

--- The fold level the host gave line `lnum` of the current buffer, as a 'foldexpr' would give it (what the
--- chat's folds are made of; the tests compare them).
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local chat = chat_of_buf(api.nvim_get_current_buf())
  if chat == nil then
    return "0"
  end
  local entry, first = item_at(chat, lnum - 1)
  local folds = entry and chat.fold_runs[entry]
  if folds == nil then
    return "0"
  end
  return fold_level(folds, lnum - 1 - first - (chat.bare[entry] and 0 or 1))
end

--- 'foldtext' of chat windows: the fold's first line as drawn (its highlights), and how many lines it hides.
---@return table[] chunks {text, group}
function M.foldtext()
  local buf = api.nvim_get_current_buf()
  local row = vim.v.foldstart - 1
  local text = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local chunks, col = {}, 0
  local marks = api.nvim_buf_get_extmarks(buf, state.ns_hl, { row, 0 }, { row, -1 }, { details = true })
  table.sort(marks, function(a, b)
    return a[3] < b[3]
  end)
  for _, mark in ipairs(marks) do
    local start, stop = mark[3], math.min(mark[4].end_col or #text, #text)
    if mark[4].end_row == row and start >= col and stop > start then
      if start > col then
        table.insert(chunks, { text:sub(col + 1, start), "Normal" })
      end
      table.insert(chunks, { text:sub(start + 1, stop), mark[4].hl_group })
      col = stop
    end
  end
  if col < #text then
    table.insert(chunks, { text:sub(col + 1), "Normal" })
  end
  local count = vim.v.foldend - vim.v.foldstart
  table.insert(chunks, { ("  ▸ %d line%s"):format(count, count == 1 and "" or "s"), "AcpChatNotice" })
  return chunks
end

return M

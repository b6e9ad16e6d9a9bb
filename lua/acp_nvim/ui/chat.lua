-- The chat buffer: draws the view models the host sends (never protocol data). Each transcript item is a
-- range of lines whose start is an extmark, so appending a streamed chunk touches only that chunk's lines
-- and updating a tool call rewrites only that item.

local M = {}

local api = vim.api
local ns_items = api.nvim_create_namespace("acp_nvim_items")
local ns_hl = api.nvim_create_namespace("acp_nvim_hl")
local ns_loc = api.nvim_create_namespace("acp_nvim_loc")
local ns_term = api.nvim_create_namespace("acp_nvim_term")

---@class AcpChatItem
---@field kind string
---@field mark integer extmark of the item's first line
---@field idx integer position in chat.order
---@field sep boolean|nil the item starts with a blank separator line
---@field note integer|nil extmark of the note where a long message is cut (ui/chat_message.lua)
---@field folds (integer|boolean)[]|nil its fold levels (see AcpDrawn.folds), rows relative to its body

---@class AcpChat
---@field session_id string
---@field buf integer
---@field agent string
---@field display_name string
---@field items table<string, AcpChatItem>
---@field order string[]
---@field locs table<integer, {path: string, lnum: integer}>
---@field terms table<integer, string>
---@field empty boolean
---@field header string
---@field commands table[]
---@field modes table[]
---@field prompt_buf integer|nil
---@field item_at_cache {tick: integer, first: integer, stop: integer, entry: AcpChatItem}|nil
---@field queue {ops: table[]|nil, json: string|nil, next: integer}[]|nil ops not applied yet (see M.apply)
---@field long_line boolean|nil a line past chat.long_line_bytes was streamed (see guard_redraw)
---@field refold_from integer|nil first row whose folds wait for the end of Insert mode
---@field close_from integer|nil first row of the new folds that wait for it, to be closed
---@field continued boolean|nil the drain running is a slice continued from an earlier tick (see M._drain)
---@field drawing_items boolean|nil this draw drew many new items at once (a replay): its slices hold the collector
---@field drawing {base: integer, levels: table<integer, string>}|nil new lines being drawn from row `base`,
--- their items not recorded yet: their fold levels by row from 1 (see add_items)

---@type table<string, AcpChat>
M.chats = {}
---@type string|nil the current session's id, as the host's last status named it: ui/status.lua applies it (the host
--- decides which session is current)
M.current = nil

--- Set by :AcpChat while the agent is still starting: the first chat created is opened and focused.
---@type boolean
M.focus_when_created = false

---@param buf integer
---@return AcpChat|nil
local function chat_of_buf(buf)
  for _, chat in pairs(M.chats) do
    if chat.buf == buf or chat.prompt_buf == buf then
      return chat
    end
  end
  return nil
end

M.chat_of_buf = chat_of_buf

local denil = require("acp_nvim.editor.answer").opt
local folds_changed -- (see below)
local levels_from -- (see below)

-- ---- drawing ------------------------------------------------------------------------------------------

---@class AcpDrawn
---@field lines string[]
---@field hls table[] {row, col, end_col, group} (rows relative to the item)
---@field locs table[] {row, loc}
---@field terms table[] {row, terminal_id}
---@field note {[1]: integer, [2]: string}|nil the row of the note of a long message's cut, and its file
---@field folds (integer|boolean)[]|nil runs of fold levels, flat: row, level, starts (a fold starts on the
--- row), ...; each run lasts until the next one (the last to the item's end); nil: no fold

---@param text string|nil
---@return string
local function with_newline(text)
  if text == nil or text == "" then
    return ""
  end
  return text:sub(-1) == "\n" and text or (text .. "\n")
end

---@param out AcpDrawn
---@param diff table {path, old, new}
local function draw_diff(out, diff)
  local old, new = denil(diff.old), denil(diff.new) or ""
  local indent = "    "
  local function add(text, group)
    table.insert(out.lines, indent .. text)
    if group then
      table.insert(out.hls, { #out.lines - 1, #indent, #indent + #text, group })
    end
  end
  local loc = { path = diff.path, lnum = 1 }
  if old == nil then
    add("new file " .. diff.path, "AcpChatDiffFile")
  else
    add("--- " .. diff.path, "AcpChatDiffFile")
    add("+++ " .. diff.path, "AcpChatDiffFile")
  end
  table.insert(out.locs, { #out.lines - 1, loc })
  local hunks = vim.diff(with_newline(old), with_newline(new), { result_type = "unified", ctxlen = 3 })
  ---@cast hunks string
  for _, line in ipairs(vim.split(hunks, "\n", { plain = true, trimempty = true })) do
    local first = line:sub(1, 1)
    if first == "@" then
      add(line, "AcpChatDiffHunk")
    elseif first == "+" then
      add(line, "AcpChatDiffAdd")
    elseif first == "-" then
      add(line, "AcpChatDiffDelete")
    else
      add(line, nil)
    end
  end
end

---@param item table view model {id, kind, lines}
---@return AcpDrawn
local function draw(item)
  local out = { lines = {}, hls = {}, locs = {}, terms = {} }
  local folds, level = nil, 0
  for _, line in ipairs(item.lines) do
    local fold = line.f
    if fold ~= nil or level ~= 0 then
      -- A view line's fold level holds for every line it draws (a diff); only the first starts the fold.
      local starts = fold ~= nil and fold:sub(1, 1) == ">"
      local line_level = fold ~= nil and tonumber(starts and fold:sub(2) or fold) or 0
      if starts or line_level ~= level then
        folds = folds or {}
        vim.list_extend(folds, { #out.lines, line_level, starts })
        level = line_level
      end
    end
    if line.diff then
      draw_diff(out, line.diff)
    elseif line.term then
      local text = line.text or ("    ⌨ terminal " .. line.term)
      table.insert(out.lines, text)
      table.insert(out.hls, { #out.lines - 1, 0, #text, "AcpChatTerminal" })
      table.insert(out.terms, { #out.lines - 1, line.term })
    else
      local segments = line.s or {}
      local row, hls = #out.lines, out.hls
      local text
      if #segments == 1 then
        -- Most lines (message text) are one segment: no concatenation.
        text = segments[1][1]
        if text:find("\n", 1, true) then
          text = text:gsub("\n", " ")
        end
        local group = segments[1][2]
        if group ~= "" and #text > 0 then
          hls[#hls + 1] = { row, 0, #text, group }
        end
      else
        local parts, col = {}, 0
        for i, segment in ipairs(segments) do
          local part, group = segment[1], segment[2]
          -- A newline inside a segment would break the line/row bookkeeping.
          if part:find("\n", 1, true) then
            part = part:gsub("\n", " ")
          end
          parts[i] = part
          if group ~= "" and #part > 0 then
            local last = hls[#hls]
            if last ~= nil and last[1] == row and last[3] == col and last[4] == group then
              -- Adjacent segments of one group (a plan entry's mark and text): one highlight.
              last[3] = col + #part
            else
              hls[#hls + 1] = { row, col, col + #part, group }
            end
          end
          col = col + #part
        end
        text = table.concat(parts)
      end
      out.lines[row + 1] = text
      if line.note then
        out.note = { row, line.note }
      end
      if line.loc then
        table.insert(out.locs, { row, line.loc })
      end
    end
  end
  out.folds = folds
  return out
end

---@param chat AcpChat
---@param entry AcpChatItem
---@return integer first, integer last rows (0-based, inclusive)
local function item_range(chat, entry)
  local first = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, entry.mark, {})[1]
  local last
  local next_id = chat.order[entry.idx + 1]
  if next_id then
    last = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, chat.items[next_id].mark, {})[1] - 1
  else
    last = api.nvim_buf_line_count(chat.buf) - 1
  end
  return first, last
end

---@param chat AcpChat
---@param first integer
---@param drawn AcpDrawn
local function decorate(chat, first, drawn)
  local buf = chat.buf
  local opts = {}
  for _, hl in ipairs(drawn.hls) do
    opts.end_col, opts.hl_group = hl[3], hl[4]
    api.nvim_buf_set_extmark(buf, ns_hl, first + hl[1], hl[2], opts)
  end
  for _, loc in ipairs(drawn.locs) do
    local id = api.nvim_buf_set_extmark(buf, ns_loc, first + loc[1], 0, {})
    chat.locs[id] = { path = loc[2].path, lnum = loc[2].lnum }
  end
  for _, term in ipairs(drawn.terms) do
    local id = api.nvim_buf_set_extmark(buf, ns_term, first + term[1], 0, {})
    chat.terms[id] = term[2]
    -- The live output under the placeholder (namespace "acp_nvim_term"): ui/chat_terminal.lua.
    pcall(require("acp_nvim.ui.chat_terminal").attach, buf, id, term[2])
  end
end

---@param chat AcpChat
---@param first integer
---@param last integer
local function undecorate(chat, first, last)
  local buf = chat.buf
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns_loc, { first, 0 }, { last, -1 }, {})) do
    chat.locs[mark[1]] = nil
  end
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns_term, { first, 0 }, { last, -1 }, {})) do
    chat.terms[mark[1]] = nil
  end
  api.nvim_buf_clear_namespace(buf, ns_hl, first, last + 1)
  api.nvim_buf_clear_namespace(buf, ns_loc, first, last + 1)
  api.nvim_buf_clear_namespace(buf, ns_term, first, last + 1)
end

--- The folds an item keeps of those drawn: none for thoughts unless chat.fold_thoughts.
---@param item table view model
---@param drawn AcpDrawn
---@return (integer|boolean)[]|nil
local function item_folds(item, drawn)
  if
    drawn.folds ~= nil
    and item.kind == "thought"
    and not require("acp_nvim.config").options.chat.fold_thoughts
  then
    return nil
  end
  return drawn.folds
end

--- The fold level of the row `offset` of an item's body, as 'foldexpr' gives it.
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

local insert_leave_group = api.nvim_create_augroup("acp_nvim_chat_folds", { clear = true })

--- Closes the folds of rows `first` to `stop` (0-based, exclusive) in the chat's windows: once the user opened
--- or closed a fold, Neovim creates new ones open.
---@param chat AcpChat
---@param first integer
---@param stop integer
local function close_folds(chat, first, stop)
  local command = ("silent! keepjumps %d,%dfoldclose!"):format(first + 1, stop)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    if vim.wo[win].foldmethod == "expr" then
      api.nvim_win_call(win, function()
        vim.cmd(command)
      end)
    end
  end
end

--- The folds of rows `first` to `stop` changed (`new`: they are new folds, closed at first). Neovim evaluated
--- 'foldexpr' for them as they changed, but not in Insert mode (the user typing the next prompt): then the
--- chat's folds from there on are updated when Insert mode ends.
---@param chat AcpChat
---@param first integer
---@param stop integer
---@param new boolean
folds_changed = function(chat, first, stop, new)
  local mode = api.nvim_get_mode().mode:sub(1, 1)
  if mode ~= "i" and mode ~= "R" then
    if new then
      close_folds(chat, first, stop)
    end
    return
  end
  if chat.refold_from == nil then
    api.nvim_create_autocmd("InsertLeave", {
      group = insert_leave_group,
      once = true,
      callback = function()
        local from, close_from = chat.refold_from, chat.close_from
        chat.refold_from, chat.close_from = nil, nil
        if from == nil or not api.nvim_buf_is_valid(chat.buf) then
          return
        end
        local line_count = api.nvim_buf_line_count(chat.buf)
        local wins = vim.tbl_filter(function(win)
          return vim.wo[win].foldmethod == "expr"
        end, vim.fn.win_findbuf(chat.buf))
        if #wins > 0 then
          -- Neovim asks 'foldexpr' for every line from there on, a replay's 14,000 at once: looked up item
          -- by item, 130-170 ms in the keypress that left Insert mode; all the levels in one pass first.
          chat.drawing = { base = from, levels = levels_from(chat, from, line_count) }
          local ok, err = pcall(function()
            for _, win in ipairs(wins) do
              vim._foldupdate(win, from, line_count)
            end
          end)
          chat.drawing = nil
          if not ok then
            error(err, 0)
          end
        end
        if close_from ~= nil then
          close_folds(chat, close_from, line_count)
        end
        for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
          api.nvim_win_call(win, function()
            -- The window scrolled while the folds were not there: its top line may now be inside one.
            local top = vim.fn.foldclosed(vim.fn.line("w0"))
            if top > 0 then
              vim.fn.winrestview({ topline = top })
            end
          end)
        end
      end,
    })
  end
  chat.refold_from = math.min(chat.refold_from or first, first)
  if new then
    chat.close_from = math.min(chat.close_from or first, first)
  end
end

--- Appends new items at the end of the chat with one buffer change for all of them: a replayed history
--- adds thousands of items in a frame, and a change per item (each seen by every on_bytes listener, the
--- markdown highlighter among them) made that the longest stall of a load.
---@param chat AcpChat
---@param items table[] view models whose ids are not in the chat yet (and distinct)
local function add_items(chat, items)
  local buf = chat.buf
  local lines, rows, drawns, folds = {}, {}, {}, {}
  -- The new lines' fold levels, for 'foldexpr' while they are drawn (their items are recorded after).
  local levels = {}
  local was_empty = chat.empty
  local base = was_empty and 0 or api.nvim_buf_line_count(buf)
  for i, item in ipairs(items) do
    local drawn = draw(item)
    rows[i] = base + #lines
    if not (was_empty and i == 1) and not item.tight then
      lines[#lines + 1] = ""
    end
    folds[i] = item_folds(item, drawn)
    for offset, line in ipairs(drawn.lines) do
      lines[#lines + 1] = line
      if folds[i] ~= nil then
        levels[#lines] = fold_level(folds[i], offset - 1)
      end
    end
    drawns[i] = drawn
  end
  chat.drawing = { base = base, levels = levels }
  local ok, err = pcall(api.nvim_buf_set_lines, buf, base, was_empty and -1 or base, false, lines)
  chat.drawing = nil
  if not ok then
    error(err, 0)
  end
  chat.empty = false
  for i, item in ipairs(items) do
    local sep = not (was_empty and i == 1) and not item.tight
    -- Left gravity: rewriting this item from its first column must not push its own mark down.
    local mark = api.nvim_buf_set_extmark(buf, ns_items, rows[i], 0, { right_gravity = false })
    -- Mostly four fields, so that the table's hash part stays at four slots (a chat of 100,000 tool calls
    -- has as many of these): `sep` is nil when false, `note` is set only on a long message's cut, `folds`
    -- only on the items that have folds (thoughts, the newest tool calls with details).
    local entry = { kind = item.kind, mark = mark, idx = #chat.order + 1, sep = sep or nil }
    entry.folds = folds[i]
    chat.items[item.id] = entry
    table.insert(chat.order, item.id)
    local body = rows[i] + (sep and 1 or 0)
    decorate(chat, body, drawns[i])
    if drawns[i].note then
      require("acp_nvim.ui.chat_message").mark(chat, entry, body + drawns[i].note[1], drawns[i].note[2])
    end
  end
  -- Looked up while the lines were drawn, before their items were recorded.
  chat.item_at_cache = nil
  if next(levels) ~= nil then
    folds_changed(chat, base, base + #lines, true)
  end
end

---@param chat AcpChat
---@param item table
local function add_item(chat, item)
  if chat.items[item.id] then
    return M._replace(chat, item)
  end
  add_items(chat, { item })
end

---@param chat AcpChat
---@param item table
function M._replace(chat, item)
  local entry = chat.items[item.id]
  if entry == nil then
    return add_item(chat, item)
  end
  local buf = chat.buf
  local first, last = item_range(chat, entry)
  local body = first + (entry.sep and 1 or 0)
  local drawn = draw(item)
  undecorate(chat, body, last)
  require("acp_nvim.ui.chat_message").clear(chat, body, last)
  -- set_text up to the end of the last line (not set_lines up to the next item's first line): the next
  -- item's mark sits outside the changed span and simply moves with it.
  local last_line = api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
  -- The item is known while its lines change: 'foldexpr' finds its new folds as Neovim evaluates them.
  local had_folds = entry.folds ~= nil
  entry.folds = item_folds(item, drawn)
  api.nvim_buf_set_text(buf, body, 0, last, #last_line, drawn.lines)
  decorate(chat, body, drawn)
  entry.note = nil
  if drawn.note then
    require("acp_nvim.ui.chat_message").mark(chat, entry, body + drawn.note[1], drawn.note[2])
  end
  if had_folds or entry.folds ~= nil then
    -- Details that were open (a permission asked for) are folded once answered; a fold the user opened stays.
    folds_changed(chat, body, body + #drawn.lines, not had_folds)
  end
end

---@param chat AcpChat
---@param id string
---@param text string
local function append_text(chat, id, text)
  local entry = chat.items[id]
  if entry == nil or text == "" then
    return
  end
  local buf = chat.buf
  local _, last = item_range(chat, entry)
  -- The line's length from byte offsets, not by reading it: one streamed paragraph can be a line of
  -- hundreds of KB, copied into Lua on every frame only to be measured.
  local width = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, last) - 1
  local parts = vim.split(text, "\n", { plain = true })
  api.nvim_buf_set_text(buf, last, width, last, width, parts)
  if #parts == 1 and width + #text > require("acp_nvim.config").options.chat.long_line_bytes then
    chat.long_line = true
  end
  if entry.folds ~= nil then
    folds_changed(chat, last, last + #parts, false)
  end
  if entry.kind == "thought" then
    local end_row = last + #parts - 1
    local end_col = #parts == 1 and (width + #parts[1]) or #parts[#parts]
    api.nvim_buf_set_extmark(buf, ns_hl, last, width, {
      end_row = end_row,
      end_col = end_col,
      hl_group = "AcpChatThought",
    })
  end
end

---@param chat AcpChat
local function refresh_header(chat)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    vim.wo[win].winbar = "%#AcpChatHeader#" .. chat.header:gsub("%%", "%%%%")
  end
end

---@param chat AcpChat
---@param op table
local function set_meta(chat, op)
  chat.header = denil(op.header) or chat.header
  chat.commands = op.commands or {}
  chat.modes = op.modes or {}
  chat.config = op.config or {}
  chat.mode = denil(op.mode)
  chat.title = denil(op.title)
  refresh_header(chat)
end

-- ---- the host's entry points ----------------------------------------------------------------------------

--- The chat of a session reloaded after a restart: emptied, so the agent's replay draws the transcript again
--- in the same buffer and windows. Without a chat (wiped meanwhile) a new one is created. What was still
--- queued for the old session is dropped; the redraw guards stay as they were (the replay is as large).
---@param session_id string
---@param info table {agent, display_name, cwd}
function M.reset(session_id, info)
  local chat = M.chats[session_id]
  if chat == nil or not api.nvim_buf_is_valid(chat.buf) then
    M.chats[session_id] = nil
    M.create(session_id, info)
    return
  end
  local buf = chat.buf
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, {})
  vim.bo[buf].modifiable = false
  -- Every namespace: items, highlights, locations and terminal placeholders all go with the lines.
  api.nvim_buf_clear_namespace(buf, -1, 0, -1)
  chat.items, chat.order, chat.locs, chat.terms = {}, {}, {}, {}
  chat.empty = true
  chat.item_at_cache = nil
  chat.queue = nil
  chat.agent, chat.display_name = info.agent, info.display_name
end

--- Removes a chat the host gave up on (a session that failed to load), without closing its session.
---@param session_id string
function M.destroy(session_id)
  local chat = M.chats[session_id]
  if chat == nil then
    return
  end
  M.chats[session_id] = nil
  for _, buf in ipairs({ chat.prompt_buf, chat.buf }) do
    if buf and api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- The user wiped (or deleted) a chat buffer: the chat is forgotten, its prompt window goes with it.
--- Returns the session id of the chat, or nil when `buf` was no chat.
---@param buf integer
---@return string|nil
function M.forget_buf(buf)
  require("acp_nvim.ui.chat_message").forget(buf)
  for session_id, chat in pairs(M.chats) do
    if chat.buf == buf then
      M.chats[session_id] = nil
      local prompt = chat.prompt_buf
      if prompt and api.nvim_buf_is_valid(prompt) then
        -- Scheduled: not from inside the wipe autocommand of another buffer.
        vim.schedule(function()
          pcall(api.nvim_buf_delete, prompt, { force = true })
        end)
      end
      return session_id
    end
  end
  return nil
end

--- The chat of an ended session whose id the agent gives to a new one (a restarted agent that counts its
--- sessions from 1 again): its buffer stays, renamed, as the record of the old conversation, and answers for
--- no session any more; the windows that showed it show `new_buf`. Returns whether any did.
---@param old AcpChat
---@param new_buf integer
---@return boolean
local function retire(old, new_buf)
  local windows = vim.fn.win_findbuf(old.buf)
  for _, win in ipairs(windows) do
    require("acp_nvim.ui.windows").show_in(win, new_buf)
  end
  if old.prompt_buf and api.nvim_buf_is_valid(old.prompt_buf) then
    pcall(api.nvim_buf_delete, old.prompt_buf, { force = true })
  end
  return #windows > 0
end

--- A new session: its (hidden) chat buffer, opened when chat.open_on_start.
---@param session_id string
---@param info table {agent, display_name, cwd}
function M.create(session_id, info)
  local old = M.chats[session_id]
  if old ~= nil and api.nvim_buf_is_valid(old.buf) then
    -- Renamed first, so that the new chat gets the session's name.
    pcall(api.nvim_buf_set_name, old.buf, api.nvim_buf_get_name(old.buf) .. " (ended)")
  else
    old = nil
  end
  local buf = api.nvim_create_buf(true, true)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].undolevels = -1
  local name = ("acp://%s/%s"):format(info.agent, session_id:sub(1, 8))
  if not pcall(api.nvim_buf_set_name, buf, name) then
    pcall(api.nvim_buf_set_name, buf, name .. "-" .. buf)
  end
  vim.bo[buf].filetype = "acp_nvim_chat"
  vim.bo[buf].modifiable = false
  ---@type AcpChat
  local chat = {
    session_id = session_id,
    buf = buf,
    agent = info.agent,
    display_name = info.display_name,
    items = {},
    order = {},
    locs = {},
    terms = {},
    empty = true,
    header = info.display_name,
    commands = {},
    modes = {},
  }
  M.chats[session_id] = chat
  M.set_keymaps(buf)
  local took_over = old ~= nil and retire(old, buf)
  if M.focus_when_created then
    -- :AcpChat was asked for while the agent was starting: the user is waiting for exactly this window.
    M.focus_when_created = false
    M.open(session_id)
    require("acp_nvim.ui.prompt").start_typing()
  elseif took_over or require("acp_nvim.config").options.chat.open_on_start then
    -- Shown, not focused: the session starts asynchronously and must not pull the cursor out of the
    -- user's buffer in the middle of typing. In three ticks, each after the input that came meanwhile: the
    -- buffer and its filetype (~2.5 ms), the prompt's buffer and its filetype, the windows (together 4-7 ms
    -- of a session's load, its longest tick).
    local after_input = require("acp_nvim.util.after_input")
    local function still_wanted()
      return M.chats[session_id] == chat and api.nvim_buf_is_valid(buf)
    end
    after_input.schedule(function()
      if not still_wanted() then
        return
      end
      require("acp_nvim.ui.prompt").buffer(chat)
      after_input.schedule(function()
        if still_wanted() then
          M.open(session_id, { focus = false })
        end
      end)
    end)
  end
end

-- Work per main-loop tick: what is left of a batch runs on the next tick, after the keys and requests that
-- came in meanwhile (a replayed history is thousands of ops, and one call doing all of them froze the
-- editor for a third of a second).
M.budget_ns = 4e6
-- The budget of a long draw's slices (a replay), at most. What the user waits for is the slice plus Neovim's
-- redraw after it (~0.5-1 ms for a screen of new items) and whatever the machine adds: 4 ms slices made ticks
-- of 5-6 ms during a replay, 3 ms near 4. With the agent and the host busy beside it, Neovim is also taken
-- off its core within a long slice: 2 ms slices cut the worst round trip of a replay by 0.5-2 ms against 3 ms
-- (five interleaved pairs of runs; no slower render). A stream's frames keep the whole budget: a smaller one
-- would only cut a large frame (a 1 MB tool output resent) into more ticks, each with a drain's fixed costs.
M.long_budget_ns = 2e6
-- At most this share of a slice's budget pays the garbage collector's steps that the slices before it owe.
local GC_SHARE = 0.25
-- New items drawn per buffer change, at most (between two looks at the budget).
local ADD_RUN = 200
-- What drawing one new item costs (ns), learnt from the runs drawn so far: a run is sized to fit what is left
-- of the tick's budget, so one slice of a replayed history does not overrun it several times over.
local add_cost_ns = 20e3
-- What decoding a byte of the ops' JSON costs (ns), learnt from the chunks decoded so far.
local decode_ns_per_byte = 4
--- Keeps a large chat cheap to redraw: 'linebreak' goes once a line grows past option chat.long_line_bytes
--- (its markdown highlighting is brought up to date for what changed after each drain: ui/chat_highlight.lua).
---
--- With 'linebreak' Neovim measures such a line cell by cell on every redraw (one streamed paragraph of
--- 100,000 words, 700 KiB: ~700 ms of Neovim's time over the stream, ~250 ms without). Wrapping mid-word is
--- all that changes; a chat of ordinary lines, however large, keeps it.
---@param chat AcpChat
local function guard_redraw(chat)
  local buf = chat.buf
  if chat.long_line then
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if vim.wo[win][0].linebreak then
        vim.wo[win][0].linebreak = false
      end
    end
  end
end

---@param chat AcpChat
---@param op table
local function apply_op(chat, op)
  if op.op == "add" then
    add_item(chat, op.item)
  elseif op.op == "replace" then
    M._replace(chat, op.item)
  elseif op.op == "append" then
    append_text(chat, op.id, op.text)
  elseif op.op == "note" then
    require("acp_nvim.ui.chat_message").set(chat, op)
  elseif op.op == "meta" then
    set_meta(chat, op)
  elseif op.op == "term_output" then
    require("acp_nvim.ui.chat_terminal").show_output(op.term, op.text, op.reset == true)
  elseif op.op == "term_exit" then
    require("acp_nvim.ui.chat_terminal").show_exit(op.term, op.status)
  end
end

---@param err any
local function render_error(err)
  require("acp_nvim.util.notify").warn("chat render error: " .. tostring(err))
end

--- One slice of M._drain, from `started`; `long`: of a long draw (the garbage collector held: see there).
---@param chat AcpChat
---@param started number
---@param long boolean
---@return boolean
local function drain_slice(chat, started, long)
  local buf = chat.buf
  local budget = long and math.min(M.budget_ns, M.long_budget_ns) or M.budget_ns
  -- Windows looking at the end keep following the stream; others stay where the user put them.
  local line_count = api.nvim_buf_line_count(buf)
  local follow = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if api.nvim_win_get_cursor(win)[1] >= line_count then
      table.insert(follow, win)
    end
  end
  vim.bo[buf].modifiable = true
  local queue = chat.queue
  local done_any = false
  -- At least one op per slice, whatever paying the garbage collector took of the budget.
  while queue[1] ~= nil and (not done_any or vim.uv.hrtime() - started < budget) do
    local batch = queue[1]
    if batch.ops == nil then
      -- Decoded only now, a chunk at a time: decoding a whole replay at once would be one long stall. And on
      -- the next tick when what is left of this one would not fit it (a chunk of a replay: ~1 ms).
      local json = batch.json
      if done_any and vim.uv.hrtime() - started + #json * decode_ns_per_byte > budget then
        break
      end
      local decode_started = vim.uv.hrtime()
      local ok, decoded = pcall(vim.json.decode, json)
      if #json > 0 then
        decode_ns_per_byte = (decode_ns_per_byte + (vim.uv.hrtime() - decode_started) / #json) / 2
      end
      batch.json = nil
      if not ok or type(decoded) ~= "table" then
        render_error(decoded)
        decoded = {}
      end
      batch.ops = decoded
    end
    done_any = true
    local ops, i = batch.ops, batch.next
    local op = ops[i]
    if op == nil then
      table.remove(queue, 1)
    elseif op.op == "add" and chat.items[op.item.id] == nil then
      -- A run of new items: one buffer change for all of them.
      local left = budget - (vim.uv.hrtime() - started)
      local limit = math.max(1, math.min(ADD_RUN, math.floor(left / add_cost_ns)))
      local run, seen = {}, {}
      while op ~= nil and op.op == "add" and #run < limit do
        local id = op.item.id
        if chat.items[id] ~= nil or seen[id] then
          break
        end
        seen[id] = true
        run[#run + 1] = op.item
        i = i + 1
        op = ops[i]
      end
      batch.next = i
      local run_started = vim.uv.hrtime()
      if #run > 1 then
        -- Many new items at once: a replayed history; its next slices hold the collector (see M._drain).
        chat.drawing_items = true
      end
      local ok, err = pcall(add_items, chat, run)
      if not ok then
        render_error(err)
      end
      -- Averaged with what was known, so one slow run (a garbage collection) does not shrink the next ones.
      add_cost_ns = (add_cost_ns + (vim.uv.hrtime() - run_started) / #run) / 2
    else
      batch.next = i + 1
      local ok, err = pcall(apply_op, chat, op)
      if not ok then
        render_error(err)
      end
    end
    if queue[1] == batch and batch.ops ~= nil and batch.ops[batch.next] == nil then
      -- Done with it now: left for the next look at the queue, a batch whose last op took the budget cost a
      -- tick of its own (the continuation of a long draw, for a frame of a stream).
      table.remove(queue, 1)
    end
  end
  vim.bo[buf].modifiable = false
  guard_redraw(chat)
  local last = api.nvim_buf_line_count(buf)
  for _, win in ipairs(follow) do
    -- Only when the cursor must move: setting it makes Neovim re-measure the window's text, which on a long
    -- wrapped line (one streamed paragraph of 100,000 words) costs ~10 ms per call.
    if api.nvim_win_get_cursor(win)[1] ~= last then
      pcall(api.nvim_win_set_cursor, win, { last, 0 })
    end
  end
  -- In the same tick, so that no redraw shows the new text before its highlights (a concealed `**` would
  -- flicker at the end of a stream); after the cursor moved, so the view it looks at is up to date already.
  -- But not after the last slice of a long draw (a replay) when it took most of its budget: the highlighting's
  -- own budget on top of it made that tick the longest of a load; it comes on the next tick, after the input.
  local highlight = require("acp_nvim.ui.chat_highlight")
  if queue[1] ~= nil then
    highlight.refresh(chat)
  elseif long and vim.uv.hrtime() - started > budget / 2 then
    chat.queue = nil
    highlight.schedule(chat)
  else
    chat.queue = nil
    highlight.refresh(chat)
  end
  return queue[1] == nil
end

--- Whether the next op of `batch` adds items (a replayed history's batches are runs of new items), read from
--- its JSON before it is decoded: a command's output resent whole queues several batches too, and holding the
--- collector there cost its drains ~25% more Lua time (bench tool_output) for no stall it had.
---@param batch table|nil
---@return boolean
local function adds_items(batch)
  if batch == nil then
    return false
  end
  if batch.ops ~= nil then
    local op = batch.ops[batch.next]
    return op ~= nil and op.op == "add"
  end
  return batch.json ~= nil and batch.json:find('^%[%s*{%s*"op"%s*:%s*"add"') ~= nil
end

--- Whether the queue is a long draw of new items (a replay: several chunks, or a slice continued from an
--- earlier tick, that adds items or already drew many at once), not a frame of a stream.
---@param chat AcpChat
---@return boolean
local function long_draw(chat)
  local queue = chat.queue
  local long = chat.continued == true or (queue ~= nil and (queue[2] ~= nil or (queue[1] or {}).next ~= 1))
  return long and (chat.drawing_items == true or adds_items(queue and queue[1]))
end

--- Applies queued ops until they are done or the tick's budget is spent; returns true when all are done.
---
--- In a long draw the garbage collector is held while the slice works and what it allocated is paid at the
--- start of the next slice, within that one's budget (ui/gc_pace.lua): its steps, triggered by the slice's
--- allocations, made slices run twice their budget. A stream's frames are left to it, as before.
---@param chat AcpChat
---@return boolean
function M._drain(chat)
  if not api.nvim_buf_is_valid(chat.buf) then
    chat.queue = nil
    return true
  end
  local started = vim.uv.hrtime()
  local done
  if not long_draw(chat) then
    done = drain_slice(chat, started, false)
  else
    local gc = require("acp_nvim.ui.gc_pace")
    local pay_until = started + math.min(M.budget_ns, M.long_budget_ns) * GC_SHARE
    done = gc.slice(pay_until, drain_slice, chat, started, true)
  end
  if done then
    chat.drawing_items = nil
  end
  return done
end

---@param chat AcpChat
local function continue_later(chat)
  require("acp_nvim.util.after_input").schedule(function()
    chat.continued = true
    local done = chat.queue == nil or M._drain(chat)
    chat.continued = nil
    if not done then
      continue_later(chat)
    end
  end)
end

---@param session_id string
---@param batches table[] queue entries
local function enqueue(session_id, batches)
  local chat = M.chats[session_id]
  if chat == nil or not api.nvim_buf_is_valid(chat.buf) then
    return
  end
  if chat.queue ~= nil then
    vim.list_extend(chat.queue, batches)
    return
  end
  chat.queue = batches
  if not M._drain(chat) then
    continue_later(chat)
  end
end

--- Applies one batch of view-model ops: {op="add"|"replace", item} | {op="append"|"note", id, text} |
--- {op="meta"} | {op="term_output", term, text, reset?} | {op="term_exit", term, status} (a command the agent
--- runs itself: its output and exit, drawn like an ACP terminal's).
--- Within the tick's budget at once; the rest on the next ticks, always in order (a batch arriving while an
--- earlier one is unfinished waits behind it).
---@param session_id string
---@param ops table[]
function M.apply(session_id, ops)
  enqueue(session_id, { { ops = ops, next = 1 } })
end

--- `M.apply` of ops sent as JSON: each chunk a JSON array of ops, decoded when the drain reaches it. What the
--- host sends (see acp_nvim/nvim/render.py).
---@param session_id string
---@param chunks string[]
function M.apply_json(session_id, chunks)
  local batches = {}
  for i, json in ipairs(chunks) do
    batches[i] = { json = json, next = 1 }
  end
  enqueue(session_id, batches)
end

--- Whether a chat has ops still waiting for a later tick (tests, benchmarks).
---@param session_id string
---@return boolean
function M.pending(session_id)
  local chat = M.chats[session_id]
  return chat ~= nil and chat.queue ~= nil
end

-- ---- windows ------------------------------------------------------------------------------------------

---@param win integer
---@param chat AcpChat
local function setup_window(win, chat)
  -- Local to the window (`:setlocal`): `vim.wo[win]` alone would make them the global values, which every
  -- window the user opens later starts from (no sign column for the review's signs, ...).
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldcolumn = "0"
  -- Commands that go to "the previous window" (quickfix, :bnext, a picker's file) must not take the chat's.
  wo.winfixbuf = true
  if require("acp_nvim.config").options.chat.fold_thoughts then
    wo.foldmethod = "expr"
    wo.foldexpr = "v:lua.require'acp_nvim.ui.chat'.foldexpr(v:lnum)"
    wo.foldtext = "v:lua.require'acp_nvim.ui.chat'.foldtext()"
    wo.foldlevel = 0
    wo.foldenable = true
  end
  wo.winbar = "%#AcpChatHeader#" .. chat.header:gsub("%%", "%%%%")
end

--- The chat window's folds: thoughts, tool calls' details and long outputs are folds the host marks, closed
--- until opened (<CR>, za); a closed one shows its first line as drawn.
---@param win integer
local function setup_folds(win)
  local wo = vim.wo[win][0]
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'acp_nvim.ui.chat'.foldexpr(v:lnum)"
  wo.foldtext = "v:lua.require'acp_nvim.ui.chat'.foldtext()"
  wo.foldlevel = 0
  wo.foldenable = true
  -- The rest of a closed fold's line stays blank, as an open line would be.
  if not wo.fillchars:find("fold:", 1, true) then
    wo.fillchars = wo.fillchars == "" and "fold: " or (wo.fillchars .. ",fold: ")
  end
end

--- Opens the chat and its prompt window, focusing the prompt unless opts.focus == false. Returns false when
--- there is no chat.
---@param session_id string|nil
---@param opts {focus: boolean}|nil
---@return boolean
function M.open(session_id, opts)
  local chat = M.chats[session_id or M.current or ""]
  if chat == nil or not api.nvim_buf_is_valid(chat.buf) then
    return false
  end
  local previous = api.nvim_get_current_win()
  require("acp_nvim.ui.windows").setup()
  local options = require("acp_nvim.config").options.chat
  local prompt = require("acp_nvim.ui.prompt")
  local chat_win = vim.fn.win_findbuf(chat.buf)[1]
  if chat_win == nil or vim.fn.win_id2tabwin(chat_win)[1] ~= vim.fn.tabpagenr() then
    -- A new session (e.g. after :AcpRestart) takes over the windows of the previous chat.
    chat_win = nil
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      local other = M.chat_of_buf(api.nvim_win_get_buf(win))
      if other and other ~= chat then
        if api.nvim_win_get_buf(win) == other.buf then
          require("acp_nvim.ui.windows").show_in(win, chat.buf)
          chat_win = win
        else
          api.nvim_win_close(win, true)
        end
      end
    end
  end
  if chat_win == nil or vim.fn.win_id2tabwin(chat_win)[1] ~= vim.fn.tabpagenr() then
    if options.position == "current" then
      api.nvim_win_set_buf(0, chat.buf)
    else
      local split = ({ right = "botright vsplit", left = "topleft vsplit", bottom = "botright split" })[options.position]
      vim.cmd(split)
      api.nvim_win_set_buf(0, chat.buf)
      if options.position == "bottom" then
        api.nvim_win_set_height(0, options.height)
      else
        api.nvim_win_set_width(0, options.width)
      end
    end
    chat_win = api.nvim_get_current_win()
  end
  setup_window(chat_win, chat)
  setup_folds(chat_win)
  pcall(api.nvim_win_set_cursor, chat_win, { api.nvim_buf_line_count(chat.buf), 0 })
  api.nvim_set_current_win(chat_win)
  prompt.open(chat, chat_win)
  if opts and opts.focus == false and api.nvim_win_is_valid(previous) then
    api.nvim_set_current_win(previous)
  end
  return true
end

--- Scrolls the chat to an item (the tool call a permission request is about).
---@param session_id string
---@param item_id string
function M.reveal(session_id, item_id)
  local chat = M.chats[session_id]
  local entry = chat and chat.items[item_id]
  if entry == nil then
    return
  end
  local first = item_range(chat, entry)
  for _, win in ipairs(vim.fn.win_findbuf(chat.buf)) do
    -- Moving the cursor off the last line stops the window following the stream, so leave a window alone
    -- when the item is already in view.
    local top, bottom = unpack(api.nvim_win_call(win, function()
      return { vim.fn.line("w0"), vim.fn.line("w$") }
    end))
    if first + 1 < top or first + 1 > bottom then
      pcall(api.nvim_win_set_cursor, win, { first + 1, 0 })
    end
  end
end

-- ---- folds, jumps ---------------------------------------------------------------------------------------

--- The item whose lines hold `row` (0-based) and its first row. A binary search over `chat.order` (items are
--- in buffer order) with one extmark lookup by id per step: a backward `nvim_buf_get_extmarks` scan walks
--- every mark before the row in Neovim 0.11 (about 1 ms on a 10,000-update chat), and 'foldexpr' runs it for
--- each changed line.
---@param chat AcpChat
---@param row integer
---@return AcpChatItem|nil, integer
local function item_at(chat, row)
  -- 'foldexpr' asks for the changed lines one after the other: the last answer usually still holds.
  local tick = api.nvim_buf_get_changedtick(chat.buf)
  local cache = chat.item_at_cache
  if cache and cache.tick == tick and row >= cache.first and row < cache.stop then
    return cache.entry, cache.first
  end
  local lo, hi = 1, #chat.order
  local found, found_row, found_idx = nil, 0, 0
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local entry = chat.items[chat.order[mid]]
    local mark_row = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, entry.mark, {})[1]
    if mark_row ~= nil and mark_row <= row then
      found, found_row, found_idx = entry, mark_row, mid
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  if found ~= nil then
    local next_id = chat.order[found_idx + 1]
    local stop = math.huge
    if next_id then
      stop = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, chat.items[next_id].mark, {})[1] or row + 1
    end
    chat.item_at_cache = { tick = tick, first = found_row, stop = stop, entry = found }
  end
  return found, found_row
end

--- The fold levels 'foldexpr' gives rows `row` (0-based) to `line_count` - 1, in one pass over their items.
---@param chat AcpChat
---@param row integer
---@param line_count integer
---@return table<integer, string> levels[k]: the level of row `row` + k - 1
levels_from = function(chat, row, line_count)
  local buf, order, items = chat.buf, chat.order, chat.items
  local function first_row(idx)
    if idx > #order then
      return line_count
    end
    return api.nvim_buf_get_extmark_by_id(buf, ns_items, items[order[idx]].mark, {})[1] or line_count
  end
  local levels, n = {}, 0
  local entry, first = item_at(chat, row)
  local idx = entry and entry.idx or 1
  local start = entry and first or first_row(1)
  -- Rows above the first item (none in practice): no fold.
  for _ = row, math.min(start, line_count) - 1 do
    n = n + 1
    levels[n] = "0"
  end
  while idx <= #order and start < line_count do
    local item = items[order[idx]]
    local stop = first_row(idx + 1)
    local folds, body = item.folds, start + (item.sep and 1 or 0)
    for r = math.max(start, row), stop - 1 do
      n = n + 1
      levels[n] = folds and fold_level(folds, r - body) or "0"
    end
    idx, start = idx + 1, stop
  end
  return levels
end

--- 'foldexpr' of chat windows: the fold levels the host gave the item's lines (thoughts, a tool call's
--- details, a long output).
---@param lnum integer
---@return string
function M.foldexpr(lnum)
  local buf = api.nvim_get_current_buf()
  local chat = chat_of_buf(buf)
  if chat == nil then
    return "0"
  end
  local drawing = chat.drawing
  if drawing ~= nil and lnum > drawing.base then
    return drawing.levels[lnum - drawing.base] or "0"
  end
  local entry, first = item_at(chat, lnum - 1)
  local folds = entry and entry.folds
  if folds == nil then
    return "0"
  end
  return fold_level(folds, lnum - 1 - first - (entry.sep and 1 or 0))
end

--- 'foldtext' of chat windows: the fold's first line as drawn (its highlights), and how many lines it hides.
---@return table[] chunks {text, group}
function M.foldtext()
  local buf = api.nvim_get_current_buf()
  local row = vim.v.foldstart - 1
  local text = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  local chunks, col = {}, 0
  local marks = api.nvim_buf_get_extmarks(buf, ns_hl, { row, 0 }, { row, -1 }, { details = true })
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

--- The location under the cursor, if the line is a tool call location or diff header.
---@return {path: string, lnum: integer}|nil
function M.location_at_cursor()
  local buf = api.nvim_get_current_buf()
  local chat = chat_of_buf(buf)
  if chat == nil then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns_loc, { row, 0 }, { row, -1 }, {})) do
    local loc = chat.locs[mark[1]]
    if loc then
      return loc
    end
  end
  return nil
end

-- Opens `loc` in a window that is not a chat or prompt window (a new split when there is none).
---@param loc {path: string, lnum: integer}
local function open_location(loc)
  require("acp_nvim.ui.windows").file_window()
  vim.cmd.edit(vim.fn.fnameescape(loc.path))
  pcall(api.nvim_win_set_cursor, 0, { math.max(loc.lnum, 1), 0 })
end

--- <CR>/gf in the chat: jump to the location under the cursor, or toggle a thought fold.
---@param fallback string normal-mode keys when there is nothing to jump to
function M.jump(fallback)
  -- The note where a long message is cut opens the whole message.
  if fallback == require("acp_nvim.config").options.keymaps.open_message then
    if require("acp_nvim.ui.chat_message").open_at_cursor() then
      return
    end
  end
  -- A terminal placeholder opens the agent's terminal itself.
  local term = require("acp_nvim.ui.chat_terminal").at_cursor()
  if term then
    require("acp_nvim.ui.chat_terminal").open(term)
    return
  end
  local loc = M.location_at_cursor()
  if loc then
    open_location(loc)
    return
  end
  local lnum = api.nvim_win_get_cursor(0)[1]
  if fallback == "<CR>" and vim.fn.foldlevel(lnum) > 0 then
    vim.cmd("normal! za")
    return
  end
  if fallback == "gf" then
    pcall(vim.cmd, "normal! gf")
  end
end

--- On a prompt in the chat: the host offers to restore the files to before it (or to show the diff).
function M.offer_checkpoint()
  local chat = M.chat_of_buf(api.nvim_get_current_buf())
  local entry = chat and item_at(chat, api.nvim_win_get_cursor(0)[1] - 1)
  if chat == nil or entry == nil or entry.kind ~= "user" then
    require("acp_nvim.util.notify").warn("put the cursor on a prompt of yours to restore to before it")
    return
  end
  require("acp_nvim.host.api").checkpoint(chat.session_id, { "offer", chat.order[entry.idx] })
end

---@param buf integer
function M.set_keymaps(buf)
  local keymaps = require("acp_nvim.config").options.keymaps
  vim.keymap.set("n", "<CR>", function()
    M.jump("<CR>")
  end, { buffer = buf, desc = "acp.nvim: jump to location / toggle fold" })
  vim.keymap.set("n", "gf", function()
    M.jump("gf")
  end, { buffer = buf, desc = "acp.nvim: jump to location" })
  vim.keymap.set("n", keymaps.cancel, function()
    require("acp_nvim").cancel()
  end, { buffer = buf, desc = "acp.nvim: cancel the turn" })
  if keymaps.open_message ~= "<CR>" and keymaps.open_message ~= "gf" then
    vim.keymap.set("n", keymaps.open_message, function()
      require("acp_nvim.ui.chat_message").open_at_cursor()
    end, { buffer = buf, desc = "acp.nvim: open the whole message of the note under the cursor" })
  end
  if keymaps.checkpoint then
    vim.keymap.set("n", keymaps.checkpoint, function()
      M.offer_checkpoint()
    end, { buffer = buf, desc = "acp.nvim: restore the files to before this prompt" })
  end
end

-- For ui/chat_highlight.lua, which highlights the chat item by item, and ui/chat_message.lua.
M.item_at = item_at
M.item_range = item_range
M.folds_changed = folds_changed

--- The lines of a chat buffer (tests, scripts).
---@param session_id string|nil
---@return string[]
function M.lines(session_id)
  local chat = M.chats[session_id or M.current or ""]
  if chat == nil then
    return {}
  end
  return api.nvim_buf_get_lines(chat.buf, 0, -1, false)
end

return M

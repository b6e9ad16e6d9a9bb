-- Drawing the chat: each item of the view models the host sends (never protocol data) is a range of lines
-- whose start is an extmark (ui/chat/items.lua), so appending a streamed chunk touches only that chunk's lines
-- and updating a tool call rewrites only that item. The drain (ui/chat/drain.lua) calls these with the ops.

local M = {}

local api = vim.api
local chat_folds = require("acp_nvim.ui.chat.folds")
local chat_message = require("acp_nvim.ui.chat_message")
local config = require("acp_nvim.config")
local denil = require("acp_nvim.editor.answer").opt
local item_range = require("acp_nvim.ui.chat.items").item_range
local state = require("acp_nvim.ui.chat.state")
local item_folds = chat_folds.item_folds
local ns_items, ns_hl, ns_loc, ns_term = state.ns_items, state.ns_hl, state.ns_loc, state.ns_term
local item_key = state.item_key

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

-- The fold runs drawn, one table for all the items that have the same (most are alike: a thought's, a tool
-- call's details): kept on each item, read only.
local interned = setmetatable({}, { __mode = "v" })

---@param folds (integer|boolean)[]
---@return (integer|boolean)[]
local function intern(folds)
  local parts = {}
  for i = 1, #folds, 3 do
    parts[#parts + 1] = ("%d:%d%s"):format(folds[i], folds[i + 1], folds[i + 2] and ">" or "")
  end
  local key = table.concat(parts, ",")
  local shared = interned[key]
  if shared == nil then
    interned[key] = folds
    return folds
  end
  return shared
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
  out.folds = folds and intern(folds)
  return out
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

--- Appends new items at the end of the chat with one buffer change for all of them: a replayed history
--- adds thousands of items in a frame, and a change per item (each seen by every on_bytes listener, the
--- markdown highlighter among them) made that the longest stall of a load.
---@param chat AcpChat
---@param items table[] view models whose ids are not in the chat yet (and distinct)
function M.add_items(chat, items)
  local buf = chat.buf
  local lines, rows, drawns, folds = {}, {}, {}, {}
  -- What makes the new items' folds, once their lines are there.
  local fold_cmds = {}
  local was_empty = chat.empty
  local base = was_empty and 0 or api.nvim_buf_line_count(buf)
  for i, item in ipairs(items) do
    local drawn = draw(item)
    rows[i] = base + #lines
    local sep = not (was_empty and i == 1) and not item.tight
    if sep then
      lines[#lines + 1] = ""
    elseif drawn.lines[1] == nil then
      -- A line of its own even when empty, as a replaced item gets: its mark is on no other item's row.
      drawn.lines[1] = ""
    end
    folds[i] = item_folds(item, drawn)
    if folds[i] ~= nil then
      chat_folds.commands(fold_cmds, base + #lines, folds[i], #drawn.lines)
    end
    for _, line in ipairs(drawn.lines) do
      lines[#lines + 1] = line
    end
    drawns[i] = drawn
  end
  api.nvim_buf_set_lines(buf, base, was_empty and -1 or base, false, lines)
  chat.empty = false
  for i, item in ipairs(items) do
    local sep = not (was_empty and i == 1) and not item.tight
    -- Left gravity: rewriting this item from its first column must not push its own mark down.
    local mark = api.nvim_buf_set_extmark(buf, ns_items, rows[i], 0, { right_gravity = false })
    -- The item is its mark's id (ui/chat/state.lua): no table of its own.
    local entry = mark
    chat.kinds[entry] = item.kind
    if not sep then
      chat.bare[entry] = true
    end
    chat.fold_runs[entry] = folds[i]
    local key = item_key(item.id)
    chat.items[key] = entry
    chat.order[#chat.order + 1] = key
    local body = rows[i] + (sep and 1 or 0)
    decorate(chat, body, drawns[i])
    if drawns[i].note then
      chat_message.mark(chat, entry, body + drawns[i].note[1], drawns[i].note[2])
    end
  end
  -- Looked up while the lines were drawn, before their items were recorded.
  chat.item_at_cache = nil
  if fold_cmds[1] ~= nil then
    chat_folds.add(chat, fold_cmds, base, base + #lines)
  end
end

---@param chat AcpChat
---@param item table
function M.add_item(chat, item)
  if chat.items[item_key(item.id)] then
    return M.replace(chat, item)
  end
  M.add_items(chat, { item })
end

---@param chat AcpChat
---@param item table
function M.replace(chat, item)
  local entry = chat.items[item_key(item.id)]
  if entry == nil then
    return M.add_item(chat, item)
  end
  local buf = chat.buf
  local first, last = item_range(chat, entry)
  local body = first + (chat.bare[entry] and 0 or 1)
  local drawn = draw(item)
  undecorate(chat, body, last)
  chat_message.clear(chat, body, last)
  -- set_text up to the end of the last line (not set_lines up to the next item's first line): the next
  -- item's mark sits outside the changed span and simply moves with it.
  local last_line = api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or ""
  local old_folds = chat.fold_runs[entry]
  local before = chat_folds.before(chat, body, old_folds, last - body + 1)
  local folds = item_folds(item, drawn)
  chat.fold_runs[entry] = folds
  api.nvim_buf_set_text(buf, body, 0, last, #last_line, drawn.lines)
  decorate(chat, body, drawn)
  chat.notes[entry] = nil
  if drawn.note then
    chat_message.mark(chat, entry, body + drawn.note[1], drawn.note[2])
  end
  if old_folds ~= nil or folds ~= nil then
    -- Details that were open (a permission asked for) are folded once answered; a fold the user opened stays.
    chat_folds.after(chat, before, body, folds, #drawn.lines, old_folds == nil)
  end
end

---@param chat AcpChat
---@param id string
---@param text string
function M.append_text(chat, id, text)
  local entry = chat.items[item_key(id)]
  if entry == nil or text == "" then
    return
  end
  local buf = chat.buf
  local first, last = item_range(chat, entry)
  -- The line's length from byte offsets, not by reading it: one streamed paragraph can be a line of
  -- hundreds of KB, copied into Lua on every frame only to be measured.
  local width = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, last) - 1
  local parts = vim.split(text, "\n", { plain = true })
  local body = first + (chat.bare[entry] and 0 or 1)
  local folds = chat.fold_runs[entry]
  local before = folds ~= nil and #parts > 1 and chat_folds.before(chat, body, folds, last - body + 1)
  api.nvim_buf_set_text(buf, last, width, last, width, parts)
  if #parts == 1 and width + #text > config.options.chat.long_line_bytes then
    chat.long_line = true
  end
  if before then
    -- New lines below a fold's last line are not in it: the item's folds are made again, to its new end.
    chat_folds.after(chat, before, body, folds, last + #parts - body, false)
  end
  if chat.kinds[entry] == "thought" then
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
function M.set_meta(chat, op)
  chat.header = denil(op.header) or chat.header
  chat.commands = op.commands or {}
  chat.modes = op.modes or {}
  chat.config = op.config or {}
  chat.mode = denil(op.mode)
  chat.title = denil(op.title)
  refresh_header(chat)
end

--- The chat's queued prompts (`chat.queued_view`, from the host) drawn as virtual lines under its last line;
--- again after each drawn slice, since what is added to the chat goes below the old last line.
---@param chat AcpChat
function M.place_queue(chat)
  local buf, view = chat.buf, chat.queued_view
  if not api.nvim_buf_is_valid(buf) then
    return
  end
  if view == nil or #view.lines == 0 then
    api.nvim_buf_clear_namespace(buf, state.ns_queue, 0, -1)
    chat.queue_mark = nil
    return
  end
  chat.queue_mark = api.nvim_buf_set_extmark(buf, state.ns_queue, api.nvim_buf_line_count(buf) - 1, 0, {
    id = chat.queue_mark,
    virt_lines = view.lines,
  })
end

return M

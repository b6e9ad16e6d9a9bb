--- Live terminal output in the chat: under a tool call that embeds `{ type = "terminal", terminalId }`, the
--- last lines the command printed, as virtual lines on the chat's terminal placeholder mark (so the chat's own
--- line bookkeeping is untouched). Updates are coalesced: at most one redraw per terminal every
--- `M.interval_ms`. After the agent releases the terminal (or the command ends) the lines stay.
---
--- The tail is kept for every terminal from its first byte (the `terminal_output` event), so a placeholder
--- drawn after the command started still shows everything that matters. Escape sequences are dropped and a
--- carriage return keeps only what was written last on its line (progress bars).
local M = {}

local notify = require("acp_nvim.util.notify")

local api = vim.api

M.interval_ms = 50

--- Lines shown per terminal: `chat.terminal_lines` (read at each use: the host may hand over new options).
---@return integer
local function max_lines()
  return require("acp_nvim.config").options.chat.terminal_lines
end

local ns = api.nvim_create_namespace("acp_nvim_term")

---@class acp_nvim.ChatTerminal
---@field lines string[] the last complete lines
---@field partial string the line being printed
---@field status table? exit status once it ended
---@field pending boolean a redraw is scheduled
---@field views { buf: integer, mark: integer }[]
---@field bufnr integer? the terminal buffer
---@field shown_only boolean? a command the agent runs itself: output shown here, no terminal buffer

---@type table<string, acp_nvim.ChatTerminal>
local terms = {}

---@param id string
---@param shown_only boolean? a command the agent runs itself (its placeholder may have been attached first)
---@return acp_nvim.ChatTerminal
local function get(id, shown_only)
  local t = terms[id]
  if t == nil then
    t = { lines = {}, partial = "", pending = false, views = {} }
    terms[id] = t
  end
  if shown_only then
    t.shown_only = true
  elseif t.bufnr == nil and not t.shown_only then
    t.bufnr = require("acp_nvim.editor.terminal").bufnr(id)
  end
  return t
end

--- What a line looks like on screen, roughly: no escape sequences, only the text after the last "\r".
---@param line string
---@return string
local function visible(line)
  line = line:gsub("\27%[[0-9;?]*[ -/]*[@-~]", "")
  line = line:gsub("\27%][^\7\27]*\7", "")
  line = line:gsub("\27%][^\27]*\27\\", "")
  line = line:gsub("\27[@-_]", "")
  local last = ""
  for segment in (line .. "\r"):gmatch("([^\r]*)\r") do
    if segment ~= "" then
      last = segment
    end
  end
  line = last:gsub("[%z\1-\8\11-\31\127]", "")
  return line
end
M._visible = visible

---@param t acp_nvim.ChatTerminal
---@param data string
local function feed(t, data)
  -- Only the last lines are shown: their ends are looked for from the end of the chunk, so a command
  -- flooding its terminal costs a few hundred bytes of scanning per chunk, not a split of the whole chunk.
  local newlines, byte, i, max = {}, string.byte, #data, max_lines()
  while i >= 1 and #newlines <= max do
    if byte(data, i) == 10 then
      newlines[#newlines + 1] = i
    end
    i = i - 1
  end
  local found = #newlines
  if found == 0 then
    t.partial = t.partial .. data
  else
    -- Scanned to the chunk's start: its first line continues the unfinished one. Otherwise the oldest
    -- newline found only bounds the lines kept.
    local exhausted = i < 1
    for k = exhausted and found or found - 1, 1, -1 do
      local start = k < found and newlines[k + 1] + 1 or 1
      local line = data:sub(start, newlines[k] - 1)
      t.lines[#t.lines + 1] = start == 1 and t.partial .. line or line
    end
    t.partial = data:sub(newlines[1] + 1)
  end
  -- A line without end can grow without bound (a progress bar): keep only its tail.
  if #t.partial > 4096 then
    t.partial = t.partial:sub(-4096)
  end
  local extra = #t.lines - max_lines()
  if extra > 0 then
    t.lines = { unpack(t.lines, extra + 1) }
  end
end

---@param status table
---@return string
local function describe(status)
  local signal = require("acp_nvim.editor.answer").opt(status.signal)
  if signal then
    return "killed by " .. signal
  end
  return ("exited with code %s"):format(tostring(status.exit_code))
end

--- The lines shown for terminal `id` (without the frame), for tests and scripts.
---@param id string
---@return string[]
function M.lines(id)
  local t = terms[id]
  if t == nil then
    return {}
  end
  local out = {}
  for _, line in ipairs(t.lines) do
    out[#out + 1] = visible(line)
  end
  if t.partial ~= "" then
    out[#out + 1] = visible(t.partial)
  end
  local max = max_lines()
  while #out > max do
    table.remove(out, 1)
  end
  return out
end

---@param id string
local function render(id)
  local t = terms[id]
  if t == nil then
    return
  end
  local virt = {}
  for _, line in ipairs(M.lines(id)) do
    virt[#virt + 1] = { { "    │ " .. line, "AcpChatTerminalOutput" } }
  end
  if t.status then
    virt[#virt + 1] = { { "    └ " .. describe(t.status), "AcpChatTerminal" } }
  end
  local kept = {}
  for _, view in ipairs(t.views) do
    if api.nvim_buf_is_valid(view.buf) then
      local pos = api.nvim_buf_get_extmark_by_id(view.buf, ns, view.mark, {})
      -- A redrawn tool call gets a new placeholder mark (and a new attach); the old one is gone.
      if pos[1] ~= nil then
        pcall(api.nvim_buf_set_extmark, view.buf, ns, pos[1], pos[2], { id = view.mark, virt_lines = virt })
        kept[#kept + 1] = view
      end
    end
  end
  t.views = kept
end

---@param id string
local function schedule(id)
  local t = terms[id]
  if t == nil or t.pending then
    return
  end
  t.pending = true
  vim.defer_fn(function()
    t.pending = false
    render(id)
  end, M.interval_ms)
end

--- A placeholder for terminal `id` was drawn at `mark` in the chat buffer `buf`.
---@param buf integer
---@param mark integer
---@param id string
function M.attach(buf, mark, id)
  local t = get(id)
  t.views[#t.views + 1] = { buf = buf, mark = mark }
  render(id)
end

--- The `terminal_output` event (wired by `lua/acp_nvim/wiring.lua`).
---@param id string
---@param data string
function M.on_output(id, data)
  feed(get(id), data)
  schedule(id)
end

--- Output of a command the agent runs itself (the host sends only what is new; `reset`: it starts over).
---@param id string
---@param data string
---@param reset boolean
function M.show_output(id, data, reset)
  local t = get(id, true)
  if reset then
    t.lines, t.partial = {}, ""
  end
  feed(t, data)
  schedule(id)
end

--- How a command the agent runs itself ended.
---@param id string
---@param status table {exit_code, signal}
function M.show_exit(id, status)
  get(id, true).status = status
  schedule(id)
end

--- The `terminal_exit` event.
---@param id string
---@param status table
function M.on_exit(id, status)
  local t = get(id)
  t.status = status
  schedule(id)
end

--- Every terminal id seen (released ones too), oldest first.
---@return string[]
function M.ids()
  local seen = {}
  for id, t in pairs(terms) do
    if not t.shown_only then
      seen[id] = true
    end
  end
  for _, id in ipairs(require("acp_nvim.editor.terminal").list()) do
    seen[id] = true
  end
  local ids = vim.tbl_keys(seen)
  table.sort(ids, function(a, b)
    return (tonumber(a:match("%d+$")) or 0) < (tonumber(b:match("%d+$")) or 0)
  end)
  return ids
end

--- Opens the terminal `id` (default: the newest) as a real terminal window below the current one; its
--- buffer stays after the agent released it, so what it printed can still be read and scrolled.
---@param id string?
---@return boolean
function M.open(id)
  if id == nil or id == "" then
    local ids = M.ids()
    id = ids[#ids]
  end
  local t = id and terms[id]
  local buf = t and t.bufnr or (id and require("acp_nvim.editor.terminal").bufnr(id))
  if buf == nil or not api.nvim_buf_is_valid(buf) then
    notify.warn(("no terminal %s"):format(id or "yet"))
    return false
  end
  local wins = vim.fn.win_findbuf(buf)
  if #wins > 0 then
    api.nvim_set_current_win(wins[1])
  else
    api.nvim_open_win(buf, true, { split = "below" })
  end
  return true
end

--- The terminal placeholder under the cursor in a chat window, if any.
---@return string?
function M.at_cursor()
  local buf = api.nvim_get_current_buf()
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local chat = require("acp_nvim.ui.chat").chat_of_buf(buf)
  if chat == nil then
    return nil
  end
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, { row, -1 }, {})) do
    local id = chat.terms[mark[1]]
    if id then
      return id
    end
  end
  return nil
end

return M

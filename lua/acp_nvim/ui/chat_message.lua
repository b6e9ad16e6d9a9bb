-- The cut in the middle of a long message (acp_nvim/client/session/message_cut.py): its note, the message's end drawn
-- after it, and the whole message opened read-only from the file the host keeps it in.

local M = {}

local notify = require("acp_nvim.util.notify")

local api = vim.api
local ns_note = api.nvim_create_namespace("acp_nvim_note")
local ns_hl = api.nvim_create_namespace("acp_nvim_hl")
M.ns = ns_note

-- The file of each note, by the note's extmark (per chat buffer).
---@type table<integer, table<integer, string>>
local files = {}

--- The hint after a note: the key that opens the message (virtual text, not part of the chat's text).
---@return string
local function hint()
  return "  " .. require("acp_nvim.config").options.keymaps.open_message .. ": the whole message"
end

--- Records the note of `entry` on `row` (a view line with `note`, or a note op).
---@param chat AcpChat
---@param entry AcpChatItem
---@param row integer
---@param file string
function M.mark(chat, entry, row, file)
  local buf = chat.buf
  local mark = api.nvim_buf_set_extmark(buf, ns_note, row, 0, {
    virt_text = { { hint(), "Comment" } },
    virt_text_pos = "eol",
  })
  files[buf] = files[buf] or {}
  files[buf][mark] = file
  chat.notes[entry] = mark
end

--- Forgets the notes on rows [first, last] (the item is drawn again).
---@param chat AcpChat
---@param first integer
---@param last integer
function M.clear(chat, first, last)
  local buf = chat.buf
  local known = files[buf]
  if known ~= nil then
    for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns_note, { first, 0 }, { last, -1 }, {})) do
      known[mark[1]] = nil
    end
  end
  api.nvim_buf_clear_namespace(buf, ns_note, first, last + 1)
end

--- The note op: the note drawn (after the message's last line the first time, in place after that) and what
--- follows it replaced by `op.tail`; the host appends the rest of the tail after it.
---@param chat AcpChat
---@param op {id: string, text: string, tail: string|nil, file: string}
function M.set(chat, op)
  local entry = chat.items[require("acp_nvim.ui.chat.state").item_key(op.id)]
  if entry == nil then
    return
  end
  local chat_mod = require("acp_nvim.ui.chat")
  local buf = chat.buf
  local _, last = chat_mod.item_range(chat, entry)
  local width = api.nvim_buf_get_offset(buf, last + 1) - api.nvim_buf_get_offset(buf, last) - 1
  local lines = { op.text }
  vim.list_extend(lines, vim.split(op.tail or "", "\n", { plain = true }))
  local row
  -- The item's folds (a long thought's) are made again to its new end.
  local folds_before = chat.fold_runs[entry] and chat_mod.folds_before(chat, entry)
  local note = chat.notes[entry]
  local mark = note and api.nvim_buf_get_extmark_by_id(buf, ns_note, note, {})[1]
  if mark ~= nil then
    row = mark
    M.clear(chat, row, last)
    api.nvim_buf_clear_namespace(buf, ns_hl, row, last + 1)
    -- From the note's first column to the end of the item's last line: the next item's mark stays outside.
    api.nvim_buf_set_text(buf, row, 0, last, width, lines)
  else
    -- From the end of the last line, as an append: the next item's mark moves down with it.
    table.insert(lines, 1, "")
    api.nvim_buf_set_text(buf, last, width, last, width, lines)
    table.remove(lines, 1)
    row = last + 1
  end
  M.mark(chat, entry, row, op.file)
  api.nvim_buf_set_extmark(buf, ns_hl, row, 0, { end_col = #op.text, hl_group = "AcpChatNotice" })
  local stop = row + #lines - 1
  if chat.kinds[entry] == "thought" and #lines > 1 then
    api.nvim_buf_set_extmark(buf, ns_hl, row + 1, 0, {
      end_row = stop,
      end_col = #lines[#lines],
      hl_group = "AcpChatThought",
    })
  end
  if folds_before then
    chat_mod.folds_after(chat, entry, folds_before)
  end
end

--- The file of the note on the cursor's line, if there is one.
---@return string|nil
function M.file_at_cursor()
  local buf = api.nvim_get_current_buf()
  local known = files[buf]
  if known == nil then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns_note, { row, 0 }, { row, -1 }, {})) do
    if known[mark[1]] then
      return known[mark[1]]
    end
  end
  return nil
end

--- Opens the whole message of the note under the cursor, read-only, in a window beside the chat; false when
--- the cursor is not on a note.
---@return boolean
function M.open_at_cursor()
  local file = M.file_at_cursor()
  if file == nil then
    return false
  end
  if vim.uv.fs_stat(file) == nil then
    notify.warn("the message's file is gone (the host that kept it ended)")
    return true
  end
  local name = "acp://message/" .. vim.fn.fnamemodify(file, ":t:r")
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    -- No filetype: a message's text never reaches a tree-sitter parser here (ui/parse_guard.lua says why).
    vim.bo[buf].swapfile = false
    api.nvim_buf_call(buf, function()
      vim.cmd("silent keepalt 0read " .. vim.fn.fnameescape(file))
    end)
    -- :read leaves the buffer's first (empty) line at the end.
    local count = api.nvim_buf_line_count(buf)
    if count > 1 and api.nvim_buf_get_lines(buf, count - 1, count, false)[1] == "" then
      api.nvim_buf_set_lines(buf, count - 1, count, false, {})
    end
    vim.bo[buf].modifiable = false
    vim.bo[buf].readonly = true
    vim.bo[buf].modified = false
  end
  require("acp_nvim.ui.windows").file_window()
  api.nvim_win_set_buf(0, buf)
  return true
end

--- Forgets a chat buffer's notes (the buffer is gone).
---@param buf integer
function M.forget(buf)
  files[buf] = nil
end

return M

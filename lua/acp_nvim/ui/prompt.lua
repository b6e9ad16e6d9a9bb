-- The prompt window under the chat: write, send, walk the history, complete the agent's /commands and
-- @file mentions, and the attachments that go with the next prompt (buffers, selections, images, audio).
-- The parts are in ui/prompt/ (history, mentions, attachments, completion, each requiring only those before
-- it); this module is the prompt's buffer and window, and the name the rest of the plugin requires.

local M = {}

local api = vim.api
local history = require("acp_nvim.ui.prompt.history")
local mentions = require("acp_nvim.ui.prompt.mentions")
local attachments = require("acp_nvim.ui.prompt.attachments")
local completion = require("acp_nvim.ui.prompt.completion")

M.image_types = mentions.image_types
M.audio_types = mentions.audio_types
M.media_type = mentions.media_type
M.mentions = mentions.mentions

M.project_files = completion.project_files
M.omnifunc = completion.omnifunc
M.update_hint = completion.update_hint

M.remember = history.remember
M.history = history.history

M.attach = attachments.attach
M.pending = attachments.pending
M.clear_attachments = attachments.clear_attachments
M.collect = attachments.collect
M.sent = attachments.sent
M.refused = attachments.refused
M.clipboard_image = attachments.clipboard_image

---@param buf integer
---@param how "prompt"|"steer"
local function send(buf, how)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" and not attachments.any_pending() then
    return
  end
  -- The text is cleared only once the prompt was handed over: a refused send keeps what the user wrote.
  if require("acp_nvim")[how](text, M.collect(text)) then
    M.sent()
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
    history.reset(buf)
    api.nvim_buf_clear_namespace(buf, completion.ns_hint, 0, -1)
  end
end

---@param buf integer
local function set_keymaps(buf)
  local keymaps = require("acp_nvim.config").options.keymaps
  local function map(modes, lhs, rhs, desc)
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, desc = "acp.nvim: " .. desc })
  end
  map("n", keymaps.send, function()
    send(buf, "prompt")
  end, "send the prompt")
  map({ "n", "i" }, keymaps.send_insert, function()
    send(buf, "prompt")
  end, "send the prompt")
  map({ "n", "i" }, keymaps.steer, function()
    send(buf, "steer")
  end, "send the prompt into the running turn")
  map("n", keymaps.cancel, function()
    require("acp_nvim").cancel()
  end, "cancel the turn")
  map("n", keymaps.history_prev, function()
    history.walk(buf, -1)
  end, "previous prompt")
  map("n", keymaps.history_next, function()
    history.walk(buf, 1)
  end, "next prompt")
  -- Typing "/" at the start of an empty prompt offers the agent's commands right away.
  vim.keymap.set("i", "/", function()
    local empty = api.nvim_buf_line_count(buf) == 1 and api.nvim_get_current_line() == ""
    local chat = require("acp_nvim.ui.chat").chat_of_buf(buf)
    if empty and chat and #chat.commands > 0 then
      return "/<C-x><C-o>"
    end
    return "/"
  end, { buffer = buf, expr = true, desc = "acp.nvim: complete agent commands" })
  -- "@" at the start of a word offers the project's files.
  vim.keymap.set("i", "@", function()
    local col = api.nvim_win_get_cursor(0)[2]
    local before = api.nvim_get_current_line():sub(1, col)
    if before == "" or before:match("%s$") then
      return "@<C-x><C-o>"
    end
    return "@"
  end, { buffer = buf, expr = true, desc = "acp.nvim: complete project files" })
  -- The winbar names the keys of the mode the user is in.
  api.nvim_create_autocmd({ "InsertEnter", "InsertLeave", "ModeChanged" }, {
    buffer = buf,
    callback = function(ev)
      local insert = ev.event == "InsertEnter"
        or (ev.event == "ModeChanged" and vim.v.event.new_mode:sub(1, 1) == "i")
      M.show_keys(buf, insert)
    end,
  })
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "CompleteDone" }, {
    buffer = buf,
    callback = function()
      M.update_hint(buf)
    end,
  })
end

--- Whether the prompt's window is in Insert mode, by its winbar's last drawing.
---@type table<integer, boolean>
local inserting = {}

--- The winbar of the prompt's windows: the keys that send in the mode the user is in (Insert mode sends
--- with `send_insert`: `<CR>` there is a new line), as the user mapped them; the steer key while the host's
--- view of the chat's queue says the running turn takes a prompt (`steer`). `insert` nil: the mode as last
--- shown (the queue changed).
---@param buf integer
---@param insert boolean|nil
function M.show_keys(buf, insert)
  if insert == nil then
    insert = inserting[buf] == true
  end
  inserting[buf] = insert
  local keys = require("acp_nvim.config").options.keymaps
  local chat = require("acp_nvim.ui.chat").chat_of_buf(buf)
  local view = chat and chat.queued_view
  local steer = (view and view.steer) and (", %s steer"):format(keys.steer) or ""
  local text
  if insert then
    text = ("Prompt: %s send%s, / commands, @ files"):format(keys.send_insert, steer)
  else
    text = ("Prompt: %s send%s, %s/%s history, %s cancel"):format(
      keys.send,
      steer,
      keys.history_prev,
      keys.history_next,
      keys.cancel
    )
  end
  local bar = "%#AcpChatHeader#" .. text:gsub("%%", "%%%%"):gsub("<", "‹"):gsub(">", "›")
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    -- Local to the window: plain `vim.wo[win]` would set the global value too.
    if vim.wo[win][0].winbar ~= bar then
      vim.wo[win][0].winbar = bar
    end
  end
end

--- The chat's prompt buffer, created on first use. Also called on its own, a tick before the windows open
--- (ui/chat/init.lua, M.create): its filetype (~1.5 ms) and the windows were one of the longest ticks of a load.
---@param chat AcpChat
---@return integer
function M.buffer(chat)
  local buf = chat.prompt_buf
  if buf == nil or not api.nvim_buf_is_valid(buf) then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, api.nvim_buf_get_name(chat.buf) .. "/prompt")
    vim.bo[buf].filetype = "acp_nvim_prompt"
    vim.bo[buf].omnifunc = "v:lua.require'acp_nvim.ui.prompt'.omnifunc"
    set_keymaps(buf)
    chat.prompt_buf = buf
    attachments.show_pending()
  end
  return buf
end

--- Shows the chat's prompt buffer (created on first use) in a window under `chat_win`.
---@param chat AcpChat
---@param chat_win integer
function M.open(chat, chat_win)
  local buf = M.buffer(chat)
  local win = vim.fn.win_findbuf(buf)[1]
  if win == nil then
    api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    api.nvim_win_set_height(win, require("acp_nvim.config").options.chat.prompt_height)
    -- Local to the window: plain `vim.wo[win]` would set the global values too.
    vim.wo[win][0].winfixheight = true
    vim.wo[win][0].winfixbuf = true
    M.show_keys(buf, api.nvim_get_current_buf() == buf and api.nvim_get_mode().mode:sub(1, 1) == "i")
  end
  api.nvim_set_current_win(win)
end

--- The host's entry point: a prompt made for the user (`:AcpReview send`) into the session's prompt window,
--- after what the prompt already holds, with its attachments; the chat and prompt are shown and the prompt
--- focused, in Normal mode, for the user to edit and send.
---@param session_id string
---@param text string
---@param items table[]
function M.draft(session_id, text, items)
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.chats[session_id]
  if chat == nil or not chats.open(session_id) then
    require("acp_nvim.util.notify").warn("the session's chat is gone: nothing was put in a prompt")
    return
  end
  local buf = M.buffer(chat)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local new = vim.split(text, "\n")
  if vim.trim(table.concat(lines, "\n")) ~= "" then
    new = vim.list_extend(vim.list_extend(lines, { "" }), new)
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, new)
  attachments.add(items or {})
  local win = vim.fn.win_findbuf(buf)[1]
  if win ~= nil then
    api.nvim_set_current_win(win)
    api.nvim_win_set_cursor(win, { 1, 0 })
    -- A draft longer than the window is shown whole (and the line of its attachments), up to half the screen:
    -- it is there to be read and edited.
    local height = math.min(#new + 2, math.floor(vim.o.lines / 2))
    if height > api.nvim_win_get_height(win) then
      api.nvim_win_set_height(win, height)
    end
  end
  vim.cmd.stopinsert()
end

--- After :AcpChat: Insert mode in the prompt it focused when that prompt is empty (option chat.start_insert),
--- so a user who opens the chat and types is typing the prompt (in Normal mode, `show me ...` would substitute).
--- A prompt holding a draft is left in Normal mode: the user may have come back to edit it.
function M.start_typing()
  local buf = api.nvim_get_current_buf()
  if
    vim.bo[buf].filetype ~= "acp_nvim_prompt" or not require("acp_nvim.config").options.chat.start_insert
  then
    return
  end
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  if #lines == 1 and lines[1] == "" then
    vim.cmd.startinsert()
  end
end

return M

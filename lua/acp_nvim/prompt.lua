-- The prompt window under the chat: write, send, walk the history, complete the agent's /commands.

local M = {}

local api = vim.api

---@type string[] sent prompts, oldest first (shared by all sessions)
local history = {}
---@type table<integer, integer> prompt buffer -> history position being shown (#history + 1 = the draft)
local position = {}
---@type table<integer, string[]> prompt buffer -> unsent text kept while walking the history
local drafts = {}

---@param text string
function M.remember(text)
  if text ~= "" and history[#history] ~= text then
    table.insert(history, text)
  end
end

---@return string[]
function M.history()
  return vim.deepcopy(history)
end

---@param buf integer
local function send(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" then
    return
  end
  -- The text is cleared only once the prompt was handed over: a refused send keeps what the user wrote.
  if require("acp_nvim").prompt(text) then
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
    position[buf] = nil
    drafts[buf] = nil
  end
end

---@param buf integer
---@param step integer -1 older, +1 newer
local function walk(buf, step)
  local pos = position[buf] or (#history + 1)
  local target = pos + step
  if target < 1 or target > #history + 1 then
    return
  end
  if pos == #history + 1 then
    drafts[buf] = api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  position[buf] = target
  local lines = target == #history + 1 and (drafts[buf] or {}) or vim.split(history[target], "\n")
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(buf), 0 })
end

--- 'omnifunc' of the prompt: the agent's /commands at the start of the prompt.
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  local line = api.nvim_get_current_line()
  if findstart == 1 then
    local col = api.nvim_win_get_cursor(0)[2]
    local before = line:sub(1, col)
    local start = before:find("/[%w_%-]*$")
    if start == nil or api.nvim_win_get_cursor(0)[1] ~= 1 or before:sub(1, start - 1):match("%S") then
      return -3
    end
    return start - 1
  end
  local chat = require("acp_nvim.chat").chat_of_buf(api.nvim_get_current_buf())
  local items = {}
  for _, command in ipairs(chat and chat.commands or {}) do
    if vim.startswith(command.word, base) then
      table.insert(items, {
        word = command.word .. " ",
        abbr = command.word,
        menu = command.menu,
        info = command.hint ~= "" and command.hint or nil,
      })
    end
  end
  return items
end

---@param buf integer
local function set_keymaps(buf)
  local keymaps = require("acp_nvim.config").options.keymaps
  local function map(modes, lhs, rhs, desc)
    vim.keymap.set(modes, lhs, rhs, { buffer = buf, desc = "acp.nvim: " .. desc })
  end
  map("n", keymaps.send, function()
    send(buf)
  end, "send the prompt")
  map({ "n", "i" }, keymaps.send_insert, function()
    send(buf)
  end, "send the prompt")
  map("n", keymaps.cancel, function()
    require("acp_nvim").cancel()
  end, "cancel the turn")
  map("n", keymaps.history_prev, function()
    walk(buf, -1)
  end, "previous prompt")
  map("n", keymaps.history_next, function()
    walk(buf, 1)
  end, "next prompt")
  -- Typing "/" at the start of an empty prompt offers the agent's commands right away.
  vim.keymap.set("i", "/", function()
    local empty = api.nvim_buf_line_count(buf) == 1 and api.nvim_get_current_line() == ""
    local chat = require("acp_nvim.chat").chat_of_buf(buf)
    if empty and chat and #chat.commands > 0 then
      return "/<C-x><C-o>"
    end
    return "/"
  end, { buffer = buf, expr = true, desc = "acp.nvim: complete agent commands" })
end

--- Creates the chat's prompt buffer on first use and shows it in a window under `chat_win`.
---@param chat AcpChat
---@param chat_win integer
function M.open(chat, chat_win)
  local buf = chat.prompt_buf
  if buf == nil or not api.nvim_buf_is_valid(buf) then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].buftype = "nofile"
    vim.bo[buf].bufhidden = "hide"
    vim.bo[buf].swapfile = false
    pcall(api.nvim_buf_set_name, buf, api.nvim_buf_get_name(chat.buf) .. "/prompt")
    vim.bo[buf].filetype = "acp_nvim_prompt"
    vim.bo[buf].omnifunc = "v:lua.require'acp_nvim.prompt'.omnifunc"
    set_keymaps(buf)
    chat.prompt_buf = buf
  end
  local win = vim.fn.win_findbuf(buf)[1]
  if win == nil then
    api.nvim_set_current_win(chat_win)
    vim.cmd("belowright split")
    win = api.nvim_get_current_win()
    api.nvim_win_set_buf(win, buf)
    api.nvim_win_set_height(win, require("acp_nvim.config").options.chat.prompt_height)
    vim.wo[win].winfixheight = true
    local keys = require("acp_nvim.config").options.keymaps
    vim.wo[win].winbar = ("%%#AcpChatHeader#Prompt: %s send, %s/%s history, / commands")
      :format(keys.send, keys.history_prev, keys.history_next)
      :gsub("<", "‹")
      :gsub(">", "›")
  end
  api.nvim_set_current_win(win)
end

return M

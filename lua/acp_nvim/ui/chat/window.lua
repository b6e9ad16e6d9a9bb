-- The chat's window: the chat and its prompt opened (a new session takes over the previous chat's windows),
-- the window's options and folds, and scrolling to an item. Where the plugin's windows sit among the user's is
-- ui/windows.lua.

local M = {}

local api = vim.api
local chat_folds = require("acp_nvim.ui.chat.folds")
local config = require("acp_nvim.config")
local item_range = require("acp_nvim.ui.chat.items").item_range
local prompt = require("acp_nvim.ui.prompt")
local state = require("acp_nvim.ui.chat.state")
local windows = require("acp_nvim.ui.windows")

local FOLD_OPTIONS = {
  foldmethod = "manual",
  foldtext = "v:lua.require'acp_nvim.ui.chat'.foldtext()",
  foldenable = true,
}

---@param win integer
---@param chat AcpChat
local function setup_window(win, chat)
  -- Local to the window (`:setlocal`): `vim.wo[win]` alone would make them the global values, which every
  -- window the user opens later starts from (no sign column for the review's signs, ...).
  local wo = vim.wo[win][0]
  wo.wrap = true
  wo.linebreak = true
  -- A tool call's details, a plan, an output are indented under their summary: a long line of theirs goes on
  -- under its own indent, not at the window's edge, where it would read as the conversation's text.
  wo.breakindent = true
  wo.number = false
  wo.relativenumber = false
  wo.signcolumn = "no"
  wo.foldcolumn = "0"
  -- Commands that go to "the previous window" (quickfix, :bnext, a picker's file) must not take the chat's.
  wo.winfixbuf = true
  wo.winbar = "%#AcpChatHeader#" .. chat.header:gsub("%%", "%%%%")
end

--- The chat window's folds: thoughts, tool calls' details and long outputs are folds the host marks, closed
--- until opened (<CR>, za); a closed one shows its first line as drawn.
---@param win integer
---@param chat AcpChat
local function setup_folds(win, chat)
  local wo = vim.wo[win][0]
  -- Made by ui/chat/folds.lua as the items are drawn: Neovim asks nothing per line. 'foldlevel' is set there,
  -- as the folds are made: setting it (even to its value) closes every fold, those the user opened too.
  for name, value in pairs(FOLD_OPTIONS) do
    if wo[name] ~= value then
      wo[name] = value
    end
  end
  -- The rest of a closed fold's line stays blank, as an open line would be.
  if not wo.fillchars:find("fold:", 1, true) then
    wo.fillchars = wo.fillchars == "" and "fold: " or (wo.fillchars .. ",fold: ")
  end
  chat_folds.attach(chat, win)
end

--- Shows `chat` in its window (made where there is none) with its prompt window.
---@param chat AcpChat
---@param opts {focus: boolean}|nil
local function show(chat, opts)
  local previous = api.nvim_get_current_win()
  windows.setup()
  local options = config.options.chat
  local chat_win = vim.fn.win_findbuf(chat.buf)[1]
  if chat_win == nil or vim.fn.win_id2tabwin(chat_win)[1] ~= vim.fn.tabpagenr() then
    -- A new session (e.g. after :AcpRestart) takes over the windows of the previous chat.
    chat_win = nil
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      local other = state.chat_of_buf(api.nvim_win_get_buf(win))
      if other and other ~= chat then
        if api.nvim_win_get_buf(win) == other.buf then
          windows.show_in(win, chat.buf)
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
  setup_folds(chat_win, chat)
  pcall(api.nvim_win_set_cursor, chat_win, { api.nvim_buf_line_count(chat.buf), 0 })
  api.nvim_set_current_win(chat_win)
  prompt.open(chat, chat_win)
  if opts and opts.focus == false and api.nvim_win_is_valid(previous) then
    api.nvim_set_current_win(previous)
  end
end

--- Opens the chat and its prompt window, focusing the prompt unless opts.focus == false. Returns false when
--- there is no chat.
---@param session_id string|nil
---@param opts {focus: boolean}|nil
---@return boolean
function M.open(session_id, opts)
  local chat = state.chats[session_id or state.current or ""]
  if chat == nil or not api.nvim_buf_is_valid(chat.buf) then
    return false
  end
  -- The windows it passes through, and the chat it takes a window from, are not left by the user.
  chat_folds.passing_through(function()
    show(chat, opts)
  end)
  return true
end

--- Scrolls the chat to an item (the tool call a permission request is about).
---@param session_id string
---@param item_id string
function M.reveal(session_id, item_id)
  local chat = state.chats[session_id]
  local entry = chat and chat.items[state.item_key(item_id)]
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

return M

--- What happens out of the user's view, as the host decides and words it (acp_nvim/app/attention.py): a turn
--- ended, a permission or form waits, an agent failed. Each fires `User AcpNvimTurnEnd`, `AcpNvimWaiting` or
--- `AcpNvimError` with the facts as its `data`; and, as `opts.attention.notify` says, the user is told when
--- none of the chats it concerns is in a window of the current tab, or while Neovim is not focused: Neovim's
--- notification, the terminal's (OSC 9 or OSC 777), or a command of theirs.
local M = {}

local api = vim.api

--- Whether Neovim has the focus, as FocusGained / FocusLost say (wiring.lua); a terminal that never says so
--- leaves it focused.
local focused = true

---@param has boolean
function M.focus(has)
  focused = has
end

---@return boolean
function M.focused()
  return focused
end

--- Whether a chat of `session_ids` (its transcript or its prompt) is in a window of the current tab. An event
--- of no chat (an agent that failed to start) is in view: its message is shown where the user is.
---@param session_ids string[]
---@return boolean
local function in_view(session_ids)
  if #session_ids == 0 then
    return true
  end
  local chats = require("acp_nvim.ui.chat").chats
  local bufs = {}
  for _, id in ipairs(session_ids) do
    local chat = chats[id]
    if chat then
      bufs[chat.buf] = true
      if chat.prompt_buf then
        bufs[chat.prompt_buf] = true
      end
    end
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if bufs[api.nvim_win_get_buf(win)] then
      return true
    end
  end
  return false
end

--- A text for a terminal's escape sequence: no control character may end it early.
---@param text string
---@return string
local function printable(text)
  return (text:gsub("%c", " "))
end

--- Writes an OSC notification to the terminal Neovim runs in (stderr, as vim.ui.clipboard.osc52 does). Inside
--- tmux it goes through as a passthrough (tmux's `allow-passthrough` option must be on).
---@param kind "osc9"|"osc777"
---@param message string
local function osc(kind, message)
  if #api.nvim_list_uis() == 0 then
    return -- no terminal to tell (headless)
  end
  local seq = kind == "osc9" and ("\027]9;%s\007"):format(printable(message))
    or ("\027]777;notify;acp.nvim;%s\007"):format(printable(message))
  if vim.env.TMUX then
    seq = "\027Ptmux;" .. seq:gsub("\027", "\027\027") .. "\027\\"
  end
  pcall(api.nvim_chan_send, 2, seq)
end

--- Commands that failed, said once each.
local failed = {}

---@param argv string[]
---@param message string
local function run(argv, message)
  local cmd = vim.list_extend(vim.deepcopy(argv), { message })
  local function tell(why)
    if not failed[argv[1]] then
      failed[argv[1]] = true
      require("acp_nvim.util.notify").warn(("attention.command %s: %s"):format(argv[1], why))
    end
  end
  local ok, err = pcall(vim.system, cmd, { text = true }, function(done)
    if done.code ~= 0 then
      vim.schedule(function()
        tell(("exited with code %d"):format(done.code))
      end)
    end
  end)
  if not ok then
    tell(tostring(err))
  end
end

---@param fact acp.Attention
---@param how string
local function tell(fact, how)
  if how == "notify" then
    if not fact.told then
      local level = fact.event == "Error" and vim.log.levels.ERROR
        or fact.event == "Waiting" and vim.log.levels.WARN
        or vim.log.levels.INFO
      require("acp_nvim.util.notify").notify(fact.message, level)
    end
  elseif how == "osc9" or how == "osc777" then
    osc(how, fact.message)
  elseif how == "command" then
    local argv = require("acp_nvim.config").options.attention.command
    if type(argv) == "table" and #argv > 0 then
      run(argv, fact.message)
    end
  end
end

--- The host's fact: the `User` event, then the notification the options ask for.
---@param fact acp.Attention
function M.fire(fact)
  local data = {}
  for key, value in pairs(fact) do
    if value ~= vim.NIL and key ~= "notify" and key ~= "told" then
      data[key] = value
    end
  end
  api.nvim_exec_autocmds("User", { pattern = "AcpNvim" .. fact.event, modeline = false, data = data })
  local options = require("acp_nvim.config").options.attention or {}
  local how = options.notify or "off"
  if how == "off" or fact.notify == false then
    return
  end
  if focused and in_view(fact.session_ids or {}) then
    return
  end
  tell(fact, how)
end

return M

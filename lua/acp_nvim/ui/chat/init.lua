-- The chat buffer: draws the view models the host sends (never protocol data). `require("acp_nvim.ui.chat")`
-- is this facade: a chat's life (created, reset for a reload, retired, destroyed, forgotten) is here, and
-- every other name is looked up in the part that owns it, by job, each requiring only those below it:
--   state.lua   the chats, the current one, the namespaces (requires no part)
--   items.lua   where each item's lines are (an extmark on its first line)
--   fold_state.lua which folds are open: read from a window, given to folds made again, kept for a new one
--   folds.lua   the fold levels the host gives an item's lines made manual folds; 'foldtext'
--   draw.lua    an item drawn, replaced, appended to; the header
--   drain.lua   the queued ops applied in budgeted slices per main-loop tick
--   window.lua  the chat and prompt windows opened; an item scrolled to
--   keymaps.lua the chat buffer's keys and what they do
-- A name is read from and written to its owner (the metatable below), so that `chat.current = id`,
-- `chat.budget_ns = n` or a benchmark wrapping `chat._drain` reach what the parts themselves use.

local api = vim.api
local after_input = require("acp_nvim.util.after_input")
local chat_message = require("acp_nvim.ui.chat_message")
local config = require("acp_nvim.config")
local drain = require("acp_nvim.ui.chat.drain")
local draw = require("acp_nvim.ui.chat.draw")
local folds = require("acp_nvim.ui.chat.folds")
local items = require("acp_nvim.ui.chat.items")
local keymaps = require("acp_nvim.ui.chat.keymaps")
local prompt = require("acp_nvim.ui.prompt")
local state = require("acp_nvim.ui.chat.state")
local window = require("acp_nvim.ui.chat.window")
local windows = require("acp_nvim.ui.windows")

local M = {}

-- The part that owns each name, and the name it has there when another.
local owners = {
  chats = state,
  current = state,
  focus_when_created = state,
  chat_of_buf = state,
  item_at = items,
  item_range = items,
  foldexpr = folds,
  folds_before = folds,
  folds_after = folds,
  foldtext = folds,
  _replace = draw,
  apply = drain,
  _drain = drain,
  pending = drain,
  budget_ns = drain,
  long_budget_ns = drain,
  reveal = window,
  location_at_cursor = keymaps,
  jump = keymaps,
  offer_checkpoint = keymaps,
  set_keymaps = keymaps,
}
require("acp_nvim.util.forward").forward(
  M,
  owners,
  { _replace = "replace", folds_before = "item_before", folds_after = "item_after" }
)

-- Python's entry points (acp_nvim/nvim/lua_api.py) are the facade's own fields, where its boundary test reads
-- them; the bench wraps chat.apply_json here too, and no part calls it.
M.open = window.open
M.apply_json = drain.apply_json

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
  folds.clear(chat)
  chat.items, chat.order, chat.locs, chat.terms = {}, {}, {}, {}
  chat.kinds, chat.bare, chat.notes, chat.fold_runs = {}, {}, {}, {}
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
  chat_message.forget(buf)
  for session_id, chat in pairs(M.chats) do
    if chat.buf == buf then
      M.chats[session_id] = nil
      local prompt_buf = chat.prompt_buf
      if prompt_buf and api.nvim_buf_is_valid(prompt_buf) then
        -- Scheduled: not from inside the wipe autocommand of another buffer.
        vim.schedule(function()
          pcall(api.nvim_buf_delete, prompt_buf, { force = true })
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
  local shown_in = vim.fn.win_findbuf(old.buf)
  for _, win in ipairs(shown_in) do
    windows.show_in(win, new_buf)
  end
  if old.prompt_buf and api.nvim_buf_is_valid(old.prompt_buf) then
    pcall(api.nvim_buf_delete, old.prompt_buf, { force = true })
  end
  return #shown_in > 0
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
    kinds = {},
    bare = {},
    notes = {},
    fold_runs = {},
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
    prompt.start_typing()
  elseif took_over or config.options.chat.open_on_start then
    -- Shown, not focused: the session starts asynchronously and must not pull the cursor out of the
    -- user's buffer in the middle of typing. In three ticks, each after the input that came meanwhile: the
    -- buffer and its filetype (~2.5 ms), the prompt's buffer and its filetype, the windows (together 4-7 ms
    -- of a session's load, its longest tick).
    local function still_wanted()
      return M.chats[session_id] == chat and api.nvim_buf_is_valid(buf)
    end
    after_input.schedule(function()
      if not still_wanted() then
        return
      end
      prompt.buffer(chat)
      after_input.schedule(function()
        if still_wanted() then
          M.open(session_id, { focus = false })
        end
      end)
    end)
  end
end

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

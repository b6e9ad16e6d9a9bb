-- The prompts queued while the agent works, as the host shows them under the chat (app/sessions/prompt_queue.py
-- decides what is queued, what it looks like and when it goes), and :AcpQueue: the position the user typed
-- turned into the id of the prompt shown there, a queued prompt opened in a buffer of its own to edit.

local M = {}

local api = vim.api
local notify = require("acp_nvim.util.notify")

--- The host's view of a chat's queue: drawn under its last line.
---@param session_id string
---@param view acp.QueueView
function M.show(session_id, view)
  local chat = require("acp_nvim.ui.chat").chats[session_id]
  if chat == nil then
    return
  end
  chat.queued_view = view
  require("acp_nvim.ui.chat.draw").place_queue(chat)
  -- The prompt's winbar names the steer key while the turn takes one.
  if chat.prompt_buf and api.nvim_buf_is_valid(chat.prompt_buf) then
    require("acp_nvim.ui.prompt").show_keys(chat.prompt_buf)
  end
  -- An edit buffer of a prompt no longer queued stays; its write is then refused by the host.
end

--- The chat :AcpQueue is for: the one the cursor is in (its prompt, or an edit buffer of its queue), else
--- the current session's.
---@return AcpChat|nil
local function current_chat()
  local chat = require("acp_nvim.ui.chat")
  local buf = api.nvim_get_current_buf()
  local from_edit = vim.b[buf].acp_queue_session
  return (from_edit and chat.chats[from_edit])
    or chat.chat_of_buf(buf)
    or chat.chats[require("acp_nvim.ui.status").get().session_id or ""]
end

local ACTIONS = { "list", "edit", "drop", "up", "down", "clear", "send", "steer" }

--- Opens the queued prompt `id` of `chat` in a buffer of its own: `:w` sends the new text to the queue.
---@param chat AcpChat
---@param id integer
---@param text string
local function open_edit(chat, id, text)
  local name = ("acp://queue/%s/%d"):format(chat.session_id, id)
  local buf = vim.fn.bufnr(name)
  if buf == -1 then
    buf = api.nvim_create_buf(false, true)
    api.nvim_buf_set_name(buf, name)
    vim.bo[buf].buftype = "acwrite"
    vim.bo[buf].bufhidden = "wipe"
    vim.bo[buf].swapfile = false
    vim.bo[buf].filetype = "markdown"
    vim.b[buf].acp_queue_session = chat.session_id
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n"))
    vim.bo[buf].modified = false
    api.nvim_create_autocmd("BufWriteCmd", {
      buffer = buf,
      callback = function()
        local new = vim.trim(table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
        local mentions = require("acp_nvim.ui.prompt").mentions(new)
        if require("acp_nvim.host.api").queue(chat.session_id, "edit", id, new, mentions) then
          vim.bo[buf].modified = false
        end
      end,
    })
  end
  local win = vim.fn.win_findbuf(buf)[1]
  if win == nil then
    -- A split of its own across the bottom: the chat's windows keep their buffers ('winfixbuf').
    win = api.nvim_open_win(buf, true, { split = "below", win = -1, height = 8 })
    vim.wo[win][0].winfixbuf = false
  end
  api.nvim_set_current_win(win)
end

--- :AcpQueue [action] [position]: `position` as the chat shows it (default 1, the next to go).
---@param action string|nil
---@param position string|nil
function M.command(action, position)
  action = (action and action ~= "") and action or "list"
  local chat = current_chat()
  if chat == nil then
    notify.warn("no chat: start an agent with :AcpStart")
    return
  end
  if not vim.tbl_contains(ACTIONS, action) then
    notify.warn(("no :AcpQueue %s: use %s"):format(action, table.concat(ACTIONS, ", ")))
    return
  end
  local view = chat.queued_view or { ids = {}, texts = {} }
  local id = vim.NIL
  if position ~= nil and position ~= "" then
    local n = tonumber(position)
    if n == nil or view.ids[n] == nil then
      notify.warn(("no queued prompt %s (%d queued)"):format(position, #view.ids))
      return
    end
    id = view.ids[n]
  end
  if action == "edit" then
    local n = tonumber(position) or 1
    if view.ids[n] == nil then
      notify.warn("no prompt is queued")
      return
    end
    open_edit(chat, view.ids[n], view.texts[n])
    return
  end
  require("acp_nvim.host.api").queue(chat.session_id, action, id, vim.NIL, vim.NIL)
end

--- Completion of :AcpQueue: the actions (steer only where the agent takes it now), then the positions.
---@param lead string
---@param line string
---@return string[]
function M.complete(lead, line)
  local words = vim.split(line, "%s+", { trimempty = true })
  local chat = current_chat()
  local view = chat and chat.queued_view or { ids = {}, steer = false }
  local done = #words - (lead == "" and 0 or 1)
  local out = {}
  if done <= 1 then
    for _, action in ipairs(ACTIONS) do
      if (action ~= "steer" or view.steer) and vim.startswith(action, lead) then
        table.insert(out, action)
      end
    end
  elseif done == 2 and words[2] ~= "list" and words[2] ~= "clear" then
    for n = 1, #view.ids do
      if vim.startswith(tostring(n), lead) then
        table.insert(out, tostring(n))
      end
    end
  end
  return out
end

return M

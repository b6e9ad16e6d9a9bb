-- Sessions, login, modes and configuration options: what their commands do (ui/commands.lua creates them),
-- their completion, and which session a command is for (the chat the cursor is in, else the host's current
-- one). Closing a chat buffer closes its session; entering a chat makes its session the current one.

local M = {}

local api = vim.api
local host_api = require("acp_nvim.host.api")

local notify = require("acp_nvim.util.notify")

--- The session of the chat (or prompt) the cursor is in, if any.
---@return string|nil
function M.current()
  local chat = require("acp_nvim.ui.chat").chat_of_buf(api.nvim_get_current_buf())
  return chat and chat.session_id or nil
end

--- The chat commands complete from: the one the cursor is in, else the current session's.
---@return AcpChat|nil
local function current_chat()
  local chat = require("acp_nvim.ui.chat")
  return chat.chat_of_buf(api.nvim_get_current_buf())
    or chat.chats[require("acp_nvim.ui.status").get().session_id or ""]
end

---@return boolean
local function host_running()
  if require("acp_nvim.host").info() == nil then
    notify.warn("no agent is running: start one with :AcpStart")
    return false
  end
  return true
end

-- The words of :AcpSessions that pick what is done with the session chosen, and the unstable session feature
-- (status().session_features) each needs.
local ACTIONS = { delete = true, rename = "title", archive = "archive" }

--- :AcpSessions [delete|rename|archive] [all]: the agent's sessions (this directory's unless "all"), to open,
--- delete, rename or archive (the host refuses what the agent does not offer).
---@param ... string
function M.sessions(...)
  local args = { ... }
  -- The agent of the current session, else the default one (the host resolves either).
  local request = { name = require("acp_nvim.ui.status").get().agent_name or vim.NIL, cwd = vim.fn.getcwd() }
  local action = "open"
  for _, word in ipairs(args) do
    if ACTIONS[word] then
      action = word
    end
  end
  host_api.sessions(request, action, vim.tbl_contains(args, "all"), M.current() or vim.NIL)
end

--- What :AcpSessions completes: "rename" and "archive" only where the current agent offers them.
---@return string[]
function M.session_words()
  local features = require("acp_nvim.ui.status").get().session_features or {}
  local words = { "delete" }
  for _, word in ipairs({ "rename", "archive" }) do
    if vim.tbl_contains(features, ACTIONS[word]) then
      table.insert(words, word)
    end
  end
  table.insert(words, "all")
  return words
end

--- :AcpFork and the chat's fork key: the chat's session (else the current one) forked into a new chat.
function M.fork()
  if host_running() then
    host_api.fork(M.current() or vim.NIL)
  end
end

---@param mode_id string|nil
function M.mode(mode_id)
  if host_running() then
    host_api.mode(M.current() or vim.NIL, (mode_id and mode_id ~= "") and mode_id or vim.NIL)
  end
end

---@param option_id string|nil
---@param value string|nil
function M.config(option_id, value)
  if host_running() then
    host_api.config(
      M.current() or vim.NIL,
      (option_id and option_id ~= "") and option_id or vim.NIL,
      (value and value ~= "") and value or vim.NIL
    )
  end
end

---@param method_id string|nil
function M.auth(method_id)
  if host_running() then
    host_api.auth(M.current() or vim.NIL, (method_id and method_id ~= "") and method_id or vim.NIL)
  end
end

--- :AcpCheckpoint [restore {n} | diff {n}]: for the chat's session, even an ended one (its checkpoints stay).
---@param args string[]
function M.checkpoint(args)
  host_api.checkpoint(M.current() or require("acp_nvim.ui.status").get().session_id or vim.NIL, args)
end

function M.logout()
  if host_running() then
    host_api.logout(M.current() or vim.NIL)
  end
end

--- :AcpPermissions [revoke N]: the session's and its project's permission rules (app/permissions/service.py).
---@param args string[]
function M.permissions(args)
  if host_running() then
    host_api.permissions(M.current() or vim.NIL, args)
  end
end

---@param dir string
function M.add_dir(dir)
  -- Made absolute against Neovim's own cwd (the host's may differ); whether it is a directory, and the list
  -- it joins, are the host's (the user's options are left as configured).
  local path = (vim.fn.fnamemodify(vim.fn.expand(dir), ":p"):gsub("/$", ""))
  host_api.add_dir(M.current() or vim.NIL, path)
end

-- ---- completion ----------------------------------------------------------------------------------------

---@param lead string
---@param words string[]
---@return string[]
local function starting(lead, words)
  return vim.tbl_filter(function(word)
    return vim.startswith(word, lead)
  end, words)
end

---@param lead string
---@return string[]
function M.complete_mode(lead)
  local chat = current_chat()
  return starting(
    lead,
    vim.tbl_map(function(mode)
      return mode.id
    end, chat and chat.modes or {})
  )
end

---@param lead string
---@param line string
---@return string[]
function M.complete_config(lead, line)
  local chat = current_chat()
  local options = chat and chat.config or {}
  local words = vim.split(line, "%s+", { trimempty = true })
  -- "AcpConfig <lead>" completes option ids; "AcpConfig opt <lead>" its values.
  local arg = #words - (lead == "" and 0 or 1)
  if arg <= 1 then
    return starting(
      lead,
      vim.tbl_map(function(option)
        return option.id
      end, options)
    )
  end
  for _, option in ipairs(options) do
    if option.id == words[2] then
      -- The words the host accepts for it (app/sessions/modes.py parses them), sent with the chat's meta.
      return starting(lead, option.values or {})
    end
  end
  return {}
end

---@param lead string
---@return string[]
function M.complete_auth(lead)
  return starting(lead, require("acp_nvim.ui.status").get().auth_methods or {})
end

-- ---- chats and their sessions ------------------------------------------------------------------------

--- Entering a chat makes its session the current one; wiping its buffer closes the session. Idempotent.
function M.track_chats()
  local group = api.nvim_create_augroup("acp_nvim_sessions", { clear = true })
  api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(ev)
      local chat = require("acp_nvim.ui.chat").chat_of_buf(ev.buf)
      if chat and require("acp_nvim.ui.status").get().session_id ~= chat.session_id then
        host_api.focus(chat.session_id)
      end
    end,
  })
  api.nvim_create_autocmd({ "BufWipeout", "BufDelete" }, {
    group = group,
    callback = function(ev)
      local session_id = require("acp_nvim.ui.chat").forget_buf(ev.buf)
      if session_id then
        host_api.close(session_id)
      end
    end,
  })
end

return M

-- The chat buffer's keys: <CR>/gf jump to the location, the terminal or the whole message under the cursor (or
-- toggle a fold), the turn cancelled, the files restored to before a prompt; the keys that make or delete
-- folds refused.

local M = {}

local acp_nvim = require("acp_nvim")
local api = vim.api
local chat_message = require("acp_nvim.ui.chat_message")
local chat_terminal = require("acp_nvim.ui.chat_terminal")
local config = require("acp_nvim.config")
local host_api = require("acp_nvim.host.api")
local item_at = require("acp_nvim.ui.chat.items").item_at
local state = require("acp_nvim.ui.chat.state")
local windows = require("acp_nvim.ui.windows")

--- The location under the cursor, if the line is a tool call location or diff header.
---@return {path: string, lnum: integer}|nil
function M.location_at_cursor()
  local buf = api.nvim_get_current_buf()
  local chat = state.chat_of_buf(buf)
  if chat == nil then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, state.ns_loc, { row, 0 }, { row, -1 }, {})) do
    local loc = chat.locs[mark[1]]
    if loc then
      return loc
    end
  end
  return nil
end

-- Opens `loc` in a window that is not a chat or prompt window (a new split when there is none).
---@param loc {path: string, lnum: integer}
local function open_location(loc)
  windows.file_window()
  vim.cmd.edit(vim.fn.fnameescape(loc.path))
  pcall(api.nvim_win_set_cursor, 0, { math.max(loc.lnum, 1), 0 })
end

--- <CR>/gf in the chat: jump to the location under the cursor, or toggle a thought fold.
---@param fallback string normal-mode keys when there is nothing to jump to
function M.jump(fallback)
  -- The note where a long message is cut opens the whole message.
  if fallback == config.options.keymaps.open_message then
    if chat_message.open_at_cursor() then
      return
    end
  end
  -- A terminal placeholder opens the agent's terminal itself.
  local term = chat_terminal.at_cursor()
  if term then
    chat_terminal.open(term)
    return
  end
  local loc = M.location_at_cursor()
  if loc then
    open_location(loc)
    return
  end
  local lnum = api.nvim_win_get_cursor(0)[1]
  if fallback == "<CR>" and vim.fn.foldlevel(lnum) > 0 then
    vim.cmd("normal! za")
    return
  end
  if fallback == "gf" then
    pcall(vim.cmd, "normal! gf")
  end
end

--- On a prompt in the chat: the host offers to restore the files to before it (or to show the diff).
function M.offer_checkpoint()
  local chat = state.chat_of_buf(api.nvim_get_current_buf())
  local entry, idx
  if chat ~= nil then
    local _
    entry, _, idx = item_at(chat, api.nvim_win_get_cursor(0)[1] - 1)
  end
  if chat == nil or entry == nil or chat.kinds[entry] ~= "user" then
    require("acp_nvim.util.notify").warn("put the cursor on a prompt of yours to restore to before it")
    return
  end
  host_api.checkpoint(chat.session_id, { "offer", state.item_id(chat.order[idx]) })
end

-- The chat's folds are the chat's: made as it draws its items, and again whenever it draws them anew or is
-- shown in a window anew (ui/chat/folds.lua), so a fold made or deleted by hand would last only until then.
-- The keys that make or delete folds are refused, as under the 'foldexpr' the chat had (E350, E351, E352).
local REFUSED = "the chat makes its own folds: zf, zF, zd, zD and zE do nothing in it (open and close them with"
  .. " <CR>, za, zo, zc, zR, zM)"

--- Says that the chat's folds are not made or deleted by hand ('operatorfunc' of `zf` in the chat).
function M.refuse_fold()
  require("acp_nvim.util.notify").warn(REFUSED)
end

---@param buf integer
local function refuse_fold_keys(buf)
  local opts = { buffer = buf, desc = "acp.nvim: the chat makes its own folds" }
  -- An operator: its motion is taken (`zfj` does not move the cursor), as Neovim's error did.
  vim.keymap.set("n", "zf", function()
    vim.o.operatorfunc = "v:lua.require'acp_nvim.ui.chat.keymaps'.refuse_fold"
    return "g@"
  end, vim.tbl_extend("force", opts, { expr = true }))
  for _, lhs in ipairs({ "zF", "zd", "zD", "zE" }) do
    vim.keymap.set("n", lhs, M.refuse_fold, opts)
  end
  for _, lhs in ipairs({ "zf", "zd", "zD" }) do
    -- Visual mode ends, as after the error; said once the mapping's keys are done.
    vim.keymap.set("x", lhs, function()
      vim.schedule(M.refuse_fold)
      return "<Esc>"
    end, vim.tbl_extend("force", opts, { expr = true }))
  end
end

---@param buf integer
function M.set_keymaps(buf)
  local keymaps = config.options.keymaps
  refuse_fold_keys(buf)
  vim.keymap.set("n", "<CR>", function()
    M.jump("<CR>")
  end, { buffer = buf, desc = "acp.nvim: jump to location / toggle fold" })
  vim.keymap.set("n", "gf", function()
    M.jump("gf")
  end, { buffer = buf, desc = "acp.nvim: jump to location" })
  vim.keymap.set("n", keymaps.cancel, function()
    acp_nvim.cancel()
  end, { buffer = buf, desc = "acp.nvim: cancel the turn" })
  if keymaps.open_message ~= "<CR>" and keymaps.open_message ~= "gf" then
    vim.keymap.set("n", keymaps.open_message, function()
      chat_message.open_at_cursor()
    end, { buffer = buf, desc = "acp.nvim: open the whole message of the note under the cursor" })
  end
  if keymaps.fork then
    vim.keymap.set("n", keymaps.fork, function()
      -- The whole session: session/fork names no message to fork at (app/sessions/forking.py).
      require("acp_nvim.ui.session_commands").fork()
    end, { buffer = buf, desc = "acp.nvim: fork this chat's session into a new chat" })
  end
  if keymaps.checkpoint then
    vim.keymap.set("n", keymaps.checkpoint, function()
      M.offer_checkpoint()
    end, { buffer = buf, desc = "acp.nvim: restore the files to before this prompt" })
  end
end

return M

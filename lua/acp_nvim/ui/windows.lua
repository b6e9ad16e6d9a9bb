--- The plugin's windows (chats and their prompts) among the user's: they keep their buffers ('winfixbuf'),
--- files opened from them go to one of the user's windows, and they do not keep a tab, or Neovim, open once
--- the user has quit the last window of their own there.
---
--- The quit is seen in two steps: QuitPre notes the window `:q` (`:wq`, `ZZ`, ...) is about to close, and
--- WinClosed of that window, which only comes when the quit succeeded (a modified buffer's E37 leaves
--- everything as it was), then closes what is left of the plugin's windows in its tab: `:tabclose` when other
--- tabs remain, else `:qall`, the quit the user asked for (Neovim ends its sessions as on `:qa`). A prompt
--- with text not sent keeps Neovim open: that text would be lost. So does a buffer with unsaved changes
--- (`:q` with 'hidden' closed its window): it is shown again, with Neovim's E37/E162.
local M = {}

local api = vim.api

---@param win integer
---@return boolean
function M.is_plugin(win)
  return require("acp_nvim.ui.chat").chat_of_buf(api.nvim_win_get_buf(win)) ~= nil
end

---@param win integer
---@return boolean
local function is_float(win)
  return api.nvim_win_get_config(win).relative ~= ""
end

---@param win integer
---@return boolean
local function is_users(win)
  return api.nvim_win_is_valid(win) and not is_float(win) and not M.is_plugin(win)
end

--- Shows `buf` in `win`, a plugin window whose 'winfixbuf' would refuse it (a new session taking the
--- windows of the one before).
---@param win integer
---@param buf integer
function M.show_in(win, buf)
  -- `[0]`: local to the window; plain `vim.wo[win]` would set the global value too.
  local fixed = vim.wo[win][0].winfixbuf
  vim.wo[win][0].winfixbuf = false
  api.nvim_win_set_buf(win, buf)
  vim.wo[win][0].winfixbuf = fixed
end

-- What `setup_window` and `prompt.open` set on a plugin window: a split from one inherits them.
local CHAT_WINDOW_OPTIONS = {
  "wrap",
  "linebreak",
  "number",
  "relativenumber",
  "signcolumn",
  "foldcolumn",
  "foldmethod",
  "foldexpr",
  "foldtext",
  "foldlevel",
  "foldenable",
  "winbar",
  "winfixheight",
}

--- The window to open a file in: the current one when it is the user's, else the previous one, else the
--- first of the user's windows in the tab, else a new split at the far left. It is made current.
---@return integer
function M.file_window()
  local candidates = { api.nvim_get_current_win(), vim.fn.win_getid(vim.fn.winnr("#")) }
  vim.list_extend(candidates, api.nvim_tabpage_list_wins(0))
  for _, win in ipairs(candidates) do
    if win ~= 0 and is_users(win) then
      api.nvim_set_current_win(win)
      return win
    end
  end
  vim.cmd("topleft vnew")
  local win = api.nvim_get_current_win()
  for _, name in ipairs(CHAT_WINDOW_OPTIONS) do
    vim.wo[win][0][name] = vim.go[name]
  end
  return win
end

---@param tab integer
---@return boolean users, integer[] plugin windows
local function windows_of(tab)
  local users, plugin = false, {}
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
    if is_users(win) then
      users = true
    elseif not is_float(win) then
      plugin[#plugin + 1] = win
    end
  end
  return users, plugin
end

--- The prompt buffers shown in `wins` that hold text.
---@param wins integer[]
---@return boolean
local function unsent_text(wins)
  for _, win in ipairs(wins) do
    local buf = api.nvim_win_get_buf(win)
    local chat = require("acp_nvim.ui.chat").chat_of_buf(buf)
    if chat and chat.prompt_buf == buf then
      local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
      if vim.trim(table.concat(lines, "\n")) ~= "" then
        return true
      end
    end
  end
  return false
end

--- A buffer of the user's with unsaved changes (`:q` with 'hidden' closes its window and keeps it).
---@return integer?
local function unsaved_buffer()
  for _, info in ipairs(vim.fn.getbufinfo({ bufmodified = 1 })) do
    local bt = vim.bo[info.bufnr].buftype
    if (bt == "" or bt == "acwrite") and require("acp_nvim.ui.chat").chat_of_buf(info.bufnr) == nil then
      return info.bufnr
    end
  end
  return nil
end

local notify = require("acp_nvim.util.notify")

--- Only plugin windows are left in `tab`: close them, and the tab with them (Neovim when it is the last).
---@param tab integer
---@param plugin integer[]
local function close_tab(tab, plugin)
  if #api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd.tabclose, api.nvim_tabpage_get_number(tab))
    return
  end
  if unsent_text(plugin) then
    notify.warn("the prompt holds text not sent: send or clear it, or :qa to quit anyway")
    return
  end
  local unsaved = unsaved_buffer()
  if unsaved then
    -- What `:q` in a last window would say; asked of `:qall`, a terminal UI would stop at a hit-enter prompt.
    api.nvim_win_set_buf(M.file_window(), unsaved)
    vim.cmd.redraw()
    local name = vim.fn.fnamemodify(api.nvim_buf_get_name(unsaved), ":~:.")
    notify.error(("E37: No write since last change in %s (:w, or :qa! to quit anyway)"):format(name))
    return
  end
  local ok, err = pcall(vim.cmd.qall)
  if not ok then
    notify.error((tostring(err):gsub("^Vim[^:]*:", "")))
  end
end

--- A chat window closed: its prompt has nothing left to answer to in that tab.
---@param tab integer
---@param chat AcpChat
local function close_orphan_prompt(tab, chat)
  local shown = false
  local prompts = {}
  for _, win in ipairs(api.nvim_tabpage_list_wins(tab)) do
    local buf = api.nvim_win_get_buf(win)
    if buf == chat.buf then
      shown = true
    elseif buf == chat.prompt_buf then
      prompts[#prompts + 1] = win
    end
  end
  if not shown then
    for _, win in ipairs(prompts) do
      pcall(api.nvim_win_close, win, false)
    end
  end
end

---@type { win: integer, tab: integer, chat: AcpChat? }?
local quitting = nil

---@param closed { win: integer, tab: integer, chat: AcpChat? }
local function after_quit(closed)
  if not api.nvim_tabpage_is_valid(closed.tab) then
    return
  end
  local users, plugin = windows_of(closed.tab)
  if not users and #plugin > 0 then
    close_tab(closed.tab, plugin)
  elseif closed.chat then
    close_orphan_prompt(closed.tab, closed.chat)
  end
end

local installed = false

--- Installs the autocommands; idempotent.
function M.setup()
  if installed then
    return
  end
  installed = true
  local group = api.nvim_create_augroup("acp_nvim_windows", { clear = true })
  api.nvim_create_autocmd("QuitPre", {
    group = group,
    callback = function()
      local win = api.nvim_get_current_win()
      if is_float(win) then
        return
      end
      local buf = api.nvim_win_get_buf(win)
      local chat = require("acp_nvim.ui.chat").chat_of_buf(buf)
      quitting = {
        win = win,
        tab = api.nvim_win_get_tabpage(win),
        chat = chat and chat.buf == buf and chat or nil,
      }
      -- The quit runs to its end before this: a quit that failed leaves nothing behind.
      vim.schedule(function()
        quitting = nil
      end)
    end,
  })
  api.nvim_create_autocmd("WinClosed", {
    group = group,
    callback = function(ev)
      local closed = quitting
      if closed == nil or tonumber(ev.match) ~= closed.win then
        return
      end
      quitting = nil
      -- Not from inside WinClosed: the layout may not change there.
      vim.schedule(function()
        after_quit(closed)
      end)
    end,
  })
end

return M

-- The prompt window under the chat: write, send, walk the history, complete the agent's /commands and
-- @file mentions, and the attachments that go with the next prompt (buffers, selections, images, audio).

local M = {}

local api = vim.api
local ns_hint = api.nvim_create_namespace("acp_nvim_prompt_hint")
local ns_attach = api.nvim_create_namespace("acp_nvim_prompt_attach")

--- Image and audio types by extension ("png" -> "image/png"): an @mention of one of these is sent as an
--- image or audio. The table is the host's (`acp_nvim/app/media_types.json`, which `acp_nvim/app/media_types.py`
--- reads too); read here from the plugin's own tree so attachments work before any host runs.
local function media_table()
  return require("acp_nvim.host.python_tables").read("media_types.json", { image = {}, audio = {} })
end

local media = media_table()
M.image_types = media.image
M.audio_types = media.audio

--- At most this many project files are listed for @ completion (a huge tree must not stall typing).
M.max_files = 5000
--- At most this many completion items are offered.
M.max_items = 200

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

--- Attachments for the next prompt ({kind = "selection"|"image"|"audio", ...}, see acp_nvim/app/prompt_content.py).
---@type table[]
local pending = {}

---@param message string
---@param level? integer
local function notify(message, level)
  vim.notify("acp.nvim: " .. message, level or vim.log.levels.INFO, { title = "acp.nvim" })
end

--- The directory @mentions are relative to: the session's, else Neovim's.
---@return string
local function session_cwd()
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.current and chats.chats[chats.current]
  return (chat and chat.cwd) or vim.fn.getcwd()
end

---@param attachment table
---@return string
local function attachment_label(attachment)
  if attachment.kind == "image" or attachment.kind == "audio" then
    return attachment.kind .. " " .. attachment.name
  end
  local name = vim.fn.fnamemodify(attachment.path, ":t")
  if attachment.whole then
    return name
  end
  return ("%s:%d-%d"):format(name, attachment.start, attachment["end"])
end

--- Shows the pending attachments under the text of every prompt buffer.
local function show_pending()
  local labels = vim.tbl_map(attachment_label, pending)
  for _, chat in pairs(require("acp_nvim.ui.chat").chats) do
    local buf = chat.prompt_buf
    if buf ~= nil and api.nvim_buf_is_valid(buf) then
      api.nvim_buf_clear_namespace(buf, ns_attach, 0, -1)
      if #labels > 0 then
        local last = api.nvim_buf_line_count(buf) - 1
        api.nvim_buf_set_extmark(buf, ns_attach, last, 0, {
          virt_lines = { { { "attached: " .. table.concat(labels, ", "), "AcpPromptAttachment" } } },
        })
      end
    end
  end
end

--- Adds an attachment to the next prompt.
---@param attachment table
function M.attach(attachment)
  table.insert(pending, attachment)
  show_pending()
  notify(("%s attached to the next prompt"):format(attachment_label(attachment)))
end

--- The attachments waiting for the next prompt.
---@return table[]
function M.pending()
  return vim.deepcopy(pending)
end

--- Drops the attachments waiting for the next prompt.
function M.clear_attachments()
  pending = {}
  show_pending()
end

--- "image" or "audio" and the mime type, when `path` names a file acp.nvim sends as such; nil otherwise.
---@param path string
---@return string|nil kind
---@return string|nil mime_type
function M.media_type(path)
  local ext = vim.fn.fnamemodify(path, ":e"):lower()
  if M.image_types[ext] then
    return "image", M.image_types[ext]
  end
  if M.audio_types[ext] then
    return "audio", M.audio_types[ext]
  end
  return nil, nil
end

---@param path string absolute
---@param cwd string
---@return string
local function relative(path, cwd)
  local prefix = cwd:gsub("/$", "") .. "/"
  if vim.startswith(path, prefix) then
    return path:sub(#prefix + 1)
  end
  return path
end

---@param token string as written after "@"
---@param cwd string
---@return string|nil absolute path of an existing file
local function resolve(token, cwd)
  local path = vim.fs.normalize(token)
  if not vim.startswith(path, "/") then
    path = vim.fs.normalize(cwd .. "/" .. path)
  end
  local stat = vim.uv.fs_stat(path)
  return (stat and stat.type == "file") and path or nil
end

--- The files `text` mentions as `@path` (at the start or after white space), relative to `cwd`: existing
--- files only, so an e-mail address or a decorator stays plain text. Trailing punctuation is not part of a
--- path unless a file has that name. Images and audio become media attachments, anything else a file link.
---@param text string
---@param cwd string|nil
---@return table[]
function M.mentions(text, cwd)
  cwd = cwd or session_cwd()
  local found, seen = {}, {}
  for token in (" " .. text):gmatch("%s@([^%s]+)") do
    local path = resolve(token, cwd)
    while path == nil and token:match("[%.,;:!%?%)%]}'\"`]$") do
      token = token:sub(1, -2)
      path = resolve(token, cwd)
    end
    if path ~= nil and not seen[path] then
      seen[path] = true
      local name = relative(path, cwd)
      local kind, mime_type = M.media_type(path)
      if kind then
        table.insert(found, { kind = kind, name = token, path = path, mime_type = mime_type, mention = true })
      else
        table.insert(found, { kind = "file", name = name, path = path, mention = true })
      end
    end
  end
  return found
end

--- Everything that goes with a prompt: `selections` (from a range), the pending attachments, then the
--- @mentions of `text`. Call `M.sent()` once the prompt was handed over.
---@param text string
---@param selections table[]|nil
---@return table[]
function M.collect(text, selections)
  local all = vim.list_extend(vim.list_extend({}, selections or {}), pending)
  return vim.list_extend(all, M.mentions(text))
end

--- The prompt went to the host: the pending attachments went with it.
function M.sent()
  M.clear_attachments()
end

--- The host refused the prompt before sending anything (e.g. an image the agent does not accept): says why
--- and gives back what the user wrote and attached, so nothing is lost.
---@param message string
---@param text string
---@param attachments table[]
function M.refused(message, text, attachments)
  notify(message, vim.log.levels.WARN)
  for _, attachment in ipairs(attachments or {}) do
    -- Mentions come back from the text itself.
    if not attachment.mention then
      table.insert(pending, attachment)
    end
  end
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.current and chats.chats[chats.current]
  local buf = chat and chat.prompt_buf
  if buf ~= nil and api.nvim_buf_is_valid(buf) then
    local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
    if vim.trim(table.concat(lines, "\n")) == "" and text ~= "" then
      api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n"))
    end
  end
  show_pending()
end

--- Reads a PNG image from the clipboard with the first tool found (wl-paste, xclip, pngpaste).
---@return table|nil attachment
---@return string|nil error
function M.clipboard_image()
  local tools = {
    { "wl-paste", "--no-newline", "--type", "image/png" },
    { "xclip", "-selection", "clipboard", "-t", "image/png", "-o" },
    { "pngpaste", "-" },
  }
  local tried = false
  for _, cmd in ipairs(tools) do
    if vim.fn.executable(cmd[1]) == 1 then
      tried = true
      local ok, result = pcall(function()
        return vim.system(cmd, { text = false }):wait(3000)
      end)
      local data = ok and result.code == 0 and result.stdout or ""
      if data:sub(1, 8) == "\137PNG\r\n\26\n" then
        return { kind = "image", name = "clipboard", data = vim.base64.encode(data), mime_type = "image/png" }
      end
    end
  end
  if not tried then
    return nil, "no clipboard tool for images found (wl-paste, xclip or pngpaste)"
  end
  return nil, "the clipboard holds no PNG image"
end

---@param buf integer
local function send(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = vim.trim(table.concat(lines, "\n"))
  if text == "" and #pending == 0 then
    return
  end
  -- The text is cleared only once the prompt was handed over: a refused send keeps what the user wrote.
  if require("acp_nvim").prompt(text, M.collect(text)) then
    M.sent()
    api.nvim_buf_set_lines(buf, 0, -1, false, {})
    position[buf] = nil
    drafts[buf] = nil
    api.nvim_buf_clear_namespace(buf, ns_hint, 0, -1)
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

---@type {cwd: string|nil, time: integer, files: string[]}
local file_cache = { cwd = nil, time = 0, files = {} }

--- Files under `cwd` for @ completion: `git ls-files` in a git work tree (tracked and untracked, not
--- ignored), else a walk that skips hidden folders; at most `M.max_files`, cached for a few seconds.
---@param cwd string
---@return string[]
function M.project_files(cwd)
  if file_cache.cwd == cwd and vim.uv.now() - file_cache.time < 5000 then
    return file_cache.files
  end
  local files = {}
  local ok, result = pcall(function()
    return vim
      .system({ "git", "ls-files", "--cached", "--others", "--exclude-standard" }, { cwd = cwd, text = true })
      :wait(2000)
  end)
  if ok and result.code == 0 then
    for path in (result.stdout or ""):gmatch("[^\n]+") do
      if #files >= M.max_files then
        break
      end
      table.insert(files, path)
    end
  else
    local skip = function(name)
      return name:sub(1, 1) ~= "." and name ~= "node_modules"
    end
    for name, kind in vim.fs.dir(cwd, { depth = 10, skip = skip }) do
      if #files >= M.max_files then
        break
      end
      if kind == "file" and not vim.startswith(vim.fn.fnamemodify(name, ":t"), ".") then
        table.insert(files, name)
      end
    end
  end
  table.sort(files)
  file_cache = { cwd = cwd, time = vim.uv.now(), files = files }
  return files
end

---@param base string what follows "@"
---@return table[]
local function complete_files(base)
  local prefix, inside = {}, {}
  for _, path in ipairs(M.project_files(session_cwd())) do
    if vim.startswith(path, base) then
      table.insert(prefix, path)
    elseif base ~= "" and path:find(base, 1, true) then
      table.insert(inside, path)
    end
    if #prefix >= M.max_items then
      break
    end
  end
  local items = {}
  for _, path in ipairs(vim.list_extend(prefix, inside)) do
    if #items >= M.max_items then
      break
    end
    -- What the mention will be sent as: an image, an audio clip, or a link to the file.
    local kind = M.media_type(path) or "file"
    table.insert(items, { word = "@" .. path, abbr = path, menu = "[" .. kind .. "]" })
  end
  return items
end

---@param base string
---@param chat AcpChat|nil
---@return table[]
local function complete_commands(base, chat)
  local items = {}
  for _, command in ipairs(chat and chat.commands or {}) do
    if vim.startswith(command.word, base) then
      local hint = command.hint ~= "" and command.hint or nil
      table.insert(items, {
        word = command.word .. " ",
        abbr = hint and ("%s <%s>"):format(command.word, hint) or command.word,
        menu = command.menu,
        info = hint,
      })
    end
  end
  return items
end

--- 'omnifunc' of the prompt: the agent's /commands at the start of the prompt, project files after "@".
---@param findstart integer
---@param base string
---@return integer|table
function M.omnifunc(findstart, base)
  local line = api.nvim_get_current_line()
  if findstart == 1 then
    local col = api.nvim_win_get_cursor(0)[2]
    local before = line:sub(1, col)
    local at = before:find("@[^%s]*$")
    if at ~= nil and (at == 1 or before:sub(at - 1, at - 1):match("%s")) then
      return at - 1
    end
    local start = before:find("/[%w_%-]*$")
    if start == nil or api.nvim_win_get_cursor(0)[1] ~= 1 or before:sub(1, start - 1):match("%S") then
      return -3
    end
    return start - 1
  end
  if vim.startswith(base, "@") then
    return complete_files(base:sub(2))
  end
  return complete_commands(base, require("acp_nvim.ui.chat").chat_of_buf(api.nvim_get_current_buf()))
end

--- After a completed /command that takes input, its hint shows as virtual text until the user types it.
---@param buf integer
function M.update_hint(buf)
  api.nvim_buf_clear_namespace(buf, ns_hint, 0, -1)
  if api.nvim_buf_line_count(buf) ~= 1 then
    return
  end
  local line = api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  local word = line:match("^(/%S+)%s*$")
  local chat = word and require("acp_nvim.ui.chat").chat_of_buf(buf)
  for _, command in ipairs(chat and chat.commands or {}) do
    if command.word == word and command.hint ~= "" then
      api.nvim_buf_set_extmark(buf, ns_hint, 0, 0, {
        virt_text = { { "<" .. command.hint .. ">", "AcpPromptHint" } },
        virt_text_pos = "eol",
      })
      return
    end
  end
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
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "CompleteDone" }, {
    buffer = buf,
    callback = function()
      M.update_hint(buf)
    end,
  })
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
    show_pending()
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
    local keys = require("acp_nvim.config").options.keymaps
    vim.wo[win][0].winbar = ("%%#AcpChatHeader#Prompt: %s send, %s/%s history, / commands, @ files")
      :format(keys.send, keys.history_prev, keys.history_next)
      :gsub("<", "‹")
      :gsub(">", "›")
  end
  api.nvim_set_current_win(win)
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

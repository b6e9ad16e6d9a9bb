-- What a prompt's text names (ui/prompt.lua): the files it @mentions, relative to the session's folder, and
-- which of them go as an image or audio.

local M = {}

--- Image and audio types by extension ("png" -> "image/png"): an @mention of one of these is sent as an
--- image or audio. The table is the host's (`acp_nvim/app/sessions/media_types.json`, which
--- `acp_nvim/app/sessions/media_types.py` reads too); read here from the plugin's own tree so attachments work before
--- any host runs.
local function media_table()
  return require("acp_nvim.host.python_tables").read("sessions/media_types.json", { image = {}, audio = {} })
end

local media = media_table()
M.image_types = media.image
M.audio_types = media.audio

--- The directory @mentions are relative to: the session's, else Neovim's.
---@return string
function M.session_cwd()
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.current and chats.chats[chats.current]
  return (chat and chat.cwd) or vim.fn.getcwd()
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
  cwd = cwd or M.session_cwd()
  local found, seen = {}, {}
  local context = require("acp_nvim.ui.prompt.context")
  for token in (" " .. text):gmatch("%s@([^%s]+)") do
    -- `@diagnostics`, `@diff`, ... name what Neovim knows, even where a file has that name (`@./diff` is the file).
    local path = context.word(token) == nil and resolve(token, cwd) or nil
    while path == nil and context.word(token) == nil and token:match("[%.,;:!%?%)%]}'\"`]$") do
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

return M

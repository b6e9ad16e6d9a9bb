-- Completion in the prompt (ui/prompt.lua): the agent's /commands at its start, after "@" the mentions of
-- what Neovim knows (`@diagnostics`, `@symbol:` and the language servers' symbols, ...) and the project's
-- files, and the hint of a completed /command that takes input.

local M = {}

local api = vim.api
local mentions = require("acp_nvim.ui.prompt.mentions")
M.ns_hint = api.nvim_create_namespace("acp_nvim_prompt_hint")

--- At most this many project files are listed for @ completion (a huge tree must not stall typing).
M.max_files = 5000
--- At most this many completion items are offered.
M.max_items = 200

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
  for _, path in ipairs(M.project_files(mentions.session_cwd())) do
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
    local kind = mentions.media_type(path) or "file"
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

---@param symbol table
---@return table
local function symbol_item(symbol)
  local where = vim.fn.fnamemodify(symbol.path, ":t") .. ":" .. symbol.start_line
  return {
    word = "@symbol:" .. symbol.name,
    abbr = symbol.name,
    menu = ("[%s] %s"):format(symbol.symbol_kind, where),
    info = symbol.container ~= "" and ("in " .. symbol.container) or nil,
  }
end

--- `@symbol:` completion: what an earlier answer found at once; the language servers are asked meanwhile
--- and the menu is refreshed with their answer while the user is still at this word.
---@param query string what follows "@symbol:"
---@return table[]
local function complete_symbols(query)
  local symbols = require("acp_nvim.ui.prompt.symbols")
  local known = symbols.known(query)
  local buf, row = api.nvim_get_current_buf(), api.nvim_win_get_cursor(0)[1]
  local returned = false
  symbols.ask(query, function(found)
    -- An answer known already comes at once, inside this call: the menu is what this call returns.
    if not returned then
      return
    end
    local col = api.nvim_win_get_cursor(0)[2]
    local before = api.nvim_get_current_line():sub(1, col)
    local start = before:find("@symbol:[^%s]*$")
    local still = api.nvim_get_current_buf() == buf
      and api.nvim_win_get_cursor(0)[1] == row
      and vim.fn.mode() == "i"
      and start ~= nil
      and before:sub(start + 8) == query
    if still then
      vim.fn.complete(start, vim.tbl_map(symbol_item, found))
    end
  end)
  returned = true
  return vim.tbl_map(symbol_item, known or {})
end

--- While the word before the cursor is `@symbol:...` in Insert mode: the menu of the symbols matching it, at
--- once from an earlier answer, refreshed when the language servers answer (never waited for).
function M.symbols_as_you_type()
  local col = api.nvim_win_get_cursor(0)[2]
  local before = api.nvim_get_current_line():sub(1, col)
  local start = before:find("@symbol:[^%s]*$")
  if start == nil or (start > 1 and not before:sub(start - 1, start - 1):match("%s")) then
    return
  end
  local items = complete_symbols(before:sub(start + 8))
  if #items > 0 then
    vim.schedule(function()
      if vim.fn.mode() == "i" and api.nvim_get_current_line():sub(1, col) == before then
        vim.fn.complete(start, items)
      end
    end)
  end
end

--- The mentions of what Neovim knows whose word starts with `base`.
---@param base string what follows "@"
---@return table[]
local function complete_context(base)
  local items = {}
  for _, mention in ipairs(require("acp_nvim.ui.prompt.context").mentions) do
    if vim.startswith(mention.word, base) then
      table.insert(items, { word = "@" .. mention.word, menu = "[neovim]", info = mention.info })
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
  if vim.startswith(base, "@symbol:") then
    return complete_symbols(base:sub(9))
  end
  if vim.startswith(base, "@") then
    return vim.list_extend(complete_context(base:sub(2)), complete_files(base:sub(2)))
  end
  return complete_commands(base, require("acp_nvim.ui.chat").chat_of_buf(api.nvim_get_current_buf()))
end

--- After a completed /command that takes input, its hint shows as virtual text until the user types it.
---@param buf integer
function M.update_hint(buf)
  api.nvim_buf_clear_namespace(buf, M.ns_hint, 0, -1)
  if api.nvim_buf_line_count(buf) ~= 1 then
    return
  end
  local line = api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  local word = line:match("^(/%S+)%s*$")
  local chat = word and require("acp_nvim.ui.chat").chat_of_buf(buf)
  for _, command in ipairs(chat and chat.commands or {}) do
    if command.word == word and command.hint ~= "" then
      api.nvim_buf_set_extmark(buf, M.ns_hint, 0, 0, {
        virt_text = { { "<" .. command.hint .. ">", "AcpPromptHint" } },
        virt_text_pos = "eol",
      })
      return
    end
  end
end

return M

-- What `@diagnostics`, `@diagnostics:all`, `@symbol:NAME`, `@selection`, `@buffers`, `@quickfix` and `@diff`
-- in a prompt stand for: the facts only Neovim has, gathered when the prompt is sent. The host decides what
-- the agent gets of them (acp_nvim/app/sessions/context_mentions.py: the blocks, what is left out, the size
-- bounds, and the words when there is nothing); `@diff` is only named here, the host runs git itself.

local M = {}

local api = vim.api

--- At most this many diagnostics or quickfix entries are gathered (the host cuts the text further).
M.max_items = 2000

--- The mentions, in the order completion offers them, with what each stands for.
M.mentions = {
  { word = "diagnostics", info = "the diagnostics of the buffer you came from" },
  { word = "diagnostics:all", info = "the diagnostics of every loaded buffer" },
  { word = "symbol:", info = "a language server's symbol: its file, range and text" },
  { word = "selection", info = "the last visual selection" },
  { word = "buffers", info = "the open buffers, unsaved ones marked" },
  { word = "quickfix", info = "the quickfix list" },
  { word = "diff", info = "the unstaged git diff of the session's folder" },
}

local SEVERITY = { "error", "warning", "info", "hint" }

---@type integer|nil
local last_buf

--- Remembers the last file buffer left for another window: the one `@diagnostics` and `@selection` mean
--- once the user is in the prompt window. Called once at start-up (plugin/acp_nvim.lua).
function M.track()
  api.nvim_create_autocmd("WinLeave", {
    group = api.nvim_create_augroup("acp_nvim_mention_origin", { clear = true }),
    callback = function()
      local buf = api.nvim_get_current_buf()
      if vim.bo[buf].buftype == "" then
        last_buf = buf
      end
    end,
  })
end

--- The buffer the user works in: the current one when it holds a file, else the last file buffer left,
--- else the file buffer used last.
---@return integer|nil
function M.origin_buf()
  local current = api.nvim_get_current_buf()
  if vim.bo[current].buftype == "" then
    return current
  end
  if last_buf ~= nil and api.nvim_buf_is_valid(last_buf) then
    return last_buf
  end
  local best, used = nil, -1
  for _, info in ipairs(vim.fn.getbufinfo({ buflisted = 1 })) do
    if vim.bo[info.bufnr].buftype == "" and info.name ~= "" and info.lastused > used then
      best, used = info.bufnr, info.lastused
    end
  end
  return best
end

---@param counts table<integer, integer> by severity
---@return integer
local function total(counts)
  local n = 0
  for _, count in pairs(counts) do
    n = n + count
  end
  return n
end

--- The diagnostics of `bufs`, in order of position, each buffer at a time: a buffer past `M.max_items` is
--- only counted (copying diagnostics is what costs, ~2 us each).
---@param bufs integer[]
---@return table[] items
---@return table[] skipped { path, count } of the diagnostics past the limit, by buffer
local function diagnostics(bufs)
  local items, skipped = {}, {}
  for _, buf in ipairs(bufs) do
    local path = api.nvim_buf_get_name(buf)
    if #items >= M.max_items then
      table.insert(skipped, { path = path, count = total(vim.diagnostic.count(buf)) })
    else
      local found = vim.diagnostic.get(buf)
      table.sort(found, function(a, b)
        return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
      end)
      local room = M.max_items - #items
      for i = 1, math.min(#found, room) do
        local d = found[i]
        items[#items + 1] = {
          path = path,
          lnum = d.lnum + 1,
          col = d.col + 1,
          severity = SEVERITY[d.severity] or "",
          source = type(d.source) == "string" and d.source or "",
          code = d.code ~= nil and tostring(d.code) or "",
          message = tostring(d.message or ""),
        }
      end
      if #found > room then
        table.insert(skipped, { path = path, count = #found - room })
      end
    end
  end
  return items, skipped
end

--- The loaded buffers that have diagnostics, by name, those under the session's directory first (the host
--- leaves out what is outside its folders: they must not take the places the limit leaves).
---@return integer[]
local function diagnosed_buffers()
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.current and chats.chats[chats.current]
  local prefix = ((chat and chat.cwd) or vim.fn.getcwd()):gsub("/$", "") .. "/"
  local bufs, keys = {}, {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and next(vim.diagnostic.count(buf)) ~= nil then
      local name = api.nvim_buf_get_name(buf)
      table.insert(bufs, buf)
      keys[buf] = (vim.startswith(name, prefix) and "0" or "1") .. name
    end
  end
  table.sort(bufs, function(a, b)
    return keys[a] < keys[b]
  end)
  return bufs
end

---@param all boolean
---@return table
local function diagnostics_mention(all)
  if all then
    local items, skipped = diagnostics(diagnosed_buffers())
    return { kind = "diagnostics", mention = true, scope = "all", items = items, skipped = skipped }
  end
  local buf = M.origin_buf()
  if buf == nil then
    return { kind = "missing", mention = true, name = "diagnostics", fact = "no_buffer" }
  end
  local items, skipped = diagnostics({ buf })
  local path = api.nvim_buf_get_name(buf)
  return {
    kind = "diagnostics",
    mention = true,
    scope = "buffer",
    path = path,
    items = items,
    skipped = skipped,
  }
end

--- The last visual selection of the buffer the user works in, as a selection attachment.
---@return table
local function selection_mention()
  local buf = M.origin_buf()
  local first = buf and api.nvim_buf_get_mark(buf, "<")
  local last = buf and api.nvim_buf_get_mark(buf, ">")
  if buf == nil or first[1] == 0 or last[1] == 0 or last[1] < first[1] then
    return { kind = "missing", mention = true, name = "selection", fact = "no_selection" }
  end
  local lines = api.nvim_buf_get_lines(buf, first[1] - 1, last[1], false)
  -- visualmode() is the current buffer's.
  local mode = api.nvim_buf_call(buf, vim.fn.visualmode)
  if mode == "v" and #lines > 0 then
    -- The mark is on the last character's first byte: its other bytes are in the selection too.
    local stop = math.min(last[2] + 1, #lines[#lines])
    lines[#lines] = lines[#lines]:sub(1, stop + (stop > 0 and vim.str_utf_end(lines[#lines], stop) or 0))
    lines[1] = lines[1]:sub(first[2] + 1)
  elseif mode == "\22" then
    local left, right = math.min(first[2], last[2]), math.max(first[2], last[2])
    for i, line in ipairs(lines) do
      lines[i] = line:sub(left + 1, right + 1)
    end
  end
  return {
    kind = "selection",
    mention = true,
    path = api.nvim_buf_get_name(buf),
    start = first[1],
    ["end"] = last[1],
    text = table.concat(lines, "\n"),
    filetype = vim.bo[buf].filetype,
  }
end

---@return table
local function buffers_mention()
  local items = {}
  -- Not getbufinfo(): it copies every buffer's variables, signs and windows (~0.3 ms a buffer).
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local bo = vim.bo[buf]
    if bo.buflisted and bo.buftype == "" then
      table.insert(items, {
        path = api.nvim_buf_get_name(buf),
        modified = bo.modified,
        filetype = bo.filetype,
        lines = api.nvim_buf_is_loaded(buf) and api.nvim_buf_line_count(buf) or 0,
      })
    end
  end
  return { kind = "buffers", mention = true, items = items }
end

---@return table
local function quickfix_mention()
  local list = vim.fn.getqflist({ items = 0, title = 0 })
  local items = {}
  for i = 1, math.min(#list.items, M.max_items) do
    local entry = list.items[i]
    local path = entry.bufnr > 0 and api.nvim_buf_get_name(entry.bufnr) or ""
    table.insert(items, {
      path = path,
      lnum = entry.lnum,
      col = entry.col,
      type = entry.type or "",
      text = entry.text or "",
    })
  end
  return {
    kind = "quickfix",
    mention = true,
    title = list.title or "",
    items = items,
    more = #list.items - #items,
  }
end

---@param name string
---@return table
local function symbol_mention(name)
  local symbols = require("acp_nvim.ui.prompt.symbols")
  local symbol, fact = symbols.resolve(name)
  if symbol == nil then
    return { kind = "missing", mention = true, name = "symbol:" .. name, fact = fact }
  end
  -- By its exact name: bufnr() would read the path as a pattern.
  local buf = -1
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_get_name(b) == symbol.path then
      buf = b
    end
  end
  local lines
  if buf > 0 and api.nvim_buf_is_loaded(buf) then
    lines = api.nvim_buf_get_lines(buf, symbol.start_line - 1, symbol.end_line, false)
  else
    local ok, read = pcall(vim.fn.readfile, symbol.path, "", symbol.end_line)
    lines = ok and vim.list_slice(read, symbol.start_line, symbol.end_line) or {}
  end
  local mention = vim.tbl_extend("force", symbol, { kind = "symbol", mention = true })
  mention.text = table.concat(lines, "\n")
  mention.filetype = buf > 0 and vim.bo[buf].filetype or vim.filetype.match({ filename = symbol.path }) or ""
  return mention
end

local GATHER = {
  ["diagnostics"] = function()
    return diagnostics_mention(false)
  end,
  ["diagnostics:all"] = function()
    return diagnostics_mention(true)
  end,
  ["selection"] = selection_mention,
  ["buffers"] = buffers_mention,
  ["quickfix"] = quickfix_mention,
  ["diff"] = function()
    return { kind = "diff", mention = true }
  end,
}

--- The mention `token` (what follows "@", trailing punctuation allowed) names, or nil.
---@param token string
---@return string|nil word "diagnostics", "symbol:Name", ...
function M.word(token)
  local bare = token:gsub("[%.,;!%?%)%]}'\"`]+$", "")
  if GATHER[bare] then
    return bare
  end
  local name = bare:match("^symbol:(.+)$")
  return name and ("symbol:" .. name) or nil
end

--- The facts behind each mention `text` names (each once, in order).
---@param text string
---@return table[]
function M.gather(text)
  local found, seen = {}, {}
  for token in (" " .. text):gmatch("%s@([^%s]+)") do
    local word = M.word(token)
    if word and not seen[word] then
      seen[word] = true
      local name = word:match("^symbol:(.+)$")
      table.insert(found, name and symbol_mention(name) or GATHER[word]())
    end
  end
  if next(seen) then
    require("acp_nvim.ui.prompt.symbols").forget()
  end
  return found
end

return M

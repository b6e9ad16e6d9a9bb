--- What the plugin's MCP server (`python -m acp_nvim mcp`, `acp_nvim/nvim/mcp_link.py`) asks of this Neovim:
--- diagnostics, the buffers, the selection, and requests to the buffers' language servers. Each function runs
--- in one short main-loop call and answers facts (paths, 1-based lines and byte columns, as the quickfix list
--- counts them); which paths the agent may see and how the answers are worded is decided in Python
--- (`acp_nvim/app/mcp/tools.py`). A language server's answer comes later: the request returns at once and the
--- answer is sent to the server's own channel as the notification `acp_mcp_answer` (token, answer), so no call
--- ever waits on a language server while holding Neovim.
local M = {}

local api = vim.api

-- token -> the function that cancels that token's language server requests.
local pending = {}

local SEVERITY = { "error", "warning", "info", "hint" }

--- An argument the server left out (nil comes over msgpack-rpc as vim.NIL).
---@generic T
---@param value T
---@return T?
local function given(value)
  if value == vim.NIL then
    return nil
  end
  return value
end

---@param buf integer
---@return string
local function buf_path(buf)
  local name = api.nvim_buf_get_name(buf)
  return name ~= "" and vim.fs.normalize(name) or ""
end

-- A file no buffer holds is loaded for the language servers only up to this size: reading a larger one would
-- hold Neovim longer than a frame.
local LOAD_MAX_BYTES = 1024 * 1024

---@param path string
---@return integer?
local function find_buffer(path)
  return require("acp_nvim.editor.fs.path").find_buffer(path)
end

--- The loaded buffer holding `path`, loaded if it is not (hidden, unlisted: the user's list is not changed);
--- or the fact that stops it: "not_found", "too_large".
---@param path string
---@return integer? buf, string? fact
local function buffer_of(path)
  local buf = find_buffer(path)
  if buf ~= nil then
    return buf
  end
  local stat = vim.uv.fs_stat(path)
  if stat == nil or stat.type ~= "file" then
    return nil, "not_found"
  end
  if stat.size > LOAD_MAX_BYTES then
    return nil, "too_large"
  end
  buf = vim.fn.bufadd(path)
  vim.fn.bufload(buf)
  return buf
end

--- Every diagnostic of the buffers holding `paths` (nil: of every buffer), in one list.
---@param paths string[]?
---@return table[]
function M.diagnostics(paths)
  paths = given(paths)
  local wanted
  if paths ~= nil then
    wanted = {}
    for _, path in ipairs(paths) do
      wanted[#wanted + 1] = find_buffer(path)
    end
  end
  local names, out = {}, {}
  local function collect(list)
    for _, d in ipairs(list) do
      local path = names[d.bufnr]
      if path == nil then
        path = buf_path(d.bufnr)
        names[d.bufnr] = path
      end
      out[#out + 1] = {
        path = path,
        line = d.lnum + 1,
        column = d.col + 1,
        end_line = (d.end_lnum or d.lnum) + 1,
        end_column = (d.end_col or d.col) + 1,
        severity = SEVERITY[d.severity] or "error",
        source = d.source or vim.NIL,
        code = d.code ~= nil and tostring(d.code) or vim.NIL,
        message = d.message,
      }
    end
  end
  if wanted == nil then
    collect(vim.diagnostic.get(nil))
  else
    for _, buf in ipairs(wanted) do
      collect(vim.diagnostic.get(buf))
    end
  end
  return out
end

--- The open buffers that hold files: path, unsaved changes, filetype, the language servers attached.
---@return table[]
function M.buffers()
  local out = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local path = buf_path(buf)
    if
      path ~= ""
      and vim.bo[buf].buftype == ""
      and (vim.bo[buf].buflisted or api.nvim_buf_is_loaded(buf))
    then
      local clients = {}
      for _, client in ipairs(vim.lsp.get_clients({ bufnr = buf })) do
        clients[#clients + 1] = client.name
      end
      out[#out + 1] = {
        path = path,
        loaded = api.nvim_buf_is_loaded(buf),
        modified = vim.bo[buf].modified,
        filetype = vim.bo[buf].filetype,
        language_servers = clients,
        lines = api.nvim_buf_is_loaded(buf) and api.nvim_buf_line_count(buf) or vim.NIL,
      }
    end
  end
  return out
end

---@param pos integer[] getpos()'s [buf, line, col, off]
---@param buf integer
---@return integer line, integer col 1-based, the column clamped to the line
local function clamp(pos, buf)
  local line = math.max(1, math.min(pos[2], api.nvim_buf_line_count(buf)))
  local text = api.nvim_buf_get_lines(buf, line - 1, line, false)[1] or ""
  return line, math.max(1, math.min(pos[3], math.max(#text, 1)))
end

--- The visual selection being made (or, outside Visual mode, the cursor) in the window the user works in
--- (the chat's windows skipped), with its text as the buffer holds it now.
---@return table
function M.selection()
  local win = api.nvim_get_current_win()
  local buf = api.nvim_win_get_buf(win)
  if buf_path(buf) == "" or vim.bo[buf].buftype ~= "" then
    win = require("acp_nvim.editor.follow").target_window() or win
    buf = api.nvim_win_get_buf(win)
  end
  local mode = api.nvim_get_mode().mode
  local visual = win == api.nvim_get_current_win() and (mode == "v" or mode == "V" or mode == "\22")
  local cursor = api.nvim_win_get_cursor(win)
  local answer = { path = buf_path(buf), modified = vim.bo[buf].modified, mode = visual and mode or "cursor" }
  if not visual then
    answer.line, answer.column = cursor[1], cursor[2] + 1
    answer.text = api.nvim_buf_get_lines(buf, cursor[1] - 1, cursor[1], false)[1] or ""
    return answer
  end
  local sl, sc = clamp(vim.fn.getpos("v"), buf)
  local el, ec = clamp(vim.fn.getpos("."), buf)
  if sl > el or (sl == el and sc > ec) then
    sl, sc, el, ec = el, ec, sl, sc
  end
  local lines = api.nvim_buf_get_lines(buf, sl - 1, el, false)
  if mode == "v" then
    local last = lines[#lines] or ""
    -- The end column is inclusive and may sit on the first byte of a multibyte character.
    local stop = vim.str_utf_end(last, ec) + ec
    lines[#lines] = last:sub(1, stop)
    lines[1] = lines[1]:sub(sc)
  end
  answer.line, answer.column, answer.end_line, answer.end_column = sl, sc, el, ec
  answer.text = table.concat(lines, "\n")
  return answer
end

--- Sends the answer of `token` to the MCP server's channel.
---@param channel integer
---@param token integer
---@param answer table
local function reply(channel, token, answer)
  pending[token] = nil
  -- The MCP server's channel, not the host's: this answers the server's own request (issue 28).
  pcall(vim.rpcnotify, channel, "acp_mcp_answer", token, answer)
end

--- Each client's result as quickfix-like items (locations and symbols), or its error.
---@param method string
---@param results table<integer, {err: table?, result: any}>
---@param buf integer
---@return table[]
local function per_client(method, results, buf)
  local out = {}
  for client_id, response in pairs(results) do
    local client = vim.lsp.get_client_by_id(client_id)
    local name = client and client.name or tostring(client_id)
    local encoding = client and client.offset_encoding or "utf-16"
    local entry = { server = name }
    local result = response.result
    if response.err then
      entry.error = response.err.message or vim.inspect(response.err)
    elseif result == nil or result == vim.NIL then
      entry.items = {}
    elseif method == "textDocument/hover" then
      local contents = result.contents
      if type(contents) == "table" and contents.kind == nil and contents.value == nil then
        local parts = {}
        for _, part in ipairs(contents) do
          parts[#parts + 1] = type(part) == "table" and part.value or part
        end
        entry.text = table.concat(parts, "\n\n")
      else
        entry.text = type(contents) == "table" and contents.value or tostring(contents)
      end
    elseif method == "textDocument/documentSymbol" or method == "workspace/symbol" then
      entry.items = vim.lsp.util.symbols_to_items(result, buf, encoding)
    else
      if result.uri or result.targetUri then
        result = { result }
      end
      entry.items = vim.lsp.util.locations_to_items(result, encoding)
    end
    for _, item in ipairs(entry.items or {}) do
      item.filename = item.filename and vim.fs.normalize(item.filename) or ""
      item.bufnr, item.user_data, item.valid = nil, nil, nil
    end
    out[#out + 1] = entry
  end
  return out
end

--- Starts `method` on the language servers of the buffer holding `path` (at `line`, `column`: 1-based, the
--- column in bytes; nil for a request on the whole document; `query` for workspace/symbol, whose `path` is
--- nil); the answer goes to `channel` as `token`'s.
--- Returns at once: `{ok = true}`, or `{ok = false, fact = "not_found" | "too_large" | "no_server" |
--- "unsupported"}`.
---@param channel integer
---@param token integer
---@param method string
---@param path string?
---@param line integer?
---@param column integer?
---@param query string?
---@return table
function M.lsp(channel, token, method, path, line, column, query)
  path, line, column, query = given(path), given(line), given(column), given(query)
  local buf
  if path == nil then
    buf = 0
  else
    local fact
    buf, fact = buffer_of(path)
    if buf == nil then
      return { ok = false, fact = fact }
    end
  end
  local clients = vim.lsp.get_clients({ bufnr = path and buf or nil, method = method })
  if #clients == 0 then
    local attached = #vim.lsp.get_clients({ bufnr = path and buf or nil }) > 0
    return { ok = false, fact = attached and "unsupported" or "no_server" }
  end
  local row, text
  if line ~= nil then
    row = math.max(0, math.min(line - 1, api.nvim_buf_line_count(buf) - 1))
    text = api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ""
  end
  local function params(client)
    local p = {}
    if path ~= nil then
      p.textDocument = { uri = vim.uri_from_bufnr(buf) }
    end
    if method == "workspace/symbol" then
      p.query = query or ""
      return p
    end
    if row ~= nil then
      local byte = math.max(0, math.min((column or 1) - 1, #text))
      p.position = { line = row, character = vim.str_utfindex(text, client.offset_encoding, byte, false) }
    end
    if method == "textDocument/references" then
      p.context = { includeDeclaration = true }
    end
    return p
  end
  local target = path and buf or api.nvim_get_current_buf()
  if method == "workspace/symbol" then
    -- Any buffer one of the servers is attached to: the request is the workspace's, not the buffer's.
    target = next(clients[1].attached_buffers) or target
  end
  pending[token] = vim.lsp.buf_request_all(target, method, params, function(results)
    local ok, items = pcall(per_client, method, results, target)
    reply(channel, token, ok and { ok = true, results = items } or { ok = false, error = tostring(items) })
  end)
  return { ok = true }
end

--- Cancels `token`'s requests (the server gave up waiting).
---@param token integer
function M.cancel(token)
  local cancel = pending[token]
  pending[token] = nil
  if cancel then
    pcall(cancel)
  end
end

return M

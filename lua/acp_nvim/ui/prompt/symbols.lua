-- The language servers' symbols for `@symbol:` (ui/prompt/completion.lua completes them, ui/prompt/context.lua
-- sends one): `workspace/symbol` from the servers that answer it, `textDocument/documentSymbol` of the loaded
-- buffers from those that do not (python-lsp-server 1.15 has no workspace symbols). Asked asynchronously:
-- completion shows what an earlier answer found and is refreshed when the answer comes.

local M = {}

local api = vim.api

--- At most this many symbols are offered for one query.
M.max_items = 100
--- How long a send waits for a symbol completion never found (the editor is held meanwhile).
M.send_timeout_ms = 1500

--- The answers, by query: { done: boolean, symbols: table[] }.
---@type table<string, {done: boolean, symbols: table[], waiting: fun(symbols: table[])[]}>
local answers = {}
--- Every symbol seen, by name: a send after a completion finds it here without asking again.
---@type table<string, table>
local seen = {}

---@param kind integer|nil
---@return string
local function kind_name(kind)
  return (kind and vim.lsp.protocol.SymbolKind[kind]) or "Symbol"
end

---@param item table SymbolInformation, WorkspaceSymbol or DocumentSymbol
---@param uri string|nil the document's, for a DocumentSymbol
---@param container string|nil
---@return table|nil
local function symbol_of(item, uri, container)
  local location = item.location or {}
  local range = location.range or item.range
  uri = location.uri or uri
  if type(uri) ~= "string" or not vim.startswith(uri, "file:") or type(item.name) ~= "string" then
    return nil
  end
  range = range or { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 0 } }
  -- An end at a line's first character ends the line before (LSP ranges exclude their end).
  local stop = range["end"]
  local exclusive = stop.character == 0 and stop.line > range.start.line
  return {
    name = item.name,
    symbol_kind = kind_name(item.kind),
    container = item.containerName or container or "",
    path = vim.uri_to_fname(uri),
    start_line = range.start.line + 1,
    start_col = range.start.character + 1,
    end_line = exclusive and stop.line or stop.line + 1,
    end_col = stop.character + 1,
  }
end

--- A DocumentSymbol tree flattened (children after their parent).
---@param items table[]
---@param uri string
---@param out table[]
---@param container string|nil
local function flatten(items, uri, out, container)
  for _, item in ipairs(items or {}) do
    local symbol = symbol_of(item, uri, container)
    if symbol then
      table.insert(out, symbol)
    end
    if item.children then
      flatten(item.children, uri, out, item.name)
    end
  end
end

---@param name string
---@param query string
---@return boolean
local function matches(name, query)
  return query == "" or name:lower():find(query:lower(), 1, true) ~= nil
end

--- The symbols matching `query`, the exact names first, then by name; at most `M.max_items`.
---@param symbols table[]
---@param query string
---@return table[]
local function ranked(symbols, query)
  local out, keys = {}, {}
  for _, symbol in ipairs(symbols) do
    local key = ("%s\0%s:%d"):format(symbol.name, symbol.path, symbol.start_line)
    if matches(symbol.name, query) and not keys[key] then
      keys[key] = true
      table.insert(out, symbol)
    end
  end
  table.sort(out, function(a, b)
    local ea, eb = a.name == query, b.name == query
    if ea ~= eb then
      return ea
    end
    if a.name ~= b.name then
      return a.name < b.name
    end
    return a.path < b.path or (a.path == b.path and a.start_line < b.start_line)
  end)
  return vim.list_slice(out, 1, M.max_items)
end

--- Whether a language server runs that can be asked for symbols.
---@return boolean
function M.any_server()
  for _, client in ipairs(vim.lsp.get_clients()) do
    if
      client:supports_method("workspace/symbol") or client:supports_method("textDocument/documentSymbol")
    then
      return true
    end
  end
  return false
end

--- Asks every language server for the symbols matching `query`; `on_done(symbols)` runs once all answered
--- (at once, with none, when no server runs).
---@param query string
---@param on_done fun(symbols: table[])
function M.ask(query, on_done)
  local answer = answers[query]
  if answer and answer.done then
    on_done(answer.symbols)
    return
  end
  if answer then
    table.insert(answer.waiting, on_done)
    return
  end
  answer = { done = false, symbols = {}, waiting = { on_done } }
  answers[query] = answer
  local outstanding = 0
  local found = {}
  local function finish()
    outstanding = outstanding - 1
    if outstanding > 0 then
      return
    end
    answer.symbols, answer.done = ranked(found, query), true
    for _, symbol in ipairs(answer.symbols) do
      seen[symbol.name] = seen[symbol.name] or symbol
    end
    for _, waiting in ipairs(answer.waiting) do
      waiting(answer.symbols)
    end
    answer.waiting = {}
  end
  local requests = {}
  for _, client in ipairs(vim.lsp.get_clients()) do
    if client:supports_method("workspace/symbol") then
      table.insert(requests, function()
        client:request("workspace/symbol", { query = query }, function(err, result)
          for _, item in ipairs((not err and result) or {}) do
            found[#found + 1] = symbol_of(item)
          end
          finish()
        end)
      end)
    elseif client:supports_method("textDocument/documentSymbol") then
      for buf in pairs(client.attached_buffers or {}) do
        if api.nvim_buf_is_loaded(buf) then
          local uri = vim.uri_from_bufnr(buf)
          table.insert(requests, function()
            client:request(
              "textDocument/documentSymbol",
              { textDocument = { uri = uri } },
              function(err, result)
                flatten((not err and result) or {}, uri, found)
                finish()
              end,
              buf
            )
          end)
        end
      end
    end
  end
  outstanding = #requests + 1
  for _, request in ipairs(requests) do
    -- A request refused at once (a server stopping) must not leave the answer waiting forever.
    if not pcall(request) then
      finish()
    end
  end
  finish()
end

--- What an earlier answer found for `query` (or for a shorter query it extends), without asking.
---@param query string
---@return table[]|nil symbols, nil when nothing was asked yet
function M.known(query)
  for n = #query, 0, -1 do
    local answer = answers[query:sub(1, n)]
    if answer and answer.done then
      return ranked(answer.symbols, query)
    end
  end
  return nil
end

--- Forgets the answers and the symbols seen (the servers' symbols move as the user edits): after each send.
function M.forget()
  answers, seen = {}, {}
end

--- The symbol named `name` for a send: one seen in a completion, else the servers asked and waited for
--- (at most `M.send_timeout_ms`). Nil and the fact when there is none.
---@param name string
---@return table|nil symbol
---@return string|nil fact "no_language_server" | "not_found"
function M.resolve(name)
  if seen[name] then
    return seen[name], nil
  end
  if not M.any_server() then
    return nil, "no_language_server"
  end
  answers[name] = nil
  local result
  M.ask(name, function(symbols)
    result = symbols
  end)
  vim.wait(M.send_timeout_ms, function()
    return result ~= nil
  end, 10)
  for _, symbol in ipairs(result or {}) do
    if symbol.name == name then
      return symbol, nil
    end
  end
  return nil, "not_found"
end

return M

--- :AcpLog — the JSON-RPC traffic with an agent, in a scratch buffer (filetype `acp_nvim_log`).
---
--- The host builds the view (acp_nvim/app/agent_log.py): one fold per message, its header line
--- `HH:MM:SS.mmm  >> method (id)` (`>>` sent by Neovim, `<<` by the agent), then the message as indented JSON
--- with secrets redacted. Lua only shows it: it never parses protocol JSON. `:AcpLog save {path}` has the host
--- write the same messages as NDJSON, for a bug report.
local M = {}

local api = vim.api

--- Header line numbers of each log buffer, for the fold expression.
---@type table<integer, table<integer, true>>
local starts = {}

local notify = require("acp_nvim.util.notify")

local opt = require("acp_nvim.editor.answer").opt

--- The host's channel, or nil and a message (the log lives in the host: no host, no traffic).
---@return integer|nil, string|nil
local function channel()
  local info = require("acp_nvim.host").info()
  if info == nil then
    return nil, "no agent traffic: the host is not running (start an agent with :AcpStart)"
  end
  return info.channel, nil
end

--- Fold expression of log buffers: a fold starts at each message's header.
---@return string
function M.foldexpr()
  local buf_starts = starts[api.nvim_get_current_buf()]
  if buf_starts and buf_starts[vim.v.lnum] then
    return ">1"
  end
  return "1"
end

---@param name string
---@return integer
local function buffer_for(name)
  local bufname = "acp-log://" .. name
  local existing = vim.fn.bufnr(bufname)
  if existing > 0 and api.nvim_buf_is_valid(existing) then
    return existing
  end
  local buf = api.nvim_create_buf(true, true)
  api.nvim_buf_set_name(buf, bufname)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "acp_nvim_log"
  api.nvim_create_autocmd("BufWipeout", {
    buffer = buf,
    once = true,
    callback = function()
      starts[buf] = nil
    end,
  })
  return buf
end

--- Puts a view (`{ name, lines, folds, count, dropped }`, as the host builds it) in the log buffer of its
--- agent and shows that buffer in the current window. Returns the buffer.
---@param view table
---@return integer
function M.show(view)
  local name = opt(view.name) or "agent"
  local buf = buffer_for(name)
  local lines = view.lines
  if #lines == 0 then
    lines = { ("(no traffic recorded for %s yet)"):format(name) }
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  local set = {}
  for _, range in ipairs(view.folds or {}) do
    set[range[1]] = true
  end
  starts[buf] = set
  -- Not in the chat or its prompt: they keep their buffers.
  require("acp_nvim.ui.windows").file_window()
  api.nvim_win_set_buf(0, buf)
  local wo = vim.wo[0][0]
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'acp_nvim.ui.log'.foldexpr()"
  -- The header is the fold's first line: show it as it is.
  wo.foldtext = ""
  wo.foldlevel = 0
  wo.foldenable = true
  wo.wrap = false
  -- Newest last: that is what the user came for.
  api.nvim_win_set_cursor(0, { api.nvim_buf_line_count(buf), 0 })
  return buf
end

--- :AcpLog [agent] — show the log; :AcpLog save {path} [agent] — write it as NDJSON.
---@param fargs string[]
function M.command(fargs)
  local chan, err = channel()
  if chan == nil then
    notify.warn(err --[[@as string]])
    return
  end
  if fargs[1] == "save" then
    local path = fargs[2]
    if path == nil or path == "" then
      notify.warn(":AcpLog save needs a file name")
      return
    end
    local ok, result = require("acp_nvim.host.api").log_save(fargs[3] or "", vim.fn.expand(path))
    if not ok then
      notify.error("cannot save the log: " .. tostring(result))
    elseif opt(result.error) then
      notify.error(result.error)
    else
      notify.info(("saved %d messages of %s to %s"):format(result.count, result.name, result.path))
    end
    return
  end
  local ok, view = require("acp_nvim.host.api").log_view(fargs[1] or "")
  if not ok then
    notify.error("cannot read the log: " .. tostring(view))
    return
  end
  if opt(view.name) == nil then
    notify.warn("no agent traffic recorded yet")
    return
  end
  M.show(view)
end

---@param lead string
---@param line string
---@return string[]
function M.complete(lead, line)
  local words = vim.split(line, "%s+", { trimempty = true })
  -- Which argument is being completed (the command name is word 1).
  local index = lead == "" and #words + 1 or #words
  if words[2] == "save" and index == 3 then
    return vim.fn.getcompletion(lead, "file")
  end
  local candidates = index == 2 and { "save" } or {}
  local chan = channel()
  if chan ~= nil and (index == 2 or (words[2] == "save" and index == 4)) then
    local ok, names = require("acp_nvim.host.api").log_names()
    if ok and type(names) == "table" then
      candidates = vim.list_extend(candidates, names)
    end
  end
  return vim.tbl_filter(function(item)
    return vim.startswith(item, lead)
  end, candidates)
end

return M

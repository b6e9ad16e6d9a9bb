--- `fs/read_text_file` of a file a loaded buffer holds: its text (unsaved edits included), whole or as a
--- `line`/`limit` slice (see `acp_nvim.editor.fs` for the rules).
local M = {}

local result = require("acp_nvim.editor.answer")
local path_of = require("acp_nvim.editor.fs.path")
local edit = require("acp_nvim.editor.fs.edit")
local open = require("acp_nvim.editor.fs.open")
local conflict = require("acp_nvim.editor.fs.conflict")

local api = vim.api
local opt = result.opt

--- The text an agent reads of `buf` (rows `line`.., `limit` of them, or all), and the buffer's lines as the
--- agent reads them when they were all fetched for it.
---@param buf integer
---@param line integer?
---@param limit integer?
---@return string, string[]?
function M.buffer_text(buf, line, limit)
  -- Unresolved merge conflicts read as the agent's side (fs/conflict.lua).
  local agent_view = conflict.agent_view(buf)
  if agent_view then
    if line == nil and limit == nil then
      local text = table.concat(agent_view, "\n")
      return (#agent_view > 0 and vim.bo[buf].eol) and text .. "\n" or text, agent_view
    end
    line = line or 1
    if line > #agent_view or limit == 0 then
      return "", agent_view
    end
    return table.concat(
      agent_view,
      "\n",
      line,
      limit and math.min(#agent_view, line - 1 + limit) or #agent_view
    ),
      agent_view
  end
  if line == nil and limit == nil then
    if edit.buf_is_empty(buf) then
      return "", {}
    end
    local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
    local text = table.concat(lines, "\n")
    -- 'eol' is what the file had when read (or was given by the last agent write); 'fixeol' only decides
    -- what a later :write will do.
    if vim.bo[buf].eol then
      text = text .. "\n"
    end
    return text, lines
  end
  line = line or 1
  local count = api.nvim_buf_line_count(buf)
  if line > count or limit == 0 or edit.buf_is_empty(buf) then
    return "", nil
  end
  local last = limit and math.min(count, line - 1 + limit) or count
  return table.concat(api.nvim_buf_get_lines(buf, line - 1, last, false), "\n"), nil
end

--- Answer `fs/read_text_file` for a file a buffer holds: its text, unsaved edits included; the host reads
--- the files no buffer holds itself, and validates the request (line >= 1, limit >= 0) before it comes here.
---@param path string the real path the host checked
---@param line integer? 1-based first line
---@param limit integer? maximum number of lines
---@param opts { max_bytes: integer?, checked_path: boolean?, view: string? }? `view`: the session whose view
---  of the file (`fs.view`) this read sets
---@return table { ok = true, content, from_buffer = true }, { ok = true, no_buffer = true } or a fact
function M.read(path, line, limit, opts)
  opts = opt(opts) or {}
  if opts.checked_path then
    local changed = open.refuse_if_changed(path)
    if changed then
      return changed
    end
  end
  local buf = path_of.find_buffer(path)
  if not buf then
    -- Sending the text of a large file back through Neovim would hold it: the host reads the disk.
    return { ok = true, no_buffer = true }
  end
  local content, lines = M.buffer_text(buf, opt(line), opt(limit))
  -- The host's limit: a larger text is not sent at all.
  local max_bytes = opt(opts.max_bytes) or math.huge
  if #content > max_bytes then
    return result.refused("too_large", { size = #content })
  end
  local session = opt(opts.view)
  if session then
    require("acp_nvim.editor.fs.view").read(
      session,
      buf,
      function()
        return lines or edit.buf_lines(buf)
      end,
      opt(line),
      opt(limit),
      function()
        return require("acp_nvim.editor.fs.unsaved").disk_lines(buf, path)
      end,
      -- A conflict is read as the agent's side: then not the buffer's lines.
      lines ~= nil and not require("acp_nvim.editor.fs.conflict").has(buf)
    )
  end
  return { ok = true, content = content, from_buffer = true }
end

return M

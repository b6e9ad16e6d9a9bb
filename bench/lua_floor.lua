-- The in-process Lua floor: the least an ACP client inside Neovim can do with the flood agent's stream. It
-- spawns the agent (vim.uv), frames its stdout into lines, decodes each with vim.json.decode on the main loop
-- and appends the text of every agent_message_chunk at the end of a buffer shown in the current window. No
-- host process, no view model: what acp.nvim adds on top of this is what the streaming benchmark compares.
--
-- Two kinds (`F.start`'s `plain`): plain, a buffer without highlighting changed at most once per 16 ms frame
-- (the text of the reads in between gathered; the first change at once), the floor the ratios are judged
-- against (issue 31); highlighted, a markdown buffer with tree-sitter highlighting as the chat has it,
-- changed once per read from the pipe.

local uv = vim.uv
local api = vim.api

local F = {}
_G.acp_floor = F

local stdin, stdout, handle
local partial = ""
local next_id = 0
local waiting = {}
-- The plain kind's frame: the text not yet in the buffer, and when the buffer last changed.
local FRAME_NS = 16 * 1000 * 1000
local pending = {}
local last_change_ns = 0
local change_queued = false

local function send(method, params, on_result)
  next_id = next_id + 1
  waiting[next_id] = on_result
  stdin:write(vim.json.encode({ jsonrpc = "2.0", id = next_id, method = method, params = params }) .. "\n")
end

local function append(text)
  local buf = F.buf
  local last = api.nvim_buf_line_count(buf) - 1
  local col = #(api.nvim_buf_get_lines(buf, last, last + 1, false)[1] or "")
  api.nvim_buf_set_text(buf, last, col, last, col, vim.split(text, "\n", { plain = true }))
end

local function stamp(now)
  F.t_first = F.t_first or now
  if F.needle ~= nil and F.t_done == nil then
    local last = api.nvim_buf_get_lines(F.buf, -2, -1, false)[1] or ""
    if last:sub(-#F.needle) == F.needle then
      F.t_done = now
    end
  end
end

local function change_pending()
  change_queued = false
  if #pending == 0 then
    return
  end
  append(table.concat(pending))
  pending = {}
  last_change_ns = uv.hrtime()
  stamp(last_change_ns)
end

--- The plain kind: the text goes in at once when the last change is a frame old, else at the frame's end.
local function show_in_frame(texts)
  vim.list_extend(pending, texts)
  if change_queued then
    return
  end
  local wait_ms = math.ceil((last_change_ns + FRAME_NS - uv.hrtime()) / 1e6)
  if wait_ms <= 0 then
    change_pending()
  else
    change_queued = true
    vim.defer_fn(change_pending, wait_ms)
  end
end

local function on_lines(lines)
  local texts = {}
  for _, line in ipairs(lines) do
    local ok, message = pcall(vim.json.decode, line)
    if ok and type(message) == "table" then
      if message.method == "session/update" then
        local update = message.params.update
        if update.sessionUpdate == "agent_message_chunk" and update.content.type == "text" then
          texts[#texts + 1] = update.content.text
        end
      elseif message.id ~= nil and waiting[message.id] then
        local on_result = waiting[message.id]
        waiting[message.id] = nil
        on_result(message.result)
      end
    end
  end
  if #texts == 0 then
    return
  end
  if F.plain then
    show_in_frame(texts)
  else
    append(table.concat(texts))
    stamp(uv.hrtime())
  end
end

--- Starts the agent and opens a session; `F.ready` once it is open.
---@param argv string[]
---@param plain boolean a buffer without highlighting, changed once per frame
function F.start(argv, plain)
  F.plain = plain
  F.buf = api.nvim_create_buf(true, true)
  api.nvim_set_current_buf(F.buf)
  if not plain then
    vim.bo[F.buf].filetype = "markdown"
    pcall(vim.treesitter.start, F.buf, "markdown")
  end
  stdin, stdout = uv.new_pipe(), uv.new_pipe()
  handle = uv.spawn(
    argv[1],
    { args = vim.list_slice(argv, 2), stdio = { stdin, stdout, nil } },
    function() end
  )
  stdout:read_start(function(_, data)
    if not data then
      return
    end
    local lines = vim.split(partial .. data, "\n", { plain = true })
    partial = table.remove(lines)
    vim.schedule(function()
      on_lines(lines)
    end)
  end)
  send("initialize", { protocolVersion = 1, clientCapabilities = vim.empty_dict() }, function()
    send("session/new", { cwd = vim.fn.getcwd(), mcpServers = {} }, function(result)
      F.session = result.sessionId
      F.ready = true
    end)
  end)
end

--- Sends a prompt; `F.t0` now, `F.t_first` at the first text shown, `F.t_done` once the last line ends with
--- `needle`, `F.ended` at the prompt's answer.
function F.prompt(text, needle)
  F.t0, F.t_first, F.t_done, F.ended = uv.hrtime(), nil, nil, false
  F.needle = needle
  send("session/prompt", { sessionId = F.session, prompt = { { type = "text", text = text } } }, function()
    F.ended = true
  end)
end

function F.record()
  return { t0 = F.t0, t_first = F.t_first, t_done = F.t_done, ended = F.ended }
end

function F.stop()
  if handle then
    stdin:close()
    handle:kill("sigterm")
  end
end

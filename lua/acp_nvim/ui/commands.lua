-- Every :Acp* user command, created here and nowhere else; what each one does lives in the module it names.

local M = {}

---@param lead string
---@param words string[]
---@return string[]
local function starting(lead, words)
  return vim.tbl_filter(function(word)
    return vim.startswith(word, lead)
  end, words)
end

---@param lead string
---@return string[]
local function complete_agents(lead)
  -- A copy: the host's list stays as it sent it.
  local names = vim.list_extend({}, require("acp_nvim.config").agent_names())
  -- Then the ACP Registry's agents (a configured agent of the same name wins).
  for _, id in ipairs(require("acp_nvim.ui.agents").complete_ids()) do
    if not vim.tbl_contains(names, id) then
      table.insert(names, id)
    end
  end
  return starting(lead, names)
end

-- The lines of a range as a prompt attachment.
---@param line1 integer
---@param line2 integer
---@return table
local function selection(line1, line2)
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  local name = vim.api.nvim_buf_get_name(buf)
  return {
    kind = "selection",
    path = name ~= "" and vim.fn.fnamemodify(name, ":p") or ("[buffer " .. buf .. "]"),
    start = line1,
    ["end"] = line2,
    text = table.concat(lines, "\n"),
    filetype = vim.bo[buf].filetype,
    -- The whole buffer (`:%AcpPrompt`, `:AcpAttach`) is sent without a line range.
    whole = line1 == 1 and line2 == vim.api.nvim_buf_line_count(buf),
  }
end

local warn = require("acp_nvim.util.notify").warn

-- :AcpAttachImage {path} and :AcpAttachAudio {path}: a file of `kind` for the next prompt; `types` names the
-- accepted ones when the file is not one of them.
---@param path string
---@param kind string "image" | "audio"
---@param types string
local function attach_file(path, kind, types)
  local prompt = require("acp_nvim.ui.prompt")
  local full = vim.fn.fnamemodify(vim.fn.expand(path), ":p")
  local found, mime_type = prompt.media_type(full)
  if found ~= kind then
    warn(("%s is not a %s"):format(path, types))
  elseif vim.fn.filereadable(full) == 0 then
    warn(("cannot read %s"):format(path))
  else
    prompt.attach({ kind = kind, name = vim.fn.fnamemodify(full, ":t"), path = full, mime_type = mime_type })
  end
end

-- :AcpAttachImage {path}: an image file; without a path, the clipboard's image.
---@param path string
local function attach_image(path)
  if path ~= "" then
    attach_file(path, "image", "PNG, JPEG, GIF or WebP image")
    return
  end
  local prompt = require("acp_nvim.ui.prompt")
  local image, err = prompt.clipboard_image()
  if image == nil then
    warn(err --[[@as string]])
    return
  end
  prompt.attach(image)
end

function M.create()
  local acp = require("acp_nvim")
  local command = vim.api.nvim_create_user_command
  command("AcpStart", function(args)
    acp.start(args.args)
  end, { nargs = "?", complete = complete_agents, desc = "Start an ACP agent and a session" })
  command("AcpStop", function()
    acp.stop()
  end, { desc = "Stop the ACP agent" })
  command("AcpRestart", function(args)
    acp.restart(args.args)
  end, { nargs = "?", complete = complete_agents, desc = "Restart the ACP agent" })
  command("AcpChat", function()
    acp.chat()
  end, { desc = "Open the ACP chat" })
  command("AcpPrompt", function(args)
    local selections = {}
    if args.range > 0 then
      table.insert(selections, selection(args.line1, args.line2))
    end
    local prompt = require("acp_nvim.ui.prompt")
    if args.args == "" and #selections == 0 and #prompt.pending() == 0 then
      warn(":AcpPrompt needs a text or a range")
      return
    end
    if acp.prompt(args.args, prompt.collect(args.args, selections)) then
      prompt.sent()
    end
  end, { nargs = "*", range = true, desc = "Send a prompt (a range is attached as context)" })
  command("AcpAttach", function(args)
    local buf = vim.api.nvim_get_current_buf()
    local line1, line2 = 1, vim.api.nvim_buf_line_count(buf)
    if args.range > 0 then
      line1, line2 = args.line1, args.line2
    end
    require("acp_nvim.ui.prompt").attach(selection(line1, line2))
  end, { range = true, desc = "Attach the current buffer (or a range) to the next prompt" })
  command(
    "AcpAttachImage",
    function(args)
      attach_image(args.args)
    end,
    { nargs = "?", complete = "file", desc = "Attach an image file (or the clipboard's) to the next prompt" }
  )
  command("AcpAttachAudio", function(args)
    attach_file(args.args, "audio", "WAV, MP3, Ogg, FLAC, M4A or AAC file")
  end, { nargs = 1, complete = "file", desc = "Attach an audio file to the next prompt" })
  command("AcpAttachClear", function()
    require("acp_nvim.ui.prompt").clear_attachments()
  end, { desc = "Drop the attachments of the next prompt" })
  command("AcpCancel", function(args)
    acp.cancel(args.args ~= "" and args.args or nil)
  end, {
    nargs = "?",
    complete = function()
      return { "subagent" }
    end,
    desc = "Cancel the agent's turn (and its subagents), or one subagent alone: :AcpCancel subagent",
  })
  command("AcpQueue", function(args)
    require("acp_nvim.ui.chat_queue").command(args.fargs[1], args.fargs[2])
  end, {
    nargs = "*",
    complete = function(lead, line)
      return require("acp_nvim.ui.chat_queue").complete(lead, line)
    end,
    desc = "The prompts queued while the agent works: list, edit, drop, up, down, clear, send, steer [N]",
  })
  command("AcpAgents", function(args)
    require("acp_nvim.ui.agents").command(args.fargs[1], args.fargs[2])
  end, {
    nargs = "*",
    complete = function(lead, line)
      return require("acp_nvim.ui.agents").complete_command(lead, line)
    end,
    desc = "The installed ACP Registry agents: list, update or remove one",
  })
  command("AcpLog", function(args)
    require("acp_nvim.ui.log").command(args.fargs)
  end, {
    nargs = "*",
    complete = function(lead, line)
      return require("acp_nvim.ui.log").complete(lead, line)
    end,
    desc = "Show the JSON-RPC traffic with the agent (:AcpLog save {file} writes it as NDJSON)",
  })

  -- Sessions, modes, options, login: lua/acp_nvim/ui/session_commands.lua.
  local sessions = require("acp_nvim.ui.session_commands")
  command("AcpNew", function()
    acp.new()
  end, { desc = "Open another session on the current agent" })
  command("AcpSessions", function(args)
    acp.sessions(unpack(args.fargs))
  end, {
    nargs = "*",
    complete = function(lead)
      return starting(lead, sessions.session_words())
    end,
    desc = "List the agent's sessions and open, delete, rename or archive one",
  })
  command("AcpFork", function()
    acp.fork()
  end, { desc = "Fork the chat's session into a new chat (where the agent can)" })
  command("AcpMode", function(args)
    acp.mode(args.args)
  end, { nargs = "?", complete = sessions.complete_mode, desc = "Set the session's mode" })
  command(
    "AcpConfig",
    function(args)
      acp.config(args.fargs[1], args.fargs[2])
    end,
    { nargs = "*", complete = sessions.complete_config, desc = "Set a configuration option of the session" }
  )
  command("AcpAuth", function(args)
    acp.auth(args.args)
  end, { nargs = "?", complete = sessions.complete_auth, desc = "Log in to the agent" })
  command("AcpLogout", function()
    acp.logout()
  end, { desc = "Log out of the agent" })
  command("AcpAddDir", function(args)
    acp.add_dir(args.args)
  end, { nargs = 1, complete = "dir", desc = "Add a directory to the sessions opened from now on" })

  command("AcpPermissions", function(args)
    require("acp_nvim.ui.session_commands").permissions(args.fargs)
  end, {
    nargs = "*",
    complete = function(lead)
      return starting(lead, { "revoke", "allow" })
    end,
    desc = "List the permission rules (choose one to revoke), revoke rule N, or allow a kind, path or command",
  })
  command("AcpCheckpoint", function(args)
    require("acp_nvim.ui.session_commands").checkpoint(args.fargs)
  end, {
    nargs = "*",
    complete = function(lead)
      return starting(lead, { "restore", "diff" })
    end,
    desc = "The session's checkpoints: pick one to restore, or restore {n} / diff {n} (n: the turn)",
  })
  command("AcpReview", function(args)
    local range = args.range > 0 and { args.line1, args.line2 } or nil
    require("acp_nvim.ui.review_command").review(args.args, range)
  end, {
    nargs = "*",
    range = true,
    complete = function(lead, line)
      -- The action is the first word; what follows is free text (a comment, a reason).
      if line:match("AcpReview!?%s+%S+%s") then
        return {}
      end
      return starting(lead, { "accept", "reject", "comment", "comments", "remove", "send" })
    end,
    desc = "Review the agent's edits (quickfix); accept or reject all; comment, reject with a reason, send",
  })
  command("AcpConflict", function(args)
    require("acp_nvim.editor.fs.conflict").command(args.args)
  end, {
    nargs = "?",
    complete = function(lead)
      return starting(lead, { "ours", "theirs", "both" })
    end,
    desc = "Resolve the merge conflict under the cursor (ours, theirs, both); alone: list the conflicts",
  })
  command("AcpTerminal", function(args)
    require("acp_nvim.ui.chat_terminal").open(args.args)
  end, {
    nargs = "?",
    complete = function(lead)
      return starting(lead, require("acp_nvim.ui.chat_terminal").ids())
    end,
    desc = "Open an agent's terminal (default: the newest)",
  })
end

return M

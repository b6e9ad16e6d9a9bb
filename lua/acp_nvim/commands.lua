-- The :Acp* user commands and their completion.

local M = {}

---@param lead string
---@return string[]
local function complete_agents(lead)
  return vim.tbl_filter(function(name)
    return vim.startswith(name, lead)
  end, require("acp_nvim.config").agent_names())
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
    path = name ~= "" and vim.fn.fnamemodify(name, ":p") or ("[buffer " .. buf .. "]"),
    start = line1,
    ["end"] = line2,
    text = table.concat(lines, "\n"),
    filetype = vim.bo[buf].filetype,
  }
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
    if args.args == "" and #selections == 0 then
      vim.notify("acp.nvim: :AcpPrompt needs a text or a range", vim.log.levels.WARN, { title = "acp.nvim" })
      return
    end
    acp.prompt(args.args, selections)
  end, { nargs = "*", range = true, desc = "Send a prompt (a range is attached as context)" })
  command("AcpCancel", function()
    acp.cancel()
  end, { desc = "Cancel the agent's turn" })
end

return M

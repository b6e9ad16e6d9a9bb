-- Highlight groups of the chat, linked to standard groups so colorschemes apply; override any with
-- vim.api.nvim_set_hl(0, "AcpChatAgent", {...}).

local M = {}

M.groups = {
  AcpChatHeader = "WinBar",
  AcpChatUser = "Title",
  AcpChatAgent = "Function",
  AcpChatThoughtHeader = "Comment",
  AcpChatThought = "Comment",
  AcpChatToolTitle = "Bold",
  AcpChatToolKind = "Type",
  AcpChatToolOutput = "Comment",
  AcpChatLocation = "Underlined",
  AcpChatStatusPending = "Comment",
  AcpChatStatusRunning = "DiagnosticInfo",
  AcpChatStatusDone = "DiagnosticOk",
  AcpChatStatusFailed = "DiagnosticError",
  AcpChatStatusCancelled = "DiagnosticWarn",
  AcpChatStatusAwaiting = "DiagnosticWarn",
  AcpChatDiffAdd = "DiffAdd",
  AcpChatDiffDelete = "DiffDelete",
  AcpChatDiffHunk = "DiffText",
  AcpChatDiffFile = "Directory",
  AcpChatTerminal = "Special",
  AcpChatPlan = "Title",
  AcpChatPlanPending = "Normal",
  AcpChatPlanRunning = "DiagnosticInfo",
  AcpChatPlanDone = "Comment",
  AcpChatPlanHigh = "DiagnosticWarn",
  AcpChatCommands = "Title",
  AcpChatCommandName = "Identifier",
  AcpChatNotice = "DiagnosticInfo",
  AcpChatWarning = "DiagnosticWarn",
  AcpChatError = "DiagnosticError",
}

function M.setup()
  for group, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

return M

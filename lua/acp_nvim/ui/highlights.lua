-- Every highlight group of the plugin, defined here only: each is linked to a standard group with
-- `default = true`, so a colorscheme or the user's own `nvim_set_hl(0, "AcpChatAgent", {...})` wins. A
-- colorscheme clears all groups (`:hi clear`), so they are defined again on every ColorScheme.

local M = {}

local GROUP = "acp_nvim_highlights"

M.groups = {
  -- the chat
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
  AcpChatTerminalOutput = "Comment",
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
  -- the prompt window
  AcpPromptHint = "Comment",
  AcpPromptAttachment = "Special",
  AcpChatQueueHeader = "Title",
  AcpChatQueued = "Comment",
  -- the agent's edits under review
  AcpNvimReviewAdd = "DiffAdd",
  AcpNvimReviewChange = "DiffChange",
  AcpNvimReviewDelete = "DiffDelete",
  AcpNvimReviewOld = "DiffDelete",
  -- the review's notes: a comment, a rejected hunk's reason (virtual text at the end of their first line)
  AcpNvimReviewComment = "DiagnosticInfo",
  AcpNvimReviewRejected = "DiagnosticWarn",
  -- merge conflicts an agent's edit left in a buffer
  AcpNvimConflictMarker = "DiffText",
  AcpNvimConflictOurs = "DiffChange",
  AcpNvimConflictTheirs = "DiffAdd",
}

local function define()
  for group, link in pairs(M.groups) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

--- Defines the groups and keeps them defined across colorschemes; idempotent.
function M.setup()
  define()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup(GROUP, { clear = true }),
    callback = define,
  })
end

return M

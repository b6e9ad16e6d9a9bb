--- The question for a path outside the project: allow once / always for this path / deny, through
--- vim.ui.select so any picker plugin works.
---
--- Non-interactive Neovim (no UI attached, and `vim.ui.select` still Neovim's own, which would wait for input
--- nobody can give) answers "noui" at once: the host refuses the request with a message saying so. A
--- `vim.ui.select` replaced by a plugin (or a test stub) is always asked.
local M = {}

local CHOICES = {
  { id = "once", label = "Allow once" },
  { id = "always", label = "Always allow this path" },
  { id = "deny", label = "Deny" },
}

--- Whether someone can answer a picker.
---@return boolean
function M.interactive()
  if #vim.api.nvim_list_uis() > 0 then
    return true
  end
  local info = debug.getinfo(vim.ui.select, "S")
  local builtin = info and info.source and info.source:find("vim/ui%.lua$") ~= nil
  return not builtin
end

--- Asks about `view.path`; answers the host with "once" | "always" | "deny" | "noui".
---@param token integer
---@param view { path: string, real: string, action: string, session_id: string }
function M.ask(token, view)
  local ui = require("acp_nvim.ui.ask")
  -- Scheduled: a picker must not run inside the RPC notification that delivered the question.
  vim.schedule(function()
    if not M.interactive() then
      ui.answer(token, "noui")
      return
    end
    local shown = view.path
    if view.real ~= view.path then
      shown = ("%s (really %s)"):format(view.path, view.real)
    end
    vim.ui.select(CHOICES, {
      prompt = ("The agent wants to %s %s, outside the project:"):format(view.action, shown),
      kind = "acp_nvim.sandbox",
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      ui.answer(token, choice and choice.id or "deny")
    end)
  end)
end

return M

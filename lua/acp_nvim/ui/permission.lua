-- Permission requests through vim.ui.select (so any picker plugin works). The host shows one request at a
-- time; the choice goes back as an option id, a dismissal as nil (the host then picks the first reject
-- option, else answers `cancelled`), through the ui token channel (`acp_nvim.ui.ask`).

local M = {}

local KIND_LABELS = {
  allow_once = "allow once",
  allow_always = "allow always",
  reject_once = "reject once",
  reject_always = "reject always",
  remember = "acp.nvim remembers it",
}

--- Shows the request; `view` = {session_id, item_id, title, kind, command, options = {{id, name, kind}},
--- subagent} (`command`: what the request runs, on one line, or vim.NIL; `subagent`: the name of the subagent
--- that asks, or vim.NIL). The choice
--- goes back with `token` (a request the host already answered, e.g. cancelled, drops it there).
---@param token integer
---@param view table
function M.ask(token, view)
  -- Scheduled: a picker must not run inside the RPC notification that delivered the request.
  vim.schedule(function()
    require("acp_nvim.ui.chat").reveal(view.session_id, view.item_id)
    -- The built-in vim.ui.select blocks in inputlist(): draw the tool call (and its diff) first, or the
    -- user is asked about something the screen does not show yet.
    vim.cmd.redraw()
    local prompt = ("Allow %s: %s?"):format(view.kind, view.title)
    if type(view.command) == "string" then
      -- The command asked about, whatever the title says.
      prompt = ("Allow %s: %s  $ %s ?"):format(view.kind, view.title, view.command)
    end
    if type(view.subagent) == "string" then
      -- A subagent asks: which one, before what it asks.
      prompt = ("Subagent %s: %s"):format(view.subagent, prompt)
    end
    vim.ui.select(view.options, {
      prompt = prompt,
      kind = "acp_nvim.permission",
      format_item = function(option)
        return ("%s (%s)"):format(option.name, KIND_LABELS[option.kind] or option.kind)
      end,
    }, function(choice)
      require("acp_nvim.ui.ask").answer(token, choice and choice.id or nil)
    end)
  end)
end

return M

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
  reply = "then write your reply",
}

--- Shows the request; `view` = {session_id, item_id, title, kind, command, options = {{id, name, kind}},
--- subagent, question} (`command`: what the request runs, on one line, or vim.NIL; `subagent`: the name of the
--- subagent that asks, or vim.NIL; `question`: the picker's prompt when the host words it, a plan to approve).
--- A choice of kind "reply" is answered, then the user's reply goes as the next prompt. The choice
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
    if type(view.question) == "string" then
      prompt = view.question
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
      if choice ~= nil and choice.kind == "reply" then
        -- The plan is rejected (the host answers so); what the user writes goes as the next prompt.
        vim.schedule(function()
          vim.ui.input({ prompt = "Reply to the plan: " }, function(text)
            if text ~= nil and text:match("%S") then
              -- To the session that asked, whichever chat the cursor is in.
              require("acp_nvim")._send(text, nil, function(reply, selections)
                return require("acp_nvim.host.api").prompt(reply, selections, view.session_id)
              end)
            end
          end)
        end)
      end
    end)
  end)
end

return M

-- Permission requests through vim.ui.select (so any picker plugin works). The host shows one request at a
-- time; the choice goes back as an option id, a dismissal as nil (the host then picks the first reject
-- option, else answers `cancelled`).

local M = {}

local KIND_LABELS = {
  allow_once = "allow once",
  allow_always = "allow always",
  reject_once = "reject once",
  reject_always = "reject always",
}

---@type table<integer, boolean> requests answered or withdrawn: a late pick is ignored
local closed = {}

---@param request_id integer
---@param option_id string|nil
local function answer(request_id, option_id)
  if closed[request_id] then
    return
  end
  closed[request_id] = true
  local info = require("acp_nvim.host").info()
  if info ~= nil then
    vim.rpcnotify(info.channel, "acp_permission_answer", request_id, option_id or vim.NIL)
  end
end

--- Shows the request; `view` = {session_id, item_id, title, kind, options = {{id, name, kind}}}.
---@param request_id integer
---@param view table
function M.ask(request_id, view)
  -- Scheduled: a picker must not run inside the RPC notification that delivered the request.
  vim.schedule(function()
    require("acp_nvim.chat").reveal(view.session_id, view.item_id)
    -- The built-in vim.ui.select blocks in inputlist(): draw the tool call (and its diff) first, or the
    -- user is asked about something the screen does not show yet.
    vim.cmd.redraw()
    local prompt = ("Allow %s: %s?"):format(view.kind, view.title)
    vim.ui.select(view.options, {
      prompt = prompt,
      kind = "acp_nvim.permission",
      format_item = function(option)
        return ("%s (%s)"):format(option.name, KIND_LABELS[option.kind] or option.kind)
      end,
    }, function(choice)
      answer(request_id, choice and choice.id or nil)
    end)
  end)
end

--- The host answered the request itself (turn cancelled, agent stopped): forget it.
---@param request_id integer
function M.close(request_id)
  closed[request_id] = true
end

return M

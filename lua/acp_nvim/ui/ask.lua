-- Answers the Python host waits for: a choice through vim.ui.select (so any picker plugin works), a login
-- command run in a terminal window, a terminal job's exit (acp_nvim/nvim/ui.py). The host hands out a token
-- with each question; the answer goes back with it as `acp_reply(token, value)`, and one the host no longer
-- waits for is dropped there.

local M = {}

local notify = require("acp_nvim.util.notify")

--- Sends the answer for `token` (nil is sent as vim.NIL).
---@param token integer
---@param value any
function M.answer(token, value)
  if value == nil then
    value = vim.NIL
  end
  require("acp_nvim.host.api").reply(token, value)
end

local answer = M.answer

--- Shows a picker; `opts` = {prompt, kind, items = {{id, label}}}. Dismissing it answers nil.
---@param token integer
---@param opts table
function M.select(token, opts)
  -- Scheduled: a picker must not run inside the RPC notification that delivered the question.
  vim.schedule(function()
    vim.ui.select(opts.items, {
      prompt = opts.prompt,
      kind = opts.kind,
      format_item = function(item)
        return item.label
      end,
    }, function(choice)
      answer(token, choice and choice.id or nil)
    end)
  end)
end

--- Asks for free text; `opts` = {prompt, default}. Dismissing it answers nil.
---@param token integer
---@param opts table
function M.input(token, opts)
  vim.schedule(function()
    vim.ui.input({ prompt = opts.prompt, default = opts.default }, function(text)
      answer(token, text)
    end)
  end)
end

--- Runs `opts.argv` (with `opts.env` added to the environment) in a terminal split; answers its exit code,
--- or -1 when it cannot start. The window closes by itself on success and stays to be read on failure.
---@param token integer
---@param opts table {title, argv, env}
function M.terminal(token, opts)
  vim.schedule(function()
    vim.cmd("botright new")
    local win = vim.api.nvim_get_current_win()
    local buf = vim.api.nvim_get_current_buf()
    local env = opts.env
    if type(env) ~= "table" or vim.tbl_isempty(env) then
      env = nil
    end
    local job_opts = {
      term = true,
      env = env,
      on_exit = function(_, code)
        vim.schedule(function()
          if code == 0 and vim.api.nvim_win_is_valid(win) then
            pcall(vim.api.nvim_win_close, win, true)
          end
          if code == 0 then
            pcall(vim.api.nvim_buf_delete, buf, { force = true })
          end
        end)
        answer(token, code)
      end,
    }
    local ok, job = pcall(vim.fn.jobstart, opts.argv, job_opts)
    if not ok or job <= 0 then
      pcall(vim.api.nvim_win_close, win, true)
      notify.error(("cannot run %s: %s"):format(opts.argv[1], ok and "not executable" or tostring(job)))
      answer(token, -1)
      return
    end
    vim.b[buf].acp_nvim_login = opts.title
    pcall(function()
      vim.wo[win].winbar = "%#AcpChatHeader#" .. tostring(opts.title):gsub("%%", "%%%%")
    end)
    vim.cmd("startinsert")
  end)
end

return M

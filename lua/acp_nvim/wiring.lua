--- What the layers below tell the ones above, wired once at start-up (`plugin/acp_nvim.lua`, and `setup()`
--- for a plugin manager that loads the plugin late): the editor's terminals to the chat's live output, the
--- host's exit to the process groups it left and to the status, Neovim's focus to what tells the user of
--- what happens out of view. The handlers `require` their module when the event comes, so the wiring loads
--- nothing at start-up.
local M = {}

local events = require("acp_nvim.util.events")

local wired = false

--- Idempotent.
function M.setup()
  if wired then
    return
  end
  wired = true
  require("acp_nvim.editor.agent_groups").setup()
  -- From a terminal's first byte, so that a placeholder drawn after the command started shows it all.
  events.on("terminal_output", function(id, data)
    require("acp_nvim.ui.chat_terminal").on_output(id, data)
  end)
  events.on("terminal_exit", function(id, status)
    require("acp_nvim.ui.chat_terminal").on_exit(id, status)
  end)
  -- Whatever the host left running (it may have been SIGKILLed mid-stop) is ended from here.
  events.on("host_job_exited", function()
    require("acp_nvim.editor.agent_groups").host_exited()
  end)
  events.on("host_failed", function(message)
    require("acp_nvim.ui.status").record("host_failed", { error = message })
  end)
  -- Whether Neovim has the focus, for what the user is told while looking elsewhere (ui/attention.lua).
  vim.api.nvim_create_autocmd({ "FocusGained", "FocusLost" }, {
    group = vim.api.nvim_create_augroup("acp_nvim_focus", { clear = true }),
    callback = function(ev)
      require("acp_nvim.ui.attention").focus(ev.event == "FocusGained")
    end,
  })
  events.on("host_exited", function(message)
    -- Said only where the table lets it change what is shown (not after a stop).
    if require("acp_nvim.ui.status").record("host_exited", { error = message }) then
      require("acp_nvim.util.notify").show(message, vim.log.levels.ERROR)
    end
  end)
end

return M

-- The attachments that go with the next prompt (ui/prompt.lua): buffers, selections, images, audio, shown
-- under the text of every prompt buffer, and what goes with a prompt when it is sent or given back.

local M = {}

local api = vim.api
local mentions = require("acp_nvim.ui.prompt.mentions")
local ns_attach = api.nvim_create_namespace("acp_nvim_prompt_attach")

--- Attachments for the next prompt ({kind = "selection"|"image"|"audio", ...}, see
--- acp_nvim/app/sessions/prompt_content.py).
---@type table[]
local pending = {}

local notify = require("acp_nvim.util.notify")

---@param attachment table
---@return string
local function attachment_label(attachment)
  if attachment.kind == "image" or attachment.kind == "audio" then
    return attachment.kind .. " " .. attachment.name
  end
  local name = vim.fn.fnamemodify(attachment.path, ":t")
  if attachment.whole then
    return name
  end
  if attachment.start == attachment["end"] then
    return ("%s:%d"):format(name, attachment.start)
  end
  return ("%s:%d-%d"):format(name, attachment.start, attachment["end"])
end

--- Shows the pending attachments under the text of every prompt buffer.
function M.show_pending()
  local labels = vim.tbl_map(attachment_label, pending)
  for _, chat in pairs(require("acp_nvim.ui.chat").chats) do
    local buf = chat.prompt_buf
    if buf ~= nil and api.nvim_buf_is_valid(buf) then
      api.nvim_buf_clear_namespace(buf, ns_attach, 0, -1)
      if #labels > 0 then
        local last = api.nvim_buf_line_count(buf) - 1
        api.nvim_buf_set_extmark(buf, ns_attach, last, 0, {
          virt_lines = { { { "attached: " .. table.concat(labels, ", "), "AcpPromptAttachment" } } },
        })
      end
    end
  end
end

--- Adds an attachment to the next prompt.
---@param attachment table
function M.attach(attachment)
  table.insert(pending, attachment)
  M.show_pending()
  notify.info(("%s attached to the next prompt"):format(attachment_label(attachment)))
end

--- Adds attachments to the next prompt, those not attached yet, quietly (a prompt made for the user says what
--- it holds itself).
---@param items table[]
function M.add(items)
  for _, attachment in ipairs(items) do
    local known = vim.tbl_contains(pending, function(other)
      return vim.deep_equal(other, attachment)
    end, { predicate = true })
    if not known then
      table.insert(pending, attachment)
    end
  end
  M.show_pending()
end

--- The attachments waiting for the next prompt.
---@return table[]
function M.pending()
  return vim.deepcopy(pending)
end

--- Whether an attachment waits for the next prompt.
---@return boolean
function M.any_pending()
  return #pending > 0
end

--- Drops the attachments waiting for the next prompt.
function M.clear_attachments()
  pending = {}
  M.show_pending()
end

--- Everything that goes with a prompt: `selections` (from a range), the pending attachments, then the
--- @mentions of `text`. Call `M.sent()` once the prompt was handed over.
---@param text string
---@param selections table[]|nil
---@return table[]
function M.collect(text, selections)
  local all = vim.list_extend(vim.list_extend({}, selections or {}), pending)
  return vim.list_extend(all, mentions.mentions(text))
end

--- The prompt went to the host: the pending attachments went with it.
function M.sent()
  M.clear_attachments()
end

--- The host refused the prompt before sending anything (e.g. an image the agent does not accept): says why
--- and gives back what the user wrote and attached, so nothing is lost.
---@param message string
---@param text string
---@param attachments table[]
function M.refused(message, text, attachments)
  notify.warn(message)
  for _, attachment in ipairs(attachments or {}) do
    -- Mentions come back from the text itself.
    if not attachment.mention then
      table.insert(pending, attachment)
    end
  end
  local chats = require("acp_nvim.ui.chat")
  local chat = chats.current and chats.chats[chats.current]
  local buf = chat and chat.prompt_buf
  if buf ~= nil and api.nvim_buf_is_valid(buf) then
    local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
    if vim.trim(table.concat(lines, "\n")) == "" and text ~= "" then
      api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, "\n"))
    end
  end
  M.show_pending()
end

--- Reads a PNG image from the clipboard with the first tool found (wl-paste, xclip, pngpaste).
---@return table|nil attachment
---@return string|nil error
function M.clipboard_image()
  local tools = {
    { "wl-paste", "--no-newline", "--type", "image/png" },
    { "xclip", "-selection", "clipboard", "-t", "image/png", "-o" },
    { "pngpaste", "-" },
  }
  local tried = false
  for _, cmd in ipairs(tools) do
    if vim.fn.executable(cmd[1]) == 1 then
      tried = true
      local ok, result = pcall(function()
        return vim.system(cmd, { text = false }):wait(3000)
      end)
      local data = ok and result.code == 0 and result.stdout or ""
      if data:sub(1, 8) == "\137PNG\r\n\26\n" then
        return { kind = "image", name = "clipboard", data = vim.base64.encode(data), mime_type = "image/png" }
      end
    end
  end
  if not tried then
    return nil, "no clipboard tool for images found (wl-paste, xclip or pngpaste)"
  end
  return nil, "the clipboard holds no PNG image"
end

return M

-- Elicitation: the agent asks for structured input (a form) or sends the user to a URL. Every choice goes
-- through vim.ui.select, free text through vim.ui.input, so picker plugins just work. The host sends a
-- ready-made view (fields with their kind, label, choices and the `check` their answers are sent back with);
-- the answer goes back through the `acp_nvim.ui.ask` token channel as an action ("accept", "decline",
-- "cancel") and the content. Dismissing any picker cancels.
-- The host decides what is valid: each answer is checked as it is given (`check`), the whole content again,
-- and a form that fails there is asked once more with `view.errors` in the labels and `view.values`.

local M = {}

---@type table<integer, boolean> elicitations answered or withdrawn: a late pick is ignored
local closed = {}

local host_api = require("acp_nvim.host.api")
local notify = require("acp_nvim.util.notify")

---@param id integer
---@param action string
---@param content table|nil
local function answer(id, action, content)
  if closed[id] then
    return
  end
  closed[id] = true
  require("acp_nvim.ui.ask").answer(id, { action = action, content = content })
end

local denil = require("acp_nvim.editor.answer").opt

--- Answers "cancel" (also for a dismissed picker) or "decline" when that is what the user picked.
---@param id integer
---@param item table|nil {id, label} from a picker whose items include "decline" and "cancel"
---@return boolean refused true when the elicitation was answered so
local function refused(id, item)
  if item == nil or item.id == "cancel" then
    answer(id, "cancel")
    return true
  end
  if item.id == "decline" then
    answer(id, "decline")
    return true
  end
  return false
end

---@param items table[] {id, label}
---@param prompt string
---@param on_choice fun(item: table|nil)
local function select(items, prompt, on_choice)
  vim.ui.select(items, {
    prompt = prompt,
    kind = "acp_nvim.elicitation",
    format_item = function(item)
      return item.label
    end,
  }, on_choice)
end

--- The host's verdict on an answer (`check_answer` in acp_nvim/client/elicitation_forms.py decides): true
--- and the value to send, or true, nil and the message why not; false when it could not be checked (said).
---@param field table
---@param given string|string[] the typed text, or the values chosen
---@return boolean checked
---@return any value
---@return string|nil message
local function check(field, given)
  local ok, result = host_api.elicitation_check(field.check, given)
  if not ok or type(result) ~= "table" then
    notify.warn(("cannot check the answer: %s"):format(tostring(result):match("[^\n]*")))
    return false
  end
  return true, denil(result.value), denil(result.error)
end

---@alias AcpFieldDone fun(status: "ok"|"cancel", value: any)

--- Free text (string, number, integer): a bad or missing required value is asked once more, then the
--- elicitation is cancelled.
---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_text(field, previous, done)
  local tries = 0
  local function ask()
    tries = tries + 1
    local default = previous ~= nil and tostring(previous) or ""
    vim.ui.input({ prompt = field.label .. ": ", default = default }, function(text)
      if text == nil then
        return done("cancel")
      end
      local checked, value, err = check(field, text)
      if not checked then
        return done("cancel")
      end
      if err == nil then
        return done("ok", value)
      end
      notify.warn(err)
      if tries >= 2 then
        return done("cancel")
      end
      ask()
    end)
  end
  ask()
end

---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_choice(field, previous, done)
  local items = {}
  if field.type == "boolean" then
    items = { { id = "yes", label = "Yes", value = true }, { id = "no", label = "No", value = false } }
  else
    for _, option in ipairs(field.options) do
      table.insert(items, { id = option.value, label = option.title, value = option.value })
    end
  end
  for _, item in ipairs(items) do
    if previous ~= nil and item.value == previous then
      item.label = item.label .. " (default)"
    end
  end
  if not field.required then
    table.insert(items, { id = "skip", label = "(leave empty)", skip = true })
  end
  select(items, field.label, function(item)
    if item == nil then
      return done("cancel")
    end
    done("ok", (not item.skip) and item.value or nil)
  end)
end

--- Multi-select: the picker shows every option with a check box; picking one toggles it, "Done" ends.
---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_multi(field, previous, done)
  local chosen = {}
  for _, value in ipairs(type(previous) == "table" and previous or {}) do
    chosen[value] = true
  end
  local function picked()
    local values = {}
    for _, option in ipairs(field.options) do
      if chosen[option.value] then
        table.insert(values, option.value)
      end
    end
    return values
  end
  local function ask()
    local items = { { id = "done", label = ("Done (%d chosen)"):format(#picked()) } }
    for _, option in ipairs(field.options) do
      local box = chosen[option.value] and "[x] " or "[ ] "
      table.insert(items, { id = option.value, label = box .. option.title, value = option.value })
    end
    select(items, field.label, function(item)
      if item == nil then
        return done("cancel")
      end
      if item.value ~= nil then
        chosen[item.value] = not chosen[item.value] or nil
        return ask()
      end
      local checked, values, err = check(field, picked())
      if not checked then
        return done("cancel")
      end
      if err ~= nil then
        notify.warn(err)
        return ask()
      end
      done("ok", values)
    end)
  end
  ask()
end

---@param id integer
---@param view table
local function ask_form(id, view)
  local content = {}
  local index = 0
  local function next_field()
    if closed[id] then
      return
    end
    index = index + 1
    local field = view.fields[index]
    if field == nil then
      return answer(id, "accept", next(content) and content or vim.empty_dict())
    end
    local previous = view.values and denil(view.values[field.name])
    if previous == nil then
      previous = denil(field.default)
    end
    local ask = ask_text
    if field.type == "boolean" or field.type == "enum" then
      ask = ask_choice
    elseif field.type == "multi" then
      ask = ask_multi
    end
    ask(field, previous, function(status, value)
      if status == "cancel" then
        return answer(id, "cancel")
      end
      content[field.name] = value
      next_field()
    end)
  end
  local title = denil(view.title)
  local prompt = ("The agent asks (%s): %s"):format(view.source, view.message)
  if title then
    prompt = ("%s — %s"):format(prompt, title)
  end
  if view.errors then
    -- Asked again: straight to the fields.
    return next_field()
  end
  select(
    {
      { id = "fill", label = "Fill in" },
      { id = "decline", label = "Decline" },
      { id = "cancel", label = "Cancel" },
    },
    prompt,
    function(item)
      if not refused(id, item) then
        next_field()
      end
    end
  )
end

---@param id integer
---@param view table
local function ask_url(id, view)
  local items = {}
  if view.openable then
    table.insert(items, { id = "open", label = "Open " .. view.url })
  end
  table.insert(items, { id = "decline", label = "Decline" })
  table.insert(items, { id = "cancel", label = "Cancel" })
  local prompt = ("The agent asks (%s): %s\n%s"):format(view.source, view.message, view.url)
  select(items, prompt, function(item)
    if refused(id, item) then
      return
    end
    if closed[id] then
      return
    end
    local ok, err = pcall(vim.ui.open, view.url)
    if not ok then
      notify.warn(("cannot open %s: %s"):format(view.url, err))
      return answer(id, "cancel")
    end
    answer(id, "accept")
  end)
end

--- Shows an elicitation; `view` = {mode = "form", message, source, title, fields, errors?, values?} or
--- {mode = "url", message, source, url, openable}.
---@param id integer
---@param view table
function M.ask(id, view)
  closed[id] = nil
  -- Scheduled: a picker must not run inside the RPC notification that delivered the request.
  vim.schedule(function()
    if view.mode == "url" then
      ask_url(id, view)
    else
      ask_form(id, view)
    end
  end)
end

--- The host answered the elicitation itself (cancelled, completed, agent gone): forget it.
---@param id integer
function M.close(id)
  closed[id] = true
end

return M

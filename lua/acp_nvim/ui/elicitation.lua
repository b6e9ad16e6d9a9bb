-- Elicitation: the agent asks for structured input (a form) or sends the user to a URL. Every choice goes
-- through vim.ui.select, free text through vim.ui.input, so picker plugins just work. The host sends a
-- ready-made view (fields with their kind, labels, limits); the answer goes back through the `acp_nvim.ui.ask`
-- token channel as an action ("accept", "decline", "cancel") and the content. Dismissing any picker cancels.
-- The host validates the content again and may ask once more with `view.errors` and the previous `view.values`.

local M = {}

---@type table<integer, boolean> elicitations answered or withdrawn: a late pick is ignored
local closed = {}

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

local FORMAT_HINTS = {
  email = "e-mail address",
  uri = "URL",
  date = "date, YYYY-MM-DD",
  ["date-time"] = "date and time, YYYY-MM-DDTHH:MM:SS",
}

---@param value string
---@param format string|nil
---@return boolean
local function format_ok(value, format)
  if format == "email" then
    return value:match("^[^@%s]+@[^@%s]+$") ~= nil
  elseif format == "uri" then
    return value:match("^%a[%w+.-]*:") ~= nil
  elseif format == "date" then
    return value:match("^%d%d%d%d%-%d%d%-%d%d$") ~= nil
  elseif format == "date-time" then
    return value:match("^%d%d%d%d%-%d%d%-%d%d[T ]%d%d:%d%d") ~= nil
  end
  return true
end

--- The label of a field: title, "*" when required, what is expected, the host's complaint if any.
---@param view table
---@param field table
---@return string
local function label(view, field)
  local parts = { field.title .. (field.required and " *" or "") }
  local hints = {}
  if denil(field.description) then
    table.insert(hints, field.description)
  end
  if denil(field.format) and FORMAT_HINTS[field.format] then
    table.insert(hints, FORMAT_HINTS[field.format])
  end
  if field.type == "integer" or field.type == "number" then
    local kind = field.type == "integer" and "whole number" or "number"
    local min, max = denil(field.minimum), denil(field.maximum)
    if min and max then
      kind = ("%s from %s to %s"):format(kind, min, max)
    elseif min then
      kind = ("%s ≥ %s"):format(kind, min)
    elseif max then
      kind = ("%s ≤ %s"):format(kind, max)
    end
    table.insert(hints, kind)
  end
  if #hints > 0 then
    table.insert(parts, "(" .. table.concat(hints, "; ") .. ")")
  end
  local err = view.errors and denil(view.errors[field.name])
  if err then
    table.insert(parts, "[" .. field.title .. " " .. err .. "]")
  end
  return table.concat(parts, " ")
end

--- Checks typed text for a field: the value to send, or nil and why not.
---@param field table
---@param text string
---@return any value
---@return string|nil error
local function parse(field, text)
  if field.type == "integer" or field.type == "number" then
    local n = tonumber(text)
    if n == nil or n ~= n or n == math.huge or n == -math.huge then
      return nil, "is not a number"
    end
    if field.type == "integer" and n ~= math.floor(n) then
      return nil, "is not a whole number"
    end
    if denil(field.minimum) and n < field.minimum then
      return nil, "must be at least " .. field.minimum
    end
    if denil(field.maximum) and n > field.maximum then
      return nil, "must be at most " .. field.maximum
    end
    return n, nil
  end
  local len = vim.fn.strchars(text)
  if denil(field.min_length) and len < field.min_length then
    return nil, ("needs at least %d characters"):format(field.min_length)
  end
  if denil(field.max_length) and len > field.max_length then
    return nil, ("allows at most %d characters"):format(field.max_length)
  end
  if not format_ok(text, denil(field.format)) then
    return nil, "is not a valid " .. (FORMAT_HINTS[field.format] or field.format)
  end
  return text, nil
end

---@alias AcpFieldDone fun(status: "ok"|"cancel", value: any)

--- Free text (string, number, integer): a bad or missing required value is asked once more, then the
--- elicitation is cancelled.
---@param view table
---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_text(view, field, previous, done)
  local tries = 0
  local function ask()
    tries = tries + 1
    local default = previous ~= nil and tostring(previous) or ""
    vim.ui.input({ prompt = label(view, field) .. ": ", default = default }, function(text)
      if text == nil then
        return done("cancel")
      end
      local err
      if text == "" then
        if not field.required then
          return done("ok", nil)
        end
        err = "is required"
      else
        local value
        value, err = parse(field, text)
        if err == nil then
          return done("ok", value)
        end
      end
      notify.warn(("%s %s"):format(field.title, err))
      if tries >= 2 then
        return done("cancel")
      end
      ask()
    end)
  end
  ask()
end

---@param view table
---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_choice(view, field, previous, done)
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
  select(items, label(view, field), function(item)
    if item == nil then
      return done("cancel")
    end
    done("ok", (not item.skip) and item.value or nil)
  end)
end

--- Multi-select: the picker shows every option with a check box; picking one toggles it, "Done" ends.
---@param view table
---@param field table
---@param previous any
---@param done AcpFieldDone
local function ask_multi(view, field, previous, done)
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
    select(items, label(view, field), function(item)
      if item == nil then
        return done("cancel")
      end
      if item.value ~= nil then
        chosen[item.value] = not chosen[item.value] or nil
        return ask()
      end
      local values = picked()
      local min, max = denil(field.min_items), denil(field.max_items)
      if (min and #values < min) or (max and #values > max) or (field.required and #values == 0) then
        notify.warn(("%s: choose between %d and %s"):format(field.title, min or 1, max or "all"))
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
    ask(view, field, previous, function(status, value)
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

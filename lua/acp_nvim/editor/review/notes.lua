--- The review's notes (editor/review.lua): comments on the agent's change (a hunk, or lines) and the reasons of
--- rejected hunks. The host keeps what each note says, per session, and decides what is shown, listed and sent
--- (acp_nvim/app/review/notes.py); here are the marks that show them and follow the buffer's edits, the
--- question for a note's words, and the facts sent to the host: where a note is, the lines there.
local M = {}

local api = vim.api
local notify = require("acp_nvim.util.notify")
local marks = require("acp_nvim.editor.review.marks")
local store = require("acp_nvim.editor.review.store")

M.ns = api.nvim_create_namespace("acp_nvim_review_notes")

local ICONS = { comment = "💬 ", rejection = "✗ " }
local HL = { comment = "AcpNvimReviewComment", rejection = "AcpNvimReviewRejected" }

--- note id -> where its mark is and what it shows
---@type table<integer, { buf: integer, mark: integer, kind: string, text: string }>
local shown = {}

---@param buf integer
---@return string
local function path_of(buf)
  local name = api.nvim_buf_get_name(buf)
  return name ~= "" and vim.fn.fnamemodify(name, ":p") or ""
end

--- The buffer a note is on: the one it was made on while it still holds its file, else the file's loaded one.
---@param view acp.NoteMark
---@return integer?
local function buffer_of(view)
  if api.nvim_buf_is_valid(view.bufnr) and path_of(view.bufnr) == view.path then
    return view.bufnr
  end
  local buf = vim.fn.bufnr(view.path)
  return (buf > 0 and api.nvim_buf_is_loaded(buf)) and buf or nil
end

--- The host's entry point: these notes shown (again) at the end of their first line.
---@param views acp.NoteMark[]
function M.show(views)
  for _, view in ipairs(views) do
    local old = shown[view.id]
    local buf = buffer_of(view)
    if old and old.buf ~= buf and api.nvim_buf_is_valid(old.buf) then
      pcall(api.nvim_buf_del_extmark, old.buf, M.ns, old.mark)
      old = nil
    end
    if buf then
      local count = api.nvim_buf_line_count(buf)
      local row = math.min(math.max(view.start, 1), count) - 1
      local end_row = math.min(math.max(view["end"], view.start, 1), count) - 1
      local mark = api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
        id = old and old.mark or nil,
        end_row = end_row,
        end_col = #(api.nvim_buf_get_lines(buf, end_row, end_row + 1, false)[1] or ""),
        strict = false,
        virt_text = { { "  " .. ICONS[view.kind] .. view.shown, HL[view.kind] } },
        virt_text_pos = "eol",
      })
      shown[view.id] = { buf = buf, mark = mark, kind = view.kind, text = view.text }
    end
  end
end

--- The host's entry point: the marks of these notes go (removed, or their session ended).
---@param ids integer[]
function M.drop(ids)
  for _, id in ipairs(ids) do
    local it = shown[id]
    if it and api.nvim_buf_is_valid(it.buf) then
      pcall(api.nvim_buf_del_extmark, it.buf, M.ns, it.mark)
    end
    shown[id] = nil
  end
end

--- The host's entry point: the notes as a quickfix list, opened.
---@param title string
---@param items acp.NoteItem[]
function M.quickfix(title, items)
  vim.fn.setqflist({}, " ", { title = title, items = items })
  vim.cmd("botright copen")
end

--- Where every shown note is now (1-based lines), for the host's list and prompt.
---@param buf integer? only the notes on this buffer
---@return acp.MarkSpan[]
function M.spans(buf)
  local out = {}
  for id, it in pairs(shown) do
    if (buf == nil or it.buf == buf) and api.nvim_buf_is_valid(it.buf) then
      local m = api.nvim_buf_get_extmark_by_id(it.buf, M.ns, it.mark, { details = true })
      if m[1] then
        out[#out + 1] = { id = id, start = m[1] + 1, ["end"] = ((m[3] and m[3].end_row) or m[1]) + 1 }
      end
    end
  end
  return out
end

--- The notes whose first line is in 0-based rows [`row`, `end_row`) of `buf`: what replacing those lines would
--- push past them (a reject puts the old lines back there; `put_on` sets them back on them after).
---@param buf integer
---@param row integer
---@param end_row integer
---@return integer[]
function M.within(buf, row, end_row)
  local ids = {}
  for id, it in pairs(shown) do
    if it.buf == buf then
      local first = api.nvim_buf_get_extmark_by_id(buf, M.ns, it.mark, {})[1]
      if first and first >= row and first < math.max(end_row, row + 1) then
        ids[#ids + 1] = id
      end
    end
  end
  return ids
end

--- Sets the marks of `ids` on 0-based rows [`row`, `end_row`] of `buf`, keeping what they show.
---@param buf integer
---@param ids integer[]
---@param row integer
---@param end_row integer
function M.put_on(buf, ids, row, end_row)
  local last = api.nvim_buf_line_count(buf) - 1
  row, end_row = math.min(row, last), math.min(math.max(row, end_row), last)
  for _, id in ipairs(ids) do
    local it = shown[id]
    local m = it and api.nvim_buf_get_extmark_by_id(buf, M.ns, it.mark, { details = true })
    if m and m[1] then
      local details = m[3]
      api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
        id = it.mark,
        end_row = end_row,
        end_col = #(api.nvim_buf_get_lines(buf, end_row, end_row + 1, false)[1] or ""),
        strict = false,
        virt_text = details.virt_text,
        virt_text_pos = "eol",
      })
    end
  end
end

--- The note whose lines hold 0-based `row` of `buf`, the innermost when several do.
---@param buf integer
---@param row integer
---@return integer? id, table? note
function M.at(buf, row)
  local found, found_it, size
  for id, it in pairs(shown) do
    if it.buf == buf then
      local m = api.nvim_buf_get_extmark_by_id(buf, M.ns, it.mark, { details = true })
      local first, last = m[1], m[3] and m[3].end_row or m[1]
      if first and row >= first and row <= last and (size == nil or last - first < size) then
        found, found_it, size = id, it, last - first
      end
    end
  end
  return found, found_it
end

---@param request acp.ReviewRequest
local function tell_host(request)
  if not require("acp_nvim.host.api").review(request) then
    notify.warn("no session to review with: start an agent with :AcpStart")
  end
end

--- A note's words asked; `done` gets them, or nothing when the question was dismissed.
---@param prompt string
---@param default string?
---@param done fun(text: string)
local function ask(prompt, default, done)
  vim.ui.input({ prompt = prompt, default = default }, function(text)
    if text ~= nil then
      done(text)
    end
  end)
end

---@param buf integer
---@param first integer 1-based
---@param last integer
---@return string
local function label(buf, first, last)
  local name = vim.fn.fnamemodify(api.nvim_buf_get_name(buf), ":t")
  return last > first and ("%s:%d-%d"):format(name, first, last) or ("%s:%d"):format(name, first)
end

--- The fact of a comment on the hunk at `row`, or on lines `first`..`last` (1-based) when given.
---@param buf integer
---@param row integer 0-based, the cursor's
---@param first integer?
---@param last integer?
---@return acp.NoteFact?
local function comment_fact(buf, row, first, last)
  local sid, _, hunk = store.hunk_at(buf, first and first - 1 or row)
  local fact =
    { kind = "comment", session_id = sid, bufnr = buf, path = path_of(buf), filetype = vim.bo[buf].filetype }
  if first then
    fact.start, fact["end"], fact.hunk = first, last, false
    fact.new = api.nvim_buf_get_lines(buf, first - 1, last, false)
    return fact
  end
  if not hunk then
    return nil
  end
  local s, e = marks.span(buf, hunk)
  fact.start, fact["end"], fact.hunk = s + 1, math.max(s + 1, e), true
  fact.old, fact.new = hunk.old, api.nvim_buf_get_lines(buf, s, e, false)
  return fact
end

--- Comment on the hunk under the cursor, or on lines `first`..`last` of `buf` (a range, Visual mode); on a
--- note already there: its words edited (emptied: the comment goes). `text` given: not asked.
---@param buf integer
---@param first integer?
---@param last integer?
---@param text string?
function M.comment(buf, first, last, text)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local id, note = nil, nil
  if not first then
    id, note = M.at(buf, row)
  end
  if id and note then
    local edit = function(words)
      tell_host({
        action = vim.trim(words) == "" and note.kind == "comment" and "remove" or "edit",
        note_id = id,
        text = words,
      })
    end
    if text then
      return edit(text)
    end
    local what = note.kind == "comment" and "Edit the comment (empty: remove it): "
      or "Reason for rejecting: "
    return ask(what, note.text, edit)
  end
  local fact = comment_fact(buf, row, first, last)
  if not fact then
    notify.warn("no agent hunk here: put the cursor on one, or give lines (a range, Visual mode)")
    return
  end
  local add = function(words)
    fact.text = words
    tell_host({ action = "add", note = fact })
  end
  if text then
    return add(text)
  end
  ask(("Comment on %s: "):format(label(buf, fact.start, fact["end"])), nil, add)
end

--- Remove the note under the cursor (a comment, or a rejection's note).
---@param buf integer
function M.remove(buf)
  local id = M.at(buf, api.nvim_win_get_cursor(0)[1] - 1)
  if not id then
    notify.warn("no review note here")
    return
  end
  tell_host({ action = "remove", note_id = id })
end

--- A hunk of `buf` rejected for session `sid`: its old lines are back at 0-based `row`, `count` of them;
--- `agent` were the agent's lines, `reason` the user's words (nil or "" for none). The host keeps the note.
---@param buf integer
---@param sid string
---@param hunk acp_nvim.ReviewHunk
---@param agent string[]
---@param row integer
---@param count integer
---@param reason string?
function M.rejected(buf, sid, hunk, agent, row, count, reason)
  local first = math.max(row, 0) + 1
  require("acp_nvim.host.api").review({
    action = "add",
    note = {
      kind = "rejection",
      session_id = sid,
      bufnr = buf,
      path = path_of(buf),
      start = first,
      ["end"] = math.max(first, row + count),
      text = reason or "",
      old = hunk.old,
      new = agent,
      hunk = true,
      filetype = vim.bo[buf].filetype,
    },
  })
end

--- `:AcpReview comments` and `send`: the host lists the notes, or puts them in the prompt, with where they are.
---@param action "list"|"send"
---@param session_id string?
function M.command(action, session_id)
  tell_host({ action = action, session_id = session_id, spans = M.spans() })
end

--- Files whose buffer was wiped out while it showed notes: read again, they get them back.
---@type table<string, boolean>
local orphaned = {}

--- A buffer is being wiped out: the host learns where its marks were, which go with it; its notes stay.
---@param buf integer
function M.wiped(buf)
  local spans = {}
  for _, span in ipairs(M.spans()) do
    if shown[span.id].buf == buf then
      spans[#spans + 1] = span
      shown[span.id] = nil
    end
  end
  if #spans > 0 then
    orphaned[path_of(buf)] = true
    require("acp_nvim.host.api").review({ action = "moved", spans = spans })
  end
end

--- A buffer given another name (`:saveas`, `:file`, a file manager's rename through `nvim_buf_set_name`): the
--- notes it shows are on that file now, so the host names the new path for them (and where they are). Only the
--- buffer's own rename is known here: a file moved outside Neovim, or by the agent, keeps its buffer's name,
--- and the host says in the prompt that such a note's file is gone (acp_nvim/app/review/notes.py).
---@param buf integer
function M.renamed(buf)
  local path = path_of(buf)
  if path == "" then
    -- `:0file`: no name to give the agent; the notes keep the last one.
    return
  end
  local spans = M.spans(buf)
  if #spans > 0 then
    require("acp_nvim.host.api").review({ action = "renamed", path = path, spans = spans })
  end
end

--- A file read into a buffer again: the host shows its notes there again.
---@param buf integer
function M.read(buf)
  local path = path_of(buf)
  if orphaned[path] then
    orphaned[path] = nil
    require("acp_nvim.host.api").review({ action = "show", path = path })
  end
end

return M

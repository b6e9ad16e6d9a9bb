-- The chats and what every part of the chat reads (ui/chat/init.lua names the parts): the chat of each
-- session, the current one, and the namespaces of the chat's extmarks.
-- Required by every part and requiring none.

local M = {}

local api = vim.api
-- Each item's first line (ui/chat/items.lua), the drawn highlights, the locations a jump opens and the
-- terminal placeholders.
M.ns_items = api.nvim_create_namespace("acp_nvim_items")
M.ns_hl = api.nvim_create_namespace("acp_nvim_hl")
M.ns_loc = api.nvim_create_namespace("acp_nvim_loc")
M.ns_term = api.nvim_create_namespace("acp_nvim_term")
-- The prompts queued while a turn runs, under the last line (ui/chat_queue.lua): not part of the transcript.
M.ns_queue = api.nvim_create_namespace("acp_nvim_queue")

-- An item of a chat is the id of the extmark on its first line (namespace "acp_nvim_items"); what else is known
-- of it is in the chat's tables indexed by that number (`kinds`, dense: marks are numbered from 1; the others
-- only where set): no table per item, which cost ~250 bytes of heap each (a 10,000-update chat has 5,000).
---@alias AcpChatItem integer

---@class AcpChat
---@field session_id string
---@field buf integer
---@field agent string
---@field display_name string
---@field items table<string|integer, AcpChatItem> by the key of the host's item id (see M.item_key)
---@field kinds table<AcpChatItem, string> the item's kind (the view model's)
---@field bare table<AcpChatItem, true> the items that start with no blank separator line (the first, a tight one)
---@field notes table<AcpChatItem, integer> extmark of the note where a long message is cut (ui/chat_message.lua)
---@field fold_runs table<AcpChatItem, (integer|boolean)[]> the item's fold levels (see AcpDrawn.folds), rows
--- relative to its body, for the items that have folds
---@field order (string|integer)[] the items' keys (see M.item_key), in buffer order
---@field locs table<integer, {path: string, lnum: integer}>
---@field terms table<integer, string>
---@field empty boolean
---@field header string
---@field commands table[]
---@field modes table[]
---@field prompt_buf integer|nil
---@field item_at_cache {tick: integer, first: integer, stop: integer, entry: AcpChatItem, idx: integer}|nil
---@field queue {ops: table[]|nil, json: string|nil, next: integer}[]|nil ops not applied yet (see drain.lua's M.apply)
---@field queued_view acp.QueueView|nil the prompts queued while a turn runs, as the host shows them (ui/chat_queue.lua)
---@field queue_mark integer|nil the extmark under the last line that shows them (draw.lua's place_queue)
---@field long_line boolean|nil a line past chat.long_line_bytes was streamed (see drain.lua's guard_redraw)
---@field close_from integer|nil first row of the new folds that wait for the end of Insert mode, to be closed
---@field fold_open table<AcpChatItem, table<integer, true>>|nil the folds open in the chat window the user last
--- left, by item (ui/chat/fold_state.lua): what a window that shows the chat anew opens
---@field fold_left integer|nil the chat window the user last left, read for `fold_open` when it goes or another shows
--- the chat anew (ui/chat/folds.lua)
---@field folds_attached boolean|nil its folds are made again whenever it is shown in a window (ui/chat/folds.lua)
---@field continued boolean|nil the drain running is a slice continued from an earlier tick (see drain.lua's M._drain)
---@field drawing_items boolean|nil this draw drew many new items at once (a replay): its slices hold the collector

--- The key of the host's item id `id` in `chat.items` and `chat.order`: the number when the id is one written
--- plainly (the host numbers its items: "1", "2", ...), so that the tables hold 8 bytes an item in their array
--- parts and no string per item; any other id as it is.
---@param id string
---@return string|integer
function M.item_key(id)
  local n = tonumber(id)
  if n ~= nil and n >= 1 and n < 2147483648 and n % 1 == 0 and tostring(n) == id then
    return n
  end
  return id
end

--- The host's id of the item whose key is `key` (see M.item_key).
---@param key string|integer
---@return string
function M.item_id(key)
  return type(key) == "number" and tostring(key) or key
end

---@type table<string, AcpChat>
M.chats = {}
---@type string|nil the current session's id, as the host's last status named it: ui/status.lua applies it (the host
--- decides which session is current)
M.current = nil

--- Set by :AcpChat while the agent is still starting: the first chat created is opened and focused.
---@type boolean
M.focus_when_created = false

---@param buf integer
---@return AcpChat|nil
function M.chat_of_buf(buf)
  for _, chat in pairs(M.chats) do
    if chat.buf == buf or chat.prompt_buf == buf then
      return chat
    end
  end
  return nil
end

return M

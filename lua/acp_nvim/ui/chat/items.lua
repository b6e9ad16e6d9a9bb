-- Where each item of a chat is: its first line is an extmark (namespace "acp_nvim_items"), its last the line
-- before the next item's. What the drawing, the folds, the highlighting (ui/chat_highlight/) and a long
-- message's note (ui/chat_message.lua) look items up with.

local M = {}

local api = vim.api
local ns_items = require("acp_nvim.ui.chat.state").ns_items

---@param chat AcpChat
---@param entry AcpChatItem
---@return integer first, integer last rows (0-based, inclusive)
function M.item_range(chat, entry)
  local buf = chat.buf
  local first = api.nvim_buf_get_extmark_by_id(buf, ns_items, entry, {})[1]
  -- The next item's mark is the first below this one's (every item has a line of its own: draw.lua): the
  -- item keeps no place in `chat.order`, whose lookup would cost as much.
  local after = api.nvim_buf_get_extmarks(buf, ns_items, { first + 1, 0 }, -1, { limit = 1 })[1]
  if after ~= nil then
    return first, after[2] - 1
  end
  return first, api.nvim_buf_line_count(buf) - 1
end

--- The item whose lines hold `row` (0-based) and its first row. A binary search over `chat.order` (items are
--- in buffer order) with one extmark lookup by id per step: a backward `nvim_buf_get_extmarks` scan walks
--- every mark before the row in Neovim 0.11 (about 1 ms on a 10,000-update chat), and the highlighter and the
--- keys run it often.
---@param chat AcpChat
---@param row integer
---@return AcpChatItem|nil, integer, integer idx its place in `chat.order`
function M.item_at(chat, row)
  -- Rows are asked for one after the other: the last answer usually still holds.
  local tick = api.nvim_buf_get_changedtick(chat.buf)
  local cache = chat.item_at_cache
  if cache and cache.tick == tick and row >= cache.first and row < cache.stop then
    return cache.entry, cache.first, cache.idx
  end
  local lo, hi = 1, #chat.order
  local found, found_row, found_idx = nil, 0, 0
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local entry = chat.items[chat.order[mid]]
    local mark_row = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, entry, {})[1]
    if mark_row ~= nil and mark_row <= row then
      found, found_row, found_idx = entry, mark_row, mid
      lo = mid + 1
    else
      hi = mid - 1
    end
  end
  if found ~= nil then
    local next_id = chat.order[found_idx + 1]
    local stop = math.huge
    if next_id then
      stop = api.nvim_buf_get_extmark_by_id(chat.buf, ns_items, chat.items[next_id], {})[1] or row + 1
    end
    chat.item_at_cache = { tick = tick, first = found_row, stop = stop, entry = found, idx = found_idx }
  end
  return found, found_row, found_idx
end

return M

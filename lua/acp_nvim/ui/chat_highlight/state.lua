-- What every part of the chat's markdown highlighting reads (ui/chat_highlight/init.lua names the parts): its
-- namespace and tunables, each chat buffer's state, the compiled queries and their warm-up. Requires no part.

local M = {}

local api = vim.api
M.ns = api.nvim_create_namespace("acp_nvim_markdown")

-- Work per main-loop tick; what is left runs on the next ticks, after the input that came in meanwhile.
M.budget_ns = 2e6
-- An open block larger than chat.highlight_max_bytes is parsed again only once the chat has not changed for
-- this long (re-parsing a 700 KB streamed paragraph per frame would cost more than the frame), and what one
-- tick's budget leaves undone waits for it too: a replay of thousands of items is highlighted once it is drawn,
-- not in ticks taken from the drawing.
M.pause_ms = 300
-- Whole items drawn together (a replayed history) are parsed together, up to this many bytes: most of what a
-- parse of a small item costs is fixed (a markdown_inline parser alone takes ~0.25 ms to create), so 400
-- items of a day's work parse 2.6x faster in batches than one by one (16 KiB batches; 8 KiB keep each slice
-- short).
M.batch_bytes = 8 * 1024
-- A block larger than this is not highlighted at all (it keeps what it had when smaller): such a block is one
-- paragraph of 100,000 streamed words, and its trees (hundreds of thousands of nodes) cost tens of ms to free
-- whenever the garbage collector gets to them, a stall in whatever runs then. Nothing a chat holds in
-- practice is that large; the size of the chat itself is no limit.
M.max_block_bytes = 256 * 1024
-- A parse of more rows than this is of the markdown blocks alone (see start_job).
M.max_injected_rows = 2000
-- A text of more rows than this is not parsed at all (drawn plain): the tree of a 24,000-row table took the
-- garbage collector 40-80 ms to free, a stall in whatever ran then (a later drain, another parse's step).
M.max_parsed_rows = 8000
-- Rows above and below a window's view highlighted with it, at least: what a scroll of a few lines or a
-- page shows next is ready (half the window's height when that is more).
M.margin_rows = 20

---@class AcpChatHighlightState
---@field ranges integer[][] rows changed and not highlighted yet ({first, stop}, 0-based, stop exclusive),
---  the newest last: taken from the end, an item at a time, so that a replay of thousands costs each tick
---  only what it highlights
---@field settled table<AcpChatItem, integer> rows of the item before this one are highlighted for good
---@field last_change integer when the buffer last changed (vim.uv.now)
---@field deferred table<AcpChatItem, integer> large open blocks waiting for the chat to pause, from this row
---@field job AcpChatHighlightJob|nil
---@field scheduled boolean|nil
---@field timer uv.uv_timer_t|nil
---@field items table|nil the chat's items table the state is about (a reset replaces it)
---@field chat AcpChat|nil the chat, for the autocommands that bring rows into view
---@field views integer[][]|nil the rows in view, during one refresh (see in_view)

---@type table<integer, AcpChatHighlightState>
local states = {}
M.states = states

local queries = {} ---@type table<string, vim.treesitter.Query|false>

---@param lang string
---@return vim.treesitter.Query|false
local function query_of(lang)
  local q = queries[lang]
  if q == nil then
    local ok, found = pcall(vim.treesitter.query.get, lang, "highlights")
    q = ok and found or false
    queries[lang] = q
  end
  return q
end
M.query_of = query_of

local available = nil ---@type boolean|nil
--- Whether the markdown parser and its highlight query are there (bundled with Neovim 0.10+).
---@return boolean
function M.available()
  if available == nil then
    local ok, added = pcall(vim.treesitter.language.add, "markdown")
    available = ok and added ~= false and query_of("markdown") ~= false
  end
  return available
end

-- The queries a chat's first parse needs besides markdown's highlights (compiled by M.available), one per tick
-- from the chat's creation on: compiled at the first highlight they held that tick ~10 ms more (markdown_inline's
-- highlights alone ~6 ms), in the middle of the first streamed answer.
local warm_up = {
  { "markdown", "injections" },
  { "markdown_inline", "highlights" },
  { "markdown_inline", "injections" },
}
local warmed = false

local warm_done = false

local function warm_next(i)
  local lang, name = warm_up[i][1], warm_up[i][2]
  if name == "highlights" then
    query_of(lang)
  else
    -- Held (in `queries`, by another key than a language's highlights), so that Neovim's weak cache of
    -- queries cannot let them go before the parses that need them.
    local ok, query = pcall(vim.treesitter.query.get, lang, name)
    queries[lang .. ":" .. name] = ok and query or false
  end
  if warm_up[i + 1] == nil then
    warm_done = true
    return
  end
  vim.schedule(function()
    warm_next(i + 1)
  end)
end

--- Starts compiling the queries of a first parse, one per tick, once (the first chat attached).
function M.warm_up()
  if not warmed then
    warmed = true
    vim.schedule(function()
      warm_next(1)
    end)
  end
end

--- Whether the queries of a first parse are compiled (tests).
---@return boolean
function M.warmed()
  return warm_done
end

local function weak()
  return setmetatable({}, { __mode = "k" })
end
M.weak = weak

return M

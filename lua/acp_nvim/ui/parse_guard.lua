-- Texts the chat must not hand to Neovim's bundled tree-sitter parsers: they are drawn plain instead.
--
-- Fuzzed on Neovim 0.11.4 (each case in its own `nvim --clean --headless`, so that a crash is seen; see
-- `:help acp_nvim-chat-highlighting`):
-- - The markdown parser segfaults once 255 blocks are open at once, whatever they are: `>` quotes (`>>>…`
--   or `> > …`), list items (`- `, `* `, `+ `, `1. `, `1) ` on one line, or nested by indentation over
--   lines, tabs included), and any mix of them. 254 is fine. Nothing else was seen to crash: emphasis, code
--   spans, links and HTML nested 3,000 deep in markdown_inline, and brackets, blocks and `#if` nested 3,000
--   deep in the injected c, lua, vim, vimdoc and query parsers.
-- - markdown_inline's captures of nested images or links (`![![![…x](u)](u)…`) cost quadratically: 1,000
--   deep, 0.25-0.8 s; 300 deep, ~50 ms; 100, ~20 ms.
-- A line opens at most one block per `>` or list marker on it and one per two columns of its indentation (a
-- list item's content is indented by two at least; a tab counts four), so that estimate bounds what a line
-- can have open. Both limits are half the first known to crash or stall, or less.
--
-- Lua, not the host: only here is the exact text a parse gets known (items of a batch joined, diffs expanded
-- by vim.diff, a parse starting at an item's open block), and the limit is a fact of Neovim's parsers, not a
-- choice of the user's.

local M = {}

-- Blocks open at once (estimated per line, see above): the markdown parser crashes at 255.
M.max_depth = 128
-- Nesting of `[` within a text: the inline captures stall quadratically with it.
M.max_brackets = 128

-- The bytes a line's block prefix is made of: space, tab, `>`, `-`, `+`, `*`, `.`, `)`, digits.
local prefix_byte = {}
for _, c in ipairs({ 32, 9, 62, 45, 43, 42, 46, 41, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57 }) do
  prefix_byte[c] = true
end
-- A line whose prefix is this long at least (in bytes) may be deep: two blocks a byte at most (a tab: two
-- list levels of indentation).
local suspect = math.floor(M.max_depth / 2)

local SPACE, TAB, GT = 32, 9, 62
local bullets = { [45] = true, [43] = true, [42] = true } -- - + *

---@param line string
---@param i integer where the line starts in it
---@return boolean
local function deep_line(line, i)
  local depth, indent, col = 0, 0, 0
  while true do
    local c = line:byte(i)
    if c == GT then
      depth, col, i = depth + 1, col + 1, i + 1
    elseif c == SPACE then
      indent, col, i = indent + 1, col + 1, i + 1
    elseif c == TAB then
      local width = 4 - col % 4
      indent, col, i = indent + width, col + width, i + 1
    else
      -- An ordered list's marker is at most nine digits.
      local _, marker_end = line:find("^%d%d?%d?%d?%d?%d?%d?%d?%d?[.)]", i)
      marker_end = marker_end or (bullets[c] and i or nil)
      if marker_end == nil then
        break
      end
      local after = line:byte(marker_end + 1)
      if after ~= nil and after ~= SPACE and after ~= TAB and after ~= 10 then
        break
      end
      depth, col, i = depth + 1, col + marker_end - i + 1, marker_end + 1
    end
    if depth + math.floor(indent / 2) >= M.max_depth then
      return true
    end
  end
  return false
end

--- Whether `text` would reach a known crash or stall of the markdown parsers.
---@param text string
---@return boolean
function M.refused(text)
  -- Line by line, a byte loop over each prefix and a jump (memchr) to the next line: ~1 ms for 240 KB of
  -- quoted lines, where a Lua pattern tried at every byte took 3.5 ms.
  local byte, find = string.byte, string.find
  local i = 1
  while true do
    local j = i
    while prefix_byte[byte(text, j)] do
      j = j + 1
    end
    if j - i >= suspect and deep_line(text, i) then
      return true
    end
    local newline = find(text, "\n", j, true)
    if newline == nil then
      break
    end
    i = newline + 1
  end
  local opening, at = 0, find(text, "[", 1, true)
  while at ~= nil and opening < M.max_brackets do
    opening, at = opening + 1, find(text, "[", at + 1, true)
  end
  -- Only a text with that many `[` at all can nest them that deep: its brackets are walked.
  local depth, deepest = 0, 0
  if opening >= M.max_brackets then
    for c in text:gmatch("[%[%]]") do
      depth = c == "[" and depth + 1 or math.max(depth - 1, 0)
      deepest = math.max(deepest, depth)
    end
  end
  return deepest >= M.max_brackets
end

return M

"""The chat's markdown highlighting (ui/chat_highlight/) in a real Neovim: tree-sitter captures kept as
extmarks item by item, at any chat size."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bench.big_chat import day_of_work, prose
from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import apply, create_shown, message

CODE_MESSAGE = [
    "Here is **the fix**, with `inline code`:",
    "",
    "```lua",
    "local answer = 42",
    "```",
    "",
    "Done.",
]

# The highlight groups of the extmarks on a row of the chat (0-based), in the markdown namespace.
GROUPS_AT = """
local row = ...
local chat = require('acp_nvim.ui.chat').chats.s1
local ns = require('acp_nvim.ui.chat_highlight').ns
local groups = {}
local opts = { details = true, overlap = true }
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, { row, 0 }, { row, -1 }, opts)) do
  if mark[4].hl_group then
    groups[#groups + 1] = mark[4].hl_group
  end
end
table.sort(groups)
return groups
"""

ROW_OF = """
local text = ...
for i, line in ipairs(require('acp_nvim.ui.chat').lines('s1')) do
  if line == text then
    return i - 1
  end
end
return -1
"""

SIZE = (
    "local buf = require('acp_nvim.ui.chat').chats.s1.buf"
    " return vim.api.nvim_buf_get_offset(buf, vim.api.nvim_buf_line_count(buf))"
)

IDLE = (
    "not require('acp_nvim.ui.chat').pending('s1')"
    " and not require('acp_nvim.ui.chat_highlight').pending(require('acp_nvim.ui.chat').chats.s1.buf)"
)


def scroll_to(nvim: Nvim, text: str) -> None:
    """Shows the row holding `text` in the chat's window (its cursor there, as a reader would scroll), and
    waits for Neovim's WinScrolled, which brings the rows into view for the highlighting. Neovim triggers it
    from its main loop between requests, never inside one (not during `Nvim.wait`'s `vim.wait`): it is
    waited for with short requests, to a deadline."""
    row = nvim.lua(ROW_OF, text)
    assert row >= 0, f"{text!r} not in the chat"
    nvim.lua(
        "_G.acp_test_scrolled = false"
        " vim.api.nvim_create_autocmd('WinScrolled', { once = true,"
        "   callback = function() _G.acp_test_scrolled = true end })"
        " local win = vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1]"
        " vim.api.nvim_win_set_cursor(win, { ... + 1, 0 })",
        row,
    )
    deadline = time.monotonic() + 15
    while not nvim.lua("return _G.acp_test_scrolled"):
        assert time.monotonic() < deadline, "no WinScrolled after the chat's window was scrolled"


def groups_at(nvim: Nvim, text: str) -> list[str]:
    row = nvim.lua(ROW_OF, text)
    assert row >= 0, f"{text!r} not in the chat"
    return nvim.lua(GROUPS_AT, row)  # type: ignore[no-any-return]


@pytest.fixture
def chat(nvim: Nvim) -> Nvim:
    create_shown(nvim)
    return nvim


def test_a_new_chat_with_nothing_drawn_has_no_highlighting_pending(chat: Nvim) -> None:
    """A new session's chat before anything is drawn in it (:AcpNew, no prompt yet): nothing to highlight, and
    `pending` says so. It said work was waiting there for good (the empty buffer's one row, counted as changed
    when the highlighting attached, is looked at only by a drain), and the lua_heap benchmark, waiting on it
    for a chat its prompt never reached, hung."""
    assert chat.lua(
        "return vim.api.nvim_buf_get_lines(require('acp_nvim.ui.chat').chats.s1.buf, 0, -1, false)"
    ) == [""]
    chat.wait(IDLE, 2)
    # Drawn later, it is highlighted as any chat.
    apply(chat, {"op": "add", "item": message("1", "agent", *CODE_MESSAGE)})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, CODE_MESSAGE[0])


def test_markdown_and_code_blocks_are_highlighted(chat: Nvim) -> None:
    apply(chat, {"op": "add", "item": message("1", "agent", *CODE_MESSAGE)})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, CODE_MESSAGE[0])
    assert "@markup.raw.markdown_inline" in groups_at(chat, CODE_MESSAGE[0])
    # The code block in its own language (an injection), inside the block's own highlight.
    code = groups_at(chat, "local answer = 42")
    assert "@keyword.lua" in code and "@number.lua" in code and "@markup.raw.block.markdown" in code
    # The fences are concealed as Neovim's markdown highlighting does (conceal_lines).
    fence_row = chat.lua(ROW_OF, "```lua")
    concealed = chat.lua(
        "local chat = require('acp_nvim.ui.chat').chats.s1"
        " local ns = require('acp_nvim.ui.chat_highlight').ns"
        " local row = ..."
        " local opts = { details = true }"
        " for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, {row, 0}, {row, -1}, opts)) do"
        "   if m[4].conceal_lines then return true end"
        " end return false",
        fence_row,
    )
    assert concealed
    # Neovim's own highlighter does not run on the chat: its cost grows with the chat.
    assert chat.lua(
        "return vim.treesitter.highlighter.active[require('acp_nvim.ui.chat').chats.s1.buf] == nil"
    )


def test_streamed_text_is_highlighted_as_it_arrives(chat: Nvim) -> None:
    apply(chat, {"op": "add", "item": message("1", "agent", "")})
    for part in [
        "Some ",
        "**strong",
        "** words\n\n",
        "```l",
        "ua\nlocal x = require('x')\n",
        "```\n",
        "tail `x`",
    ]:
        apply(chat, {"op": "append", "id": "1", "text": part})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Some **strong** words")
    assert "@keyword.lua" in groups_at(chat, "local x = require('x')")
    assert "@markup.raw.markdown_inline" in groups_at(chat, "tail `x`")


def test_a_5_mb_chat_keeps_its_highlighting(chat: Nvim) -> None:
    """The first and the last message of a 5 MB chat are highlighted, and a code block of a finished message
    keeps its highlight while more is streamed after it."""
    ops = day_of_work(2000)
    for start in range(0, len(ops), 500):
        apply(chat, *ops[start : start + 500])
    chat.wait(IDLE, 120)
    size = chat.lua(SIZE)
    assert size > 800_000
    # Then long answers of prose, to 5 MB.
    n = 0
    while size < 5_000_000:
        apply(chat, *[prose(k, 500) for k in range(n, n + 8)])
        n += 8
        chat.wait("not require('acp_nvim.ui.chat').pending('s1')", 60)
        size = chat.lua(SIZE)
    chat.wait(IDLE, 120)
    # Rows are highlighted as they come into view: the first message is scrolled to, as a reader would.
    first_text = "Step 0: I changed **file 0** so that `run_0` returns early."
    scroll_to(chat, first_text)
    chat.wait(IDLE, 120)
    first = groups_at(chat, first_text)
    assert "@markup.strong.markdown_inline" in first and "@markup.raw.markdown_inline" in first
    assert "@keyword.lua" in groups_at(chat, "local step_0 = require('steps').run(0)")
    # And it still wraps at word boundaries: no line of it is long.
    assert chat.lua(
        "return vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1]].linebreak"
    )
    # Back to the end, where the chat is streamed.
    chat.lua(
        "local win = vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1]"
        " vim.api.nvim_win_call(win, function() vim.cmd('normal! G') end)"
    )
    apply(chat, {"op": "add", "item": message("last", "agent", *CODE_MESSAGE)})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, CODE_MESSAGE[0])
    assert "@keyword.lua" in groups_at(chat, "local answer = 42")
    # More streaming into the last message: the code block above keeps its highlight, the new text gets its
    # own.
    for k in range(200):
        apply(
            chat,
            {
                "op": "append",
                "id": "last",
                "text": f" word{k}" + ("\n\nMore **bold**" if k % 50 == 49 else ""),
            },
        )
    chat.wait(IDLE)
    assert "@keyword.lua" in groups_at(chat, "local answer = 42")
    assert "@markup.strong.markdown_inline" in groups_at(
        chat, "More **bold** word" + " word".join(str(k) for k in range(150, 200))
    )


def small_block_chat(nvim: Nvim, tmp_path: Path) -> None:
    """Chat s1 with chat.highlight_max_bytes 1000, holding one short paragraph, highlighted."""
    assert nvim.lua(
        "return require('acp_nvim').setup(...)", setup_opts(tmp_path, chat={"highlight_max_bytes": 1000})
    )
    nvim.wait_configured()
    create_shown(nvim)
    apply(nvim, {"op": "add", "item": message("1", "agent", "A short **first** paragraph.", "", "")})
    nvim.wait(IDLE)


def test_a_large_open_block_is_highlighted_when_the_chat_pauses(nvim: Nvim, tmp_path: Path) -> None:
    """Past chat.highlight_max_bytes the block being streamed is not parsed again on every frame, but once the
    chat pauses (ui/chat_highlight/state.lua's pause_ms)."""
    small_block_chat(nvim, tmp_path)
    line = "word " * 300 + "**late**"
    # Applied and looked at in one call: the pause cannot have passed in between.
    at_once = nvim.lua(
        "local chat = require('acp_nvim.ui.chat')"
        " chat.apply('s1', { { op = 'append', id = '1', text = ... } })"
        " local buf, ns = chat.chats.s1.buf, require('acp_nvim.ui.chat_highlight').ns"
        " local row = vim.api.nvim_buf_line_count(buf) - 1"
        " return #vim.api.nvim_buf_get_extmarks(buf, ns, { row, 0 }, { row, -1 }, {})",
        line,
    )
    assert at_once == 0
    nvim.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(nvim, line)
    assert "@markup.strong.markdown_inline" in groups_at(nvim, "A short **first** paragraph.")


def test_a_rewritten_item_and_a_reloaded_chat_are_highlighted_afresh(chat: Nvim) -> None:
    apply(chat, {"op": "add", "item": message("t1", "tool_call", "Reading **one** file")})
    apply(chat, {"op": "add", "item": message("m1", "agent", "after it")})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Reading **one** file")
    # A tool call updated in place: its old highlights go with its old text.
    apply(chat, {"op": "replace", "item": message("t1", "tool_call", "Read `two` files")})
    chat.wait(IDLE)
    rewritten = groups_at(chat, "Read `two` files")
    assert "@markup.raw.markdown_inline" in rewritten and "@markup.strong.markdown_inline" not in rewritten
    # The session reloaded into the same buffer: drawn and highlighted again from nothing.
    chat.lua("require('acp_nvim.ui.chat').reset('s1', {agent = 'a', display_name = 'Agent', cwd = '/'})")
    apply(chat, {"op": "add", "item": message("m1", "agent", "Back **again**")})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Back **again**")


def test_only_the_rows_in_view_are_highlighted_until_scrolled_to(chat: Nvim) -> None:
    """A replayed history is highlighted a screen at a time: highlighting all of it in the background held the
    main loop 10-25 ms at a time for seconds (the replay benchmark's "after" figures)."""
    items = [message(str(k), "agent", f"Answer {k} with **bold {k}**.", "") for k in range(400)]
    apply(chat, *[{"op": "add", "item": item} for item in items])
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Answer 399 with **bold 399**.")
    # Far above the view (the window shows the end): left for when it is seen.
    assert groups_at(chat, "Answer 0 with **bold 0**.") == []
    scroll_to(chat, "Answer 0 with **bold 0**.")
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Answer 0 with **bold 0**.")
    # The rows just below the window, within the margin of the view, are ready before they are scrolled to.
    bottom = chat.lua(
        "return vim.fn.line('w$', vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1])"
    )
    below = [chat.lua(GROUPS_AT, row) for row in range(bottom + 1, bottom + 5)]
    assert any("@markup.strong.markdown_inline" in groups for groups in below)


# ---- the editor never waits (issue 17) ---------------------------------------------------------------------

# Counts the calls of `vim.fn.line` (how the highlighting brings a window's view up to date) and of the
# highlighting's refresh from now on.
COUNT_VIEWS = """
local hl = require('acp_nvim.ui.chat_highlight')
_G.acp_test = { lines = 0, refreshes = 0 }
local line, refresh = vim.fn.line, hl.refresh
vim.fn.line = function(...)
  _G.acp_test.lines = _G.acp_test.lines + 1
  return line(...)
end
hl.refresh = function(...)
  _G.acp_test.refreshes = _G.acp_test.refreshes + 1
  return refresh(...)
end
"""


def test_a_block_too_large_to_parse_is_set_aside_without_measuring_the_view(
    nvim: Nvim, tmp_path: Path
) -> None:
    """A streamed paragraph past chat.highlight_max_bytes is set aside before the window's view is looked at:
    bringing a view up to date has Neovim measure the wrapped lines in it, a streamed paragraph of 700 KB
    among them, 2-7 ms on every tick of the stream."""
    small_block_chat(nvim, tmp_path)
    # No pause during the test: the block is only ever set aside (it is highlighted at the pause).
    nvim.lua(COUNT_VIEWS + "hl.pause_ms = 60 * 1000")
    words = ""
    for k in range(5):
        part = "word " * 300 + f"**part {k}** "
        words += part
        refreshed = nvim.lua("return _G.acp_test.refreshes")
        apply(nvim, {"op": "append", "id": "1", "text": part})
        nvim.wait("_G.acp_test.refreshes > args[1]", 15, refreshed)
    assert nvim.lua("return _G.acp_test.lines") == 0
    assert words in nvim.lua("return require('acp_nvim.ui.chat').lines('s1')")
    assert "@markup.strong.markdown_inline" in groups_at(nvim, "A short **first** paragraph.")


def test_the_queries_of_a_first_parse_are_compiled_before_it(chat: Nvim) -> None:
    """Once a chat exists, the queries its first parse needs are compiled one per tick: compiled by that parse
    they held its tick ~10 ms more, in the middle of the first streamed answer."""
    chat.wait("require('acp_nvim.ui.chat_highlight').warmed()")
    chat.lua(
        "_G.acp_test_compiled = {}"
        " local query = vim.treesitter.query"
        " local parse = query.parse"
        " query.parse = function(lang, ...)"
        "   table.insert(_G.acp_test_compiled, lang)"
        "   return parse(lang, ...)"
        " end"
    )
    text = "The **first** answer, with `code` and a [link](https://example.com)"
    apply(chat, {"op": "add", "item": message("1", "agent", text)})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, text)
    assert chat.lua("return _G.acp_test_compiled") == []


def test_plain_text_is_drawn_without_a_parse_and_highlighted_once_markdown_comes(chat: Nvim) -> None:
    """A typed prompt of plain words was drawn in ~1 ms, half of it the parse that found nothing to highlight;
    plain text is not parsed, and a paragraph that turns into markdown (a later chunk) is highlighted then."""
    chat.wait("require('acp_nvim.ui.chat_highlight').warmed()")
    chat.lua(
        "_G.acp_test_parses = 0"
        " local ts = vim.treesitter"
        " local real = ts.get_string_parser"
        " ts.get_string_parser = function(...)"
        "   _G.acp_test_parses = _G.acp_test_parses + 1"
        "   return real(...)"
        " end"
    )
    apply(chat, {"op": "add", "item": message("1", "user", "fix the failing test in foo.py, please")})
    apply(chat, {"op": "add", "item": message("2", "agent", "Looking at it now.", "", "First")})
    chat.wait(IDLE)
    assert chat.lua("return _G.acp_test_parses") == 0
    # The streamed paragraph goes on with markdown: parsed from its own first row, highlighted.
    apply(chat, {"op": "append", "id": "2", "text": " the **failing** one"})
    chat.wait(IDLE)
    assert chat.lua("return _G.acp_test_parses") == 1
    assert "@markup.strong.markdown_inline" in groups_at(chat, "First the **failing** one")
    # Rewritten as plain text, an item loses the highlights it had.
    apply(chat, {"op": "replace", "item": message("2", "agent", "Looking at it now.", "", "First the one")})
    chat.wait(IDLE)
    assert groups_at(chat, "First the one") == []
    assert chat.lua("return _G.acp_test_parses") == 1

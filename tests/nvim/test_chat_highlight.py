"""The chat's markdown highlighting (ui/chat_highlight.lua) in a real Neovim: tree-sitter captures kept as
extmarks item by item, at any chat size."""

from __future__ import annotations

from typing import Any

import pytest

from tests.nvim.conftest import Nvim, setup_opts

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
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, { row, 0 }, { row, -1 }, { details = true, overlap = true })) do
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

IDLE = (
    "not require('acp_nvim.ui.chat').pending('s1')"
    " and not require('acp_nvim.ui.chat_highlight').pending(require('acp_nvim.ui.chat').chats.s1.buf)"
)


def seg(text: str, group: str = "") -> dict[str, Any]:
    return {"s": [[text, group]]}


def message(item_id: str, kind: str, *lines: str) -> dict[str, Any]:
    return {"id": item_id, "kind": kind, "lines": [seg("▍ " + kind), *[seg(line) for line in lines]]}


def tool_call(item_id: str, n: int) -> dict[str, Any]:
    old = "\n".join(f"line {k} of file {n}" for k in range(30))
    new = old.replace("line 7 ", "line seven ")
    return {
        "id": item_id,
        "kind": "tool_call",
        "lines": [
            seg(f"  ✓ Edit src/file_{n}.py", "AcpChatToolDone"),
            {"diff": {"path": f"src/file_{n}.py", "old": old, "new": new}},
        ],
    }


def apply(nvim: Nvim, *ops: dict[str, Any]) -> None:
    nvim.lua("require('acp_nvim.ui.chat').apply(...)", "s1", list(ops))


def groups_at(nvim: Nvim, text: str) -> list[str]:
    row = nvim.lua(ROW_OF, text)
    assert row >= 0, f"{text!r} not in the chat"
    return nvim.lua(GROUPS_AT, row)  # type: ignore[no-any-return]


@pytest.fixture
def chat(nvim: Nvim) -> Nvim:
    nvim.lua("require('acp_nvim.ui.chat').create('s1', {agent = 'a', display_name = 'Agent', cwd = '/'})")
    return nvim


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
        " for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, {row, 0}, {row, -1}, { details = true })) do"
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
    for part in ["Some ", "**strong", "** words\n\n", "```l", "ua\nlocal x = require('x')\n", "```\n", "tail `x`"]:
        apply(chat, {"op": "append", "id": "1", "text": part})
    chat.wait(IDLE)
    assert "@markup.strong.markdown_inline" in groups_at(chat, "Some **strong** words")
    assert "@keyword.lua" in groups_at(chat, "local x = require('x')")
    assert "@markup.raw.markdown_inline" in groups_at(chat, "tail `x`")

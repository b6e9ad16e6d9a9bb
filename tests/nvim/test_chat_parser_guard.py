"""No agent text kills Neovim through a tree-sitter parser: nested and adversarial markdown streamed by an
agent into a chat that is shown (only rows in view are highlighted), as message, thought, tool call (its text
and a diff) and plan; Neovim lives, and every line of the text is in the chat (ui/parse_guard.lua)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.harness import wait_until
from tests.nvim.agent_io import start_scenario
from tests.nvim.conftest import Nvim

IDLE = (
    "not require('acp_nvim.ui.chat').pending(require('acp_nvim.ui.chat').current)"
    " and not require('acp_nvim.ui.chat_highlight').pending("
    "require('acp_nvim.ui.chat').chats[require('acp_nvim.ui.chat').current].buf)"
)

# What opens a block (the markdown parser crashed at 255 open at once) or indents one.
BLOCK_TOKENS = ["> ", ">", "- ", "* ", "+ ", "1. ", "2) ", "  ", "   ", "\t"]
# What nests inside a paragraph (markdown_inline) or in a code block's language.
INLINE_TOKENS = ["*", "**", "_", "`", "[", "](u)", "![", "<b>", "~~", "\\", "|", "&amp;", "x ", "{", "(", ")"]
FENCES = ["```", "```lua", "```c", "```vim", "```query", "```vimdoc", "```markdown", "~~~"]


@st.composite
def nested_line(draw: st.DrawFn) -> str:
    # Often past the crash's depth (255), sometimes just under it.
    depth = draw(st.one_of(st.integers(0, 20), st.integers(240, 420)))
    unit = draw(st.lists(st.sampled_from(BLOCK_TOKENS), min_size=1, max_size=3))
    prefix = "".join(unit * depth)[: depth * 3]
    inline = draw(st.lists(st.sampled_from(INLINE_TOKENS), max_size=12))
    return prefix + "".join(inline * draw(st.integers(1, 30))) + "end"


@st.composite
def adversarial(draw: st.DrawFn) -> str:
    lines = draw(st.lists(nested_line(), min_size=1, max_size=4))
    if draw(st.booleans()):
        fence = draw(st.sampled_from(FENCES))
        lines.insert(0, fence)
        if draw(st.booleans()):
            lines.append(fence[:3])
    # Nested by indentation over lines (a tab or two spaces a level), as deep as the crash.
    if draw(st.integers(0, 3)) == 0:
        step = draw(st.sampled_from(["  ", "\t"]))
        marker = draw(st.sampled_from(["- ", "1. ", "> "]))
        lines.extend(step * level + marker + "x" for level in range(draw(st.integers(250, 270))))
    return "\n".join(lines)


TURNS = 25


def turn_ends(journal: Path) -> int:
    if not journal.exists():
        return 0
    return journal.read_text().count('"turn_end"')


def start(nvim: Nvim, tmp_path: Path) -> None:
    # Each turn says the prompt back as the agent's message, a thought, a tool call's content, a plan entry.
    turn = [
        {"thought": "${PROMPT}"},
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "t",
                "title": "Look",
                "status": "completed",
                "content": [
                    {"type": "content", "content": {"type": "text", "text": "${PROMPT}"}},
                    # Drawn as a diff's lines in the chat (vim.diff in Lua), parsed with the rest.
                    {"type": "diff", "path": "/p/x.md", "oldText": "${PROMPT}", "newText": "new"},
                ],
            }
        },
        {
            "update": {
                "sessionUpdate": "plan",
                "entries": [{"content": "${PROMPT}", "priority": "low", "status": "pending"}],
            }
        },
        {"text": "${PROMPT}"},
    ]
    scenario: dict[str, Any] = {"echo": False, "turns": [turn] * (TURNS + 1)}
    start_scenario(nvim, tmp_path, scenario)
    nvim.api.command("AcpChat")


def test_nested_and_adversarial_markdown_never_crashes_neovim(nvim: Nvim, tmp_path: Path) -> None:
    start(nvim, tmp_path)
    journal = tmp_path / "journal.jsonl"
    turns = 0

    @settings(
        max_examples=TURNS,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(text=adversarial())
    def one_turn(text: str) -> None:
        nonlocal turns
        turns += 1
        assert nvim.lua("return require('acp_nvim').prompt(...)", text), nvim.notes()
        wait_until(lambda: turn_ends(journal) >= turns, 30, f"turn {turns} to end")
        nvim.wait_state("ready")
        # The agent's words are drawn, and highlighted as far as they are (the parse that crashed ran).
        nvim.wait(IDLE, 30)
        assert nvim.lua("return 1 + 1") == 2
        chat = nvim.chat_text()
        for line in text.split("\n"):
            # The prompt, the thought, the tool call (indented), the plan entry (one line) and the message.
            assert line.strip() == "" or chat.count(line.strip()) >= 3, line[:80]

    one_turn()
    assert turns == TURNS


def test_text_deep_enough_to_crash_the_parser_is_plain_and_the_rest_highlighted(nvim: Nvim) -> None:
    from tests.nvim.test_chat import apply, create_shown, message
    from tests.nvim.test_chat_highlight import IDLE as CHAT_IDLE
    from tests.nvim.test_chat_highlight import groups_at

    create_shown(nvim)
    deep = ">" * 255 + " quoted"
    # Drawn together, as a replay draws items: parsed in one batch but for the deep one.
    apply(
        nvim,
        {"op": "add", "item": message("1", "agent", "Before: **bold**")},
        {"op": "add", "item": message("2", "agent", "Now **this**:", deep)},
        {"op": "add", "item": message("3", "agent", "After: **bold**")},
    )
    nvim.wait(CHAT_IDLE)
    assert nvim.lua("return 1 + 1") == 2
    assert deep in nvim.chat_lines()
    assert groups_at(nvim, deep) == [] and groups_at(nvim, "Now **this**:") == []
    assert "@markup.strong.markdown_inline" in groups_at(nvim, "Before: **bold**")
    assert "@markup.strong.markdown_inline" in groups_at(nvim, "After: **bold**")
    # Streamed onto the last message, a deep line makes what its parse would take plain (from the block that
    # was still open); what is above keeps its highlights.
    apply(nvim, {"op": "append", "id": "3", "text": "\n\n" + "- " * 300 + "x"})
    nvim.wait(CHAT_IDLE)
    assert nvim.lua("return 1 + 1") == 2
    assert groups_at(nvim, "- " * 300 + "x") == []
    assert "@markup.strong.markdown_inline" in groups_at(nvim, "Before: **bold**")


def test_a_huge_table_is_highlighted_by_its_blocks_and_one_too_large_to_parse_is_plain(nvim: Nvim) -> None:
    from tests.nvim.test_chat import apply, create_shown, message
    from tests.nvim.test_chat_highlight import IDLE as CHAT_IDLE
    from tests.nvim.test_chat_highlight import groups_at

    create_shown(nvim)
    rows = [f"| {n} | **b** |" for n in range(3000)]
    apply(nvim, {"op": "add", "item": message("1", "agent", "| n | b |", "|---|---|", *rows)})
    nvim.wait(CHAT_IDLE, 30)
    # Over 2,000 rows: the table's delimiters, not the inline markup in its cells.
    groups = groups_at(nvim, rows[-1])
    assert "@punctuation.special.markdown" in groups, groups
    assert "@markup.strong.markdown_inline" not in groups, groups
    big = [f"| {n} | **b** |" for n in range(9000)]
    apply(nvim, {"op": "add", "item": message("2", "agent", "| m | b |", "|---|---|", *big)})
    nvim.wait(CHAT_IDLE, 30)
    # Over 8,000 rows: not parsed at all (its tree took the collector 40-80 ms to free).
    assert groups_at(nvim, big[-1]) == []

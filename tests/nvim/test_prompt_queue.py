"""The prompt queue and steering in a real Neovim with the scripted agent (tests/agents/scripted_agent.py): a
prompt sent while a turn runs is queued under the chat and goes when the turn ends, in order; :AcpQueue edits,
drops and reorders it; a cancel keeps it; steering goes into the running turn where the agent takes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import read_journal, start_scenario
from tests.nvim.conftest import Nvim

# A turn held open on a permission question the test answers when it wants the turn to end.
HELD = [{"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit"}}}, {"text": "first done"}]

QUEUE_LINES = """
_G.acp_test_queue = function()
local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]
local ns = vim.api.nvim_get_namespaces().acp_nvim_queue
local lines = {}
for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(chat.buf, ns, 0, -1, { details = true })) do
  for _, line in ipairs(mark[4].virt_lines or {}) do
    table.insert(lines, (line[1][1]))
  end
  -- Under the chat's last line, whatever was drawn since.
  assert(mark[2] == vim.api.nvim_buf_line_count(chat.buf) - 1, 'queue not under the last line')
end
return lines
end
"""


def queue_lines(nvim: Nvim) -> list[str]:
    return list(nvim.lua("return acp_test_queue()"))


def start(nvim: Nvim, tmp_path: Path, scenario: dict[str, Any]) -> None:
    start_scenario(nvim, tmp_path, scenario)
    nvim.lua(QUEUE_LINES)


def type_and(nvim: Nvim, text: str, keys: str) -> None:
    """Types `text` into the chat's prompt window and presses `keys` there (normal mode)."""
    nvim.lua(
        """
        local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]
        vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
        vim.cmd.stopinsert()
        vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, { ... })
        """,
        text,
    )
    nvim.api.feedkeys(nvim.api.replace_termcodes(keys, True, False, True), "x", False)


def prompts(journal: Path) -> list[str]:
    return [
        " ".join(block.get("text", "") for block in entry["params"]["prompt"] if block.get("type") == "text")
        for entry in read_journal(journal)
        if entry.get("kind") == "request" and entry["method"] == "session/prompt"
    ]


def hold_first(nvim: Nvim, tmp_path: Path) -> Path:
    """The scripted agent's turn of the prompt "first" runs, held on its permission question; its journal."""
    start(nvim, tmp_path, {"turns": [HELD], "echo": False})
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('first')")
    nvim.wait_state("awaiting_permission")
    return tmp_path / "journal.jsonl"


def requests(journal: Path, method: str) -> list[dict[str, Any]]:
    return [
        e["params"] for e in read_journal(journal) if e.get("kind") == "request" and e["method"] == method
    ]


def test_prompts_sent_during_a_turn_are_queued_reordered_and_sent_in_order_when_it_ends(
    nvim: Nvim, tmp_path: Path
) -> None:
    journal = hold_first(nvim, tmp_path)
    type_and(nvim, "second", "<CR>")
    # Handed over (the prompt window is empty), not refused: queued, and shown under the chat.
    assert nvim.api.current.buffer[:] == [""]
    type_and(nvim, "third", "<CR>")
    nvim.wait("#acp_test_queue() == 3", 15.0)
    assert queue_lines(nvim) == ["Queued (sent when the turn ends):", "  1. second", "  2. third"]
    nvim.api.command("AcpQueue up 2")
    nvim.wait("acp_test_queue()[2] == '  1. third'")
    assert prompts(journal) == ["first"]
    assert not [note for note in nvim.notes() if "still working" in note["msg"]]
    # The turn ends: the agent gets the queued prompts then, in their order; the queue is gone from the chat.
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait_chat("▍ You\nsecond")
    nvim.wait_state("ready")
    assert prompts(journal) == ["first", "third", "second"]
    assert queue_lines(nvim) == []
    text = nvim.chat_text()
    assert text.index("first done") < text.index("▍ You\nthird") < text.index("▍ You\nsecond")


def test_a_queued_prompt_is_edited_in_its_buffer_and_dropped(nvim: Nvim, tmp_path: Path) -> None:
    journal = hold_first(nvim, tmp_path)
    for text in ("keep me", "drop me"):
        nvim.lua("require('acp_nvim').prompt(...)", text)
    nvim.wait("#acp_test_queue() == 3")
    assert nvim.lua("return vim.fn.getcompletion('AcpQueue ', 'cmdline')") == [
        "list",
        "edit",
        "drop",
        "up",
        "down",
        "clear",
        "send",
    ]
    assert nvim.lua("return vim.fn.getcompletion('AcpQueue drop ', 'cmdline')") == ["1", "2"]
    nvim.api.command("AcpQueue drop 2")
    nvim.wait("#acp_test_queue() == 2")
    nvim.api.command("AcpQueue edit 1")
    assert nvim.api.current.buffer[:] == ["keep me"]
    assert nvim.api.current.buffer.name.startswith("acp://queue/")
    nvim.api.current.buffer[:] = ["keep me,", "edited"]
    nvim.api.command("write")
    nvim.wait("acp_test_queue()[2] == '  1. keep me, ↵ edited'")
    nvim.api.command("AcpQueue drop 5")
    assert nvim.notes()[-1]["msg"] == "acp.nvim: no queued prompt 5 (1 queued)"
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait_chat("▍ You\nkeep me,\nedited")
    nvim.wait_state("ready")
    assert prompts(journal) == ["first", "keep me,\nedited"]


def test_cancel_keeps_the_queue_until_it_is_sent(nvim: Nvim, tmp_path: Path) -> None:
    journal = hold_first(nvim, tmp_path)
    nvim.lua("require('acp_nvim').prompt('after the cancel')")
    nvim.wait("#acp_test_queue() == 2")
    nvim.api.command("AcpCancel")
    nvim.wait_state("ready")
    nvim.wait("acp_test_queue()[1] == 'Queued (held: :AcpQueue send sends the next):'")
    assert prompts(journal) == ["first"]
    assert queue_lines(nvim)[1:] == ["  1. after the cancel"]
    nvim.api.command("AcpQueue send")
    nvim.wait_chat("▍ You\nafter the cancel")
    nvim.wait_state("ready")
    assert prompts(journal) == ["first", "after the cancel"] and queue_lines(nvim) == []


STEERED = [[{"text": "working\n"}, {"until_steered": True}, {"text": " and done"}]]


def test_steering_sends_the_prompt_into_the_running_turn_where_the_agent_offers_it(
    nvim: Nvim, tmp_path: Path
) -> None:
    start(nvim, tmp_path, {"turns": STEERED, "echo": False, "meta": {"steering": {"supported": True}}})
    journal = tmp_path / "journal.jsonl"
    nvim.lua("require('acp_nvim').prompt('first')")
    nvim.wait_chat("working")
    type_and(nvim, "go left", "<M-CR>")
    nvim.wait_chat("steered: go left")
    nvim.wait_state("ready")
    # One turn: the steer went into it, through codex-acp's extension, and never as a prompt of its own.
    assert prompts(journal) == ["first"]
    (steer,) = requests(journal, "_session/steering")
    assert steer["prompt"] == [{"type": "text", "text": "go left"}]
    assert steer["_meta"] == {"steering": {"idleBehavior": "promptRequired"}}
    text = nvim.chat_text()
    # Where it went in: after what the agent had said, before what it said next.
    assert text.index("working") < text.index("Sent into the running turn:") < text.index("▍ You\ngo left")
    assert text.index("▍ You\ngo left") < text.index("steered: go left")
    assert queue_lines(nvim) == []


def test_an_agent_without_steering_is_offered_none_and_the_prompt_waits_its_turn(
    nvim: Nvim, tmp_path: Path
) -> None:
    journal = hold_first(nvim, tmp_path)
    type_and(nvim, "go left", "<M-CR>")
    nvim.wait("#acp_test_queue() == 2")
    assert queue_lines(nvim) == ["Queued (sent when the turn ends):", "  1. go left"]
    nvim.wait("#acp_test.notes > 0 and acp_test.notes[#acp_test.notes].msg:find('cannot be steered') ~= nil")
    assert "steer" not in nvim.lua("return vim.fn.getcompletion('AcpQueue ', 'cmdline')")
    assert requests(journal, "_session/steering") == []
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait_chat("▍ You\ngo left")
    nvim.wait_state("ready")
    assert prompts(journal) == ["first", "go left"]

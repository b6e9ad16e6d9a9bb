"""A streamed agent message stays one message in the chat, whatever updates arrive between its chunks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_nvim.app.chat.line_breaks import LONG_LINE_CHARS
from tests.nvim.agent_io import start_scenario
from tests.nvim.conftest import Nvim


def model_options(current: str) -> list[dict[str, Any]]:
    choices = [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}]
    return [{"id": "model", "name": "Model", "type": "select", "currentValue": current, "options": choices}]


# Updates an agent sends whenever something changes, also in the middle of a sentence (codex-acp sends its
# commands right after the session opens, while the first reply may already be streaming).
INTERRUPTIONS: dict[str, list[dict[str, Any]]] = {
    "available_commands_update": [
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "review", "description": "Review the diff"}],
        }
    ],
    "current_mode_update": [{"sessionUpdate": "current_mode_update", "currentModeId": "code"}],
    "usage_update": [{"sessionUpdate": "usage_update", "used": 5000, "size": 100000}],
    "plan": [
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "Say hello", "priority": "high", "status": "pending"}],
        }
    ],
    "config_option_update": [{"sessionUpdate": "config_option_update", "configOptions": model_options("b")}],
    "session_info_update": [{"sessionUpdate": "session_info_update", "title": "Greeting"}],
}


def start(nvim: Nvim, tmp_path: Path, turn: list[dict[str, Any]]) -> None:
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Scripted", "version": "1.0"},
        "echo": False,
        "session": {
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            },
            # The update to "b" is then a change, which the chat announces.
            "configOptions": model_options("a"),
        },
        "turns": [turn],
    }
    start_scenario(nvim, tmp_path, scenario)


@pytest.mark.parametrize("kind", list(INTERRUPTIONS))
def test_an_update_in_the_middle_of_a_message_does_not_split_it(
    nvim: Nvim, tmp_path: Path, kind: str
) -> None:
    turn = [
        {"text": "Hello from the "},
        *({"update": update} for update in INTERRUPTIONS[kind]),
        {"text": "split agent."},
    ]
    start(nvim, tmp_path, turn)
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("split agent.")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    assert "▍ Scripted\nHello from the split agent." in text, text
    assert text.count("▍ Scripted") == 1, text
    assert not nvim.errors()


def test_a_tool_call_between_chunks_still_starts_a_new_message(nvim: Nvim, tmp_path: Path) -> None:
    turn = [
        {"text": "Let me look."},
        {"update": {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read a.txt", "kind": "read"}},
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}},
        {"text": "Found it."},
    ]
    start(nvim, tmp_path, turn)
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("Found it.")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    first, tool, second = (
        text.find("Let me look."),
        text.find("Read a.txt"),
        text.find("completed\n\nFound it."),
    )
    assert 0 <= first < tool < second, text
    # One reply: the tool call and the message after it are under its one header.
    assert text.count("▍ Scripted") == 1, text


def test_a_paragraph_streamed_past_a_long_line_goes_on_on_new_lines_and_code_keeps_its_own(
    nvim: Nvim, tmp_path: Path
) -> None:
    """Neovim measures a wrapped line whole on every redraw: one of 700 KB made each frame of a stream cost
    milliseconds. The chat goes on on a new line before the first word past LONG_LINE_CHARS (the same
    paragraph in markdown), so the window keeps 'linebreak' and its word wrapping; code is never broken."""
    words = [f"word{n} " for n in range(3_000)]  # ~29,000 characters of one paragraph
    code = "x = 1; " * 2_000
    turn = [*({"text": word} for word in words), {"text": f"\n\n```lua\n{code}\n```\nThe end."}]
    start(nvim, tmp_path, turn)
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("The end.")
    nvim.wait_state("ready")
    lines = nvim.chat_lines()
    first = next(index for index, line in enumerate(lines) if line.startswith("word0 "))
    end = lines.index("", first)
    paragraph = lines[first:end]
    assert len(paragraph) == 4, [len(line) for line in paragraph]
    assert all(LONG_LINE_CHARS <= len(line) <= LONG_LINE_CHARS + len("word2999 ") for line in paragraph[:-1])
    assert "".join(paragraph) == "".join(words)  # each line keeps the space before the next one's word
    assert lines[end + 1 : end + 5] == ["```lua", code, "```", "The end."]
    linebreak = "return vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]].linebreak"
    assert nvim.lua(linebreak, nvim.status()["session_id"]) is True

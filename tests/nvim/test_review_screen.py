"""What a person sees of the review that goes back to the agent, in a real terminal UI (tmux): the comment and
the rejection's reason typed at Neovim's own prompts, shown beside the lines, and the prompt they make."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.nvim.test_screen import prompting_init, pytestmark, start_nvim, wait_screen

__all__ = ["pytestmark"]

CHANGED = 'print("hello, world")\nprint("bye")\n'


@pytest.fixture
def tmux() -> Iterator[str]:
    name = f"acp-nvim-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def send(tmux: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)


def test_a_comment_and_a_reason_typed_show_on_their_line_and_go_into_the_prompt(
    tmux: str, tmp_path: Path
) -> None:
    turn = [{"write": {"path": "${CWD}/hello.py", "content": CHANGED}}, {"text": "Changed the greeting."}]
    scenario = {"agentInfo": {"name": "scripted", "title": "Screen Agent"}, "echo": False, "turns": [turn]}
    init = prompting_init(tmp_path, scenario, chat_width=70)
    start_nvim(tmux, tmp_path, init, "hello.py", size=(160, 50))
    wait_screen(tmux, ["Changed the greeting.", "screen ready"])

    send(tmux, ":AcpReview", "Enter")
    send(tmux, ":cfirst", "Enter")
    # The comment key asks with Neovim's own prompt; the comment shows at the end of the hunk's first line.
    send(tmux, "\\am")
    wait_screen(tmux, ["Comment on hello.py:1-2:"])
    send(tmux, "-l", "say hello to the user")
    send(tmux, "Enter")
    screen = wait_screen(tmux, ["💬 say hello to the user"])
    line = next(row for row in screen.splitlines() if "💬 say hello to the user" in row)
    assert 'print("hello, world")' in line

    # The reject key asks for a reason; the old line is back with the comment and the reason beside it.
    send(tmux, "\\ar")
    wait_screen(tmux, ["Reason for rejecting (optional):"])
    send(tmux, "-l", "keep the old greeting")
    send(tmux, "Enter")
    screen = wait_screen(tmux, ["✗ rejected: keep the old greeting"])
    line = next(row for row in screen.splitlines() if "keep the old greeting" in row)
    assert 'print("hello")' in line and "💬 say hello to the user" in line

    send(tmux, ":AcpReview send", "Enter")
    wait_screen(
        tmux,
        [
            "Here is my review of your changes.",
            # The comment's lines are the old one put back in their place.
            "hello.py:1: say hello to the user",
            "hello.py:1: rejected (the old lines are back): keep the old greeting",
            '-print("hello")',
            "attached: hello.py:1",
        ],
    )

"""The prompt window on screen (tmux): its winbar names the keys that send in the mode the user is in."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.nvim.agent_io import scripted_config
from tests.nvim.test_screen import plain_init, start_nvim, tmux, wait_screen

__all__ = ["tmux"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def shown(keys: str) -> str:
    """A winbar's text as drawn: key names between single angle quotation marks."""
    return keys.replace("<", "\u2039").replace(">", "\u203a")


def winbar(screen: str) -> str:
    return next(line for line in screen.splitlines() if "Prompt: " in line).split("\u2502")[-1].strip()


@pytest.mark.parametrize(
    ("keymaps", "insert", "normal"),
    [
        (
            "",
            "Prompt: <C-s> send, / commands, @ files",
            "Prompt: <CR> send, <Up>/<Down> history, <C-c> cancel",
        ),
        (
            'keymaps = { send = "<Leader>s", send_insert = "<C-g>" },',
            "Prompt: <C-g> send, / commands, @ files",
            "Prompt: <Leader>s send, <Up>/<Down> history, <C-c> cancel",
        ),
    ],
    ids=["defaults", "mapped"],
)
def test_the_prompt_winbar_names_the_send_key_of_the_mode(
    tmux: str, tmp_path: Path, keymaps: str, insert: str, normal: str
) -> None:
    """The prompt opens in Insert mode, where `<CR>` is a new line: the winbar names `send_insert`; in Normal
    mode `send` and the history; back in Insert mode `send_insert` again."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"agentInfo": {"name": "s", "title": "Screen Agent", "version": "1"}}))
    agent = json.dumps(json.dumps(scripted_config(scenario)))
    init = plain_init(
        tmp_path,
        f'default_agent = "s", agents = {{ s = vim.json.decode({agent}) }}, {keymaps}',
        'vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.cmd("AcpStart")'
        " end })",
    )
    insert, normal = shown(insert), shown(normal)
    start_nvim(tmux, tmp_path, init, "", size=(140, 40))
    # The chat opens with the session, the cursor where it was: Normal mode.
    screen = wait_screen(tmux, ["Prompt: ", "acp://s/sess-1/prompt"])
    assert winbar(screen) == normal, screen
    # :AcpChat focuses the prompt in Insert mode.
    subprocess.run(["tmux", "send-keys", "-t", tmux, ":AcpChat", "Enter"], check=True)
    screen = wait_screen(tmux, ["-- INSERT --", insert])
    assert winbar(screen) == insert, screen
    subprocess.run(["tmux", "send-keys", "-t", tmux, "Escape"], check=True)
    screen = wait_screen(tmux, [normal])
    assert "-- INSERT --" not in screen
    subprocess.run(["tmux", "send-keys", "-t", tmux, "A"], check=True)
    screen = wait_screen(tmux, ["-- INSERT --", insert])


def test_the_prompt_winbar_names_the_steer_key_while_the_turn_takes_one(tmux: str, tmp_path: Path) -> None:
    """A prompt queued while a turn of an agent that takes steering runs: the winbar names the steer key;
    once the queue has gone, it no longer does."""
    turns = [
        [{"text": "working\n"}, {"until_steered": True}, {"text": " and done"}],
        [{"text": "second done"}],
    ]
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps({"echo": False, "turns": turns, "meta": {"steering": {"supported": True}}})
    )
    agent = json.dumps(json.dumps(scripted_config(scenario)))
    init = plain_init(
        tmp_path,
        f'default_agent = "s", agents = {{ s = vim.json.decode({agent}) }},',
        'vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.cmd("AcpStart")'
        " end })",
    )
    start_nvim(tmux, tmp_path, init, "", size=(140, 40))
    wait_screen(tmux, ["Prompt: ", "acp://s/sess-1/prompt"])
    plain = shown("Prompt: <C-s> send, / commands, @ files")
    keys = [":AcpChat", "Enter", "first", "C-s"]
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)
    wait_screen(tmux, ["working", plain])
    subprocess.run(["tmux", "send-keys", "-t", tmux, "second", "C-s"], check=True)
    screen = wait_screen(tmux, ["Queued", shown("Prompt: <C-s> send, <M-CR> steer, / commands, @ files")])
    subprocess.run(["tmux", "send-keys", "-t", tmux, "go left", "M-Enter"], check=True)
    screen = wait_screen(tmux, ["steered: go left", "second done"])
    assert winbar(screen) == plain, screen

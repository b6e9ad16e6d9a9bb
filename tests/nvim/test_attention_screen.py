"""The terminal's notification (`opts.attention.notify = "osc9" | "osc777"`), as Neovim writes it to the
terminal it runs in: inside tmux, wrapped as a passthrough (tmux's `allow-passthrough` lets it out)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.harness import wait_until
from tests.nvim.agent_io import scripted_config
from tests.nvim.test_screen import plain_init, start_nvim, tmux, wait_screen

__all__ = ["tmux"]  # the fixture, used by name

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

STATUSLINE = """
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{v:lua.require'acp_nvim'.statusline()}"
vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.cmd("AcpStart") end })
"""


@pytest.mark.parametrize(
    ("how", "sequence"),
    [
        ("osc9", b"\x1bPtmux;\x1b\x1b]9;s: turn ended\x07\x1b\\"),
        ("osc777", b"\x1bPtmux;\x1b\x1b]777;notify;acp.nvim;s: turn ended\x07\x1b\\"),
    ],
)
def test_a_turn_ending_in_a_hidden_chat_tells_the_terminal(
    tmux: str, tmp_path: Path, how: str, sequence: bytes
) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"echo": False, "turns": [[{"text": "done"}]]}))
    agent = json.dumps(json.dumps(scripted_config(scenario)))
    options = (
        f'default_agent = "s", agents = {{ s = vim.json.decode({agent}) }},'
        f' chat = {{ open_on_start = false }}, attention = {{ notify = "{how}" }},'
    )
    start_nvim(tmux, tmp_path, plain_init(tmp_path, options, STATUSLINE), "", size=(120, 30))
    written = tmp_path / "written"
    subprocess.run(["tmux", "pipe-pane", "-O", "-t", tmux, f"cat >> {written}"], check=True)
    wait_screen(tmux, ["s ready"])
    subprocess.run(["tmux", "send-keys", "-t", tmux, ":AcpPrompt hi", "Enter"], check=True)
    wait_until(lambda: written.exists() and sequence in written.read_bytes(), 20, "the OSC notification")
    # Once: the chat is hidden, the turn ended once.
    assert written.read_bytes().count(sequence) == 1

"""What a person sees of the plugin's marks and windows in a real terminal UI (tmux)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.conftest import ROOT
from tests.nvim.test_screen import pytestmark, start_nvim, wait_screen

__all__ = ["pytestmark"]


@pytest.fixture
def tmux() -> Iterator[str]:
    name = f"acp-nvim-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def plain_init(tmp_path: Path, extra: str = "") -> Path:
    init = tmp_path / "init.lua"
    init.write_text(
        f"""
vim.opt.runtimepath:prepend({json.dumps(str(ROOT))})
require("acp_nvim").setup({{
  python = {json.dumps(sys.executable)},
  log = {{ file = {json.dumps(str(tmp_path / "acp.log"))} }},
}})
{extra}
"""
    )
    return init


def attach(tmux: str, socket: Path) -> Any:
    wait_screen(tmux, ["~"])
    return pynvim.attach("socket", path=str(socket))


def sign_column(screen: str, text: str) -> str:
    """The two sign cells of the screen line that shows `text`."""
    line = next(line for line in screen.splitlines() if line.rstrip().endswith(text))
    return line[:2]


def test_review_signs_mark_exactly_the_changed_lines(tmux: str, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 13)))
    socket = tmp_path / "nvim.sock"
    start_nvim(tmux, tmp_path, plain_init(tmp_path), f"--listen {socket} a.txt", size=(80, 30))
    nvim = attach(tmux, socket)
    try:
        changed = [f"line {i}" for i in range(1, 13)]
        changed[1] = "CHANGED 2"
        changed.insert(8, "ADDED")  # a new line between line 8 and line 9
        res = nvim.exec_lua(
            'return require("acp_nvim.editor.fs").write(...)',
            str(f),
            "\n".join(changed) + "\n",
            {"session_id": "s1"},
        )
        assert res["ok"] is True, res
        # The sign marks span exactly the hunks' lines (0-based rows, end row included).
        spans = nvim.exec_lua(
            "local out = {}\n"
            "local opts = { details = true, type = 'sign' }\n"
            "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, -1, 0, -1, opts)) do\n"
            "  out[#out + 1] = { m[2], m[4].end_row or m[2], vim.trim(m[4].sign_text) }\n"
            "end\n"
            "table.sort(out, function(a, b) return a[1] < b[1] end)\n"
            "return out"
        )
        assert spans == [[1, 1, "~"], [8, 8, "+"]]
    finally:
        nvim.close()
    screen = wait_screen(tmux, ["CHANGED 2", "ADDED"])
    assert sign_column(screen, "CHANGED 2") == "~ "
    assert sign_column(screen, "ADDED") == "+ "
    for unchanged in ("line 1", "line 3", "line 8", "line 9", "line 10"):
        assert sign_column(screen, unchanged) == "  ", screen

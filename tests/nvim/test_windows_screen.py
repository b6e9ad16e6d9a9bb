"""What a person sees of the plugin's marks and windows in a real terminal UI (tmux)."""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from bench.harness import wait_until
from tests.nvim.agent_io import scripted_config
from tests.nvim.test_screen import capture, plain_init, pytestmark, start_nvim, wait_screen

__all__ = ["pytestmark"]


@pytest.fixture
def tmux() -> Iterator[str]:
    name = f"acp-nvim-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


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
        screen = wait_screen(tmux, ["CHANGED 2", "ADDED"])
        assert sign_column(screen, "CHANGED 2") == "~ "
        assert sign_column(screen, "ADDED") == "+ "
        for unchanged in ("line 1", "line 3", "line 8", "line 9", "line 10"):
            assert sign_column(screen, unchanged) == "  ", screen
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


def agent_init(tmp_path: Path) -> Path:
    """Neovim on hello.py with the scripted agent started at once: the chat and its prompt open beside it."""
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"agentInfo": {"name": "scripted", "title": "Quit Agent"}, "echo": False}))
    (tmp_path / "hello.py").write_text('print("hello")\n')
    agent = scripted_config(scenario)
    options = f"""
  default_agent = "quit",
  agents = {{ quit = vim.json.decode({json.dumps(json.dumps(agent))}) }},
  chat = {{ width = 60 }},
"""
    start = 'vim.api.nvim_create_autocmd("VimEnter", { once = true, command = "AcpStart" })'
    # For the tests' keys: the current chat's window and prompt buffer.
    helpers = """
function _G.acp_chat() local c = require("acp_nvim.ui.chat"); return c.chats[c.current] end
"""
    return plain_init(tmp_path, options, start + helpers)


def wait_until_screen(tmux: str, condition: Callable[[str], bool], timeout: float = 15.0) -> str:
    screens: list[str] = []

    def seen() -> bool:
        screens.append(capture(tmux))
        return condition(screens[-1])

    wait_until(seen, timeout, "the screen")
    return screens[-1]


def keys(tmux: str, *keys: str) -> None:
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)


def alive(tmux: str) -> bool:
    return subprocess.run(["tmux", "has-session", "-t", tmux], capture_output=True).returncode == 0


def start_with_chat(tmux: str, tmp_path: Path) -> str:
    start_nvim(tmux, tmp_path, agent_init(tmp_path), "hello.py", size=(140, 30))
    # The chat and the prompt are open; the cursor stays in the file.
    return wait_screen(tmux, ["acp://quit/", "Prompt:", 'print("hello")'])


def test_quitting_the_last_file_window_quits_neovim(tmux: str, tmp_path: Path) -> None:
    start_with_chat(tmux, tmp_path)
    keys(tmux, ":q", "Enter")
    wait_until(lambda: not alive(tmux), 15, "Neovim to quit with its last file window")
    log = (tmp_path / "acp.log").read_text()
    # The agent ended as on :qa: routinely.
    assert "ended: Neovim is quitting" in log and "WARNING" not in log, log


def test_quitting_the_chat_takes_its_prompt_and_leaves_the_file(tmux: str, tmp_path: Path) -> None:
    start_with_chat(tmux, tmp_path)
    keys(tmux, ":lua vim.api.nvim_set_current_win(vim.fn.win_findbuf(acp_chat().buf)[1])", "Enter")
    keys(tmux, ":q", "Enter")
    screen = wait_until_screen(tmux, lambda s: "Prompt:" not in s and "acp://quit/" not in s)
    assert 'print("hello")' in screen
    assert alive(tmux)


def test_a_prompt_with_text_not_sent_keeps_neovim_open(tmux: str, tmp_path: Path) -> None:
    start_with_chat(tmux, tmp_path)
    keys(
        tmux,
        ":lua vim.api.nvim_buf_set_lines(acp_chat().prompt_buf, 0, -1, false, {'half a thought'})",
        "Enter",
    )
    keys(tmux, ":q", "Enter")
    screen = wait_screen(tmux, ["the prompt holds text not sent", "half a thought", "acp://quit/"])
    assert alive(tmux), screen


def test_unsaved_changes_keep_neovim_open_and_say_so(tmux: str, tmp_path: Path) -> None:
    start_with_chat(tmux, tmp_path)
    keys(tmux, "A", " # unsaved", "Escape")
    wait_screen(tmux, ['print("hello") # unsaved'])
    keys(tmux, ":q", "Enter")
    # Neovim stays, says why, and shows the unsaved text again beside the chat.
    screen = wait_screen(tmux, ["No write since last change", 'print("hello") # unsaved', "acp://quit/"])
    assert alive(tmux), screen
    assert (tmp_path / "hello.py").read_text() == 'print("hello")\n'


def test_always_allow_in_the_picker_and_the_next_request_allowed_on_screen(tmux: str, tmp_path: Path) -> None:
    """The built-in vim.ui.select in a real UI: the "always allow" choices, then the chat's note."""

    def edit(call: str, name: str) -> dict[str, Any]:
        path = "${CWD}/" + name
        tool_call = {
            "toolCallId": call,
            "title": f"Edit {name}",
            "kind": "edit",
            "locations": [{"path": path}],
        }
        return {"permission": {"toolCall": tool_call}}

    scenario = tmp_path / "scenario.json"
    turns = [[edit("e1", "a.py"), {"text": "first done"}], [edit("e2", "b.py"), {"text": "second done"}]]
    scenario.write_text(json.dumps({"agentInfo": {"name": "scripted"}, "echo": False, "turns": turns}))
    options = f"""
  default_agent = "perm",
  agents = {{ perm = vim.json.decode({json.dumps(json.dumps(scripted_config(scenario)))}) }},
  chat = {{ width = 90 }},
"""
    start = 'vim.api.nvim_create_autocmd("VimEnter", { once = true, command = "AcpStart" })'
    statusline = "vim.o.statusline = \"%f %= %{v:lua.require'acp_nvim'.statusline()}\"\n"
    init = plain_init(tmp_path, options, statusline + start)
    (tmp_path / "a.py").write_text("a\n")
    start_nvim(tmux, tmp_path, init, "a.py", size=(160, 40))
    wait_screen(tmux, ["Prompt:", "perm ready"])
    keys(tmux, ":AcpPrompt edit a", "Enter")
    screen = wait_screen(
        tmux, ["Allow edit: Edit a.py?", "Always allow edit in this session (acp.nvim remembers it)"]
    )
    number = next(
        line.split(":")[0].strip()
        for line in screen.splitlines()
        if "Always allow edit in this session" in line
    )
    keys(tmux, number, "Enter")
    wait_screen(tmux, ["first done"])
    keys(tmux, ":AcpPrompt edit b", "Enter")
    screen = wait_screen(tmux, ["second done", "✓ allowed by the session rule: always allow edit"])
    assert "Allow edit: Edit b.py?" not in screen

"""What a person sees: Neovim in a real terminal (tmux), the chat drawn next to the code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pynvim
import pytest

from bench.harness import wait_until
from tests.conftest import NVIM, ROOT, process_alive
from tests.nvim.agent_io import scripted_config

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

TURN = [
    {"text": "Sure, I will look at the greeting code."},
    {
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read hello.py", "priority": "high", "status": "completed"},
                {"content": "Improve the greeting", "priority": "medium", "status": "in_progress"},
            ],
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "r1",
            "title": "Read hello.py",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": "/project/hello.py", "line": 1}],
        }
    },
    {"text": "The greeting is fine."},
]


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[str]:
    name = f"acp-nvim-{uuid.uuid4().hex[:8]}"
    yield name
    subprocess.run(["tmux", "kill-session", "-t", name], check=False, capture_output=True)


def capture(name: str) -> str:
    return subprocess.run(
        ["tmux", "capture-pane", "-p", "-t", name], check=True, capture_output=True, text=True
    ).stdout


def wait_screen(name: str, texts: list[str], timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    screen = ""
    while time.monotonic() < deadline:
        screen = capture(name)
        if all(text in screen for text in texts):
            return screen
        time.sleep(0.1)  # polling the terminal: there is no event to wait on from outside
    raise AssertionError(f"not all of {texts} on screen after {timeout} s:\n{screen}")


def start_nvim(tmux: str, tmp_path: Path, init: Path, args: str, size: tuple[int, int]) -> None:
    """Neovim with `init` in a new tmux session of `size` (columns, lines), its state kept in `tmp_path`."""
    env = {
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    exports = " ".join(f"{key}={value}" for key, value in env.items())
    command = f"cd {tmp_path} && env {exports} TERM=xterm-256color {NVIM} --clean -u {init} {args}"
    width, height = size
    subprocess.run(
        ["tmux", "new-session", "-d", "-x", str(width), "-y", str(height), "-s", tmux, command], check=True
    )


def plain_init(tmp_path: Path, options: str = "", extra: str = "") -> Path:
    """An init.lua with the plugin, its host on this interpreter, its log in `tmp_path`, `options` given to
    setup() (Lua table fields) and `extra` Lua after it."""
    init = tmp_path / "init.lua"
    init.write_text(
        f"""
vim.opt.runtimepath:prepend({json.dumps(str(ROOT))})
require("acp_nvim").setup({{
  python = {json.dumps(sys.executable)},
  log = {{ file = {json.dumps(str(tmp_path / "acp.log"))} }},
  {options}
}})
{extra}
"""
    )
    return init


def prompting_init(tmp_path: Path, scenario: dict[str, Any], chat_width: int, prompt: bool = True) -> Path:
    """An init.lua that starts the scripted agent of `scenario` and (`prompt`) sends one prompt once it is
    ready, the statusline showing acp.nvim's, beside hello.py."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    (tmp_path / "hello.py").write_text('print("hello")\n')
    init = tmp_path / "init.lua"
    agent = scripted_config(path)
    init.write_text(
        f"""
vim.opt.runtimepath:prepend({json.dumps(str(ROOT))})
vim.o.laststatus = 2
vim.o.statusline = "%f %= %{{v:lua.require'acp_nvim'.statusline()}}"
require("acp_nvim").setup({{
  python = {json.dumps(sys.executable)},
  log = {{ file = {json.dumps(str(tmp_path / "acp.log"))} }},
  default_agent = "screen",
  agents = {{ screen = vim.json.decode({json.dumps(json.dumps(agent))}) }},
  chat = {{ width = {chat_width} }},
}})
local prompted = false
vim.api.nvim_create_autocmd("User", {{
  pattern = "AcpNvimStatus",
  callback = function(ev)
    if ev.data.state == "ready" and not prompted and {json.dumps(prompt)} then
      prompted = true
      vim.schedule(function() vim.cmd("AcpPrompt improve the greeting") end)
    end
  end,
}})
vim.api.nvim_create_autocmd("VimEnter", {{ once = true, callback = function() vim.cmd("AcpStart") end }})
"""
    )
    return init


def test_chat_on_screen(tmux: str, tmp_path: Path) -> None:
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Screen Agent", "version": "3.1"},
        "echo": False,
        "turns": [TURN],
    }
    init = prompting_init(tmp_path, scenario, chat_width=70)
    start_nvim(tmux, tmp_path, init, "hello.py", size=(120, 40))
    screen = wait_screen(
        tmux,
        [
            "Sure, I will look at the greeting code.",
            "  Plan",
            "[x] Read hello.py",
            "[~] Improve the greeting",
            "✓ Read hello.py  read  completed",
            "The greeting is fine.",
            "Screen Agent 3.1 ready",
        ],
    )
    # The code stays on the left, the chat on the right.
    code_line = next(line for line in screen.splitlines() if 'print("hello")' in line)
    chat_line = next(line for line in screen.splitlines() if "The greeting is fine." in line)
    assert code_line.index('print("hello")') < 10
    assert chat_line.index("The greeting is fine.") > 40


def test_host_prestarts_in_a_terminal_ui_and_ends_with_neovim(tmux: str, tmp_path: Path) -> None:
    """With the default options, Neovim in a terminal starts the host by itself, before any command; quitting
    Neovim ends it."""

    socket = tmp_path / "nvim.sock"
    init = plain_init(tmp_path)
    start_nvim(tmux, tmp_path, init, f"--listen {socket}", size=(100, 30))
    wait_screen(tmux, ["~"])
    nvim = pynvim.attach("socket", path=str(socket))
    try:
        ok = nvim.exec_lua(
            "return vim.wait(20000, function() return require('acp_nvim.host').is_ready() end, 20)"
        )
        assert ok, "the host did not prestart"
        pid = int(nvim.exec_lua("return require('acp_nvim.host').info().pid"))
        assert nvim.exec_lua("return require('acp_nvim').status().state") == "stopped"  # no agent was started
    finally:
        nvim.close()
    assert process_alive(pid)
    subprocess.run(["tmux", "send-keys", "-t", tmux, ":qa!", "Enter"], check=True)
    # The host is not our child: /proc is all there is to watch.
    wait_until(lambda: not process_alive(pid), 15, "the host to end with Neovim")


CONVERSATION_TURN = [
    {"thought": "The user wants a better greeting.\nI should read the file first."},
    {"text": "I will read the code first.\n\n"},
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "r1",
            "title": "Read hello.py",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": "/project/hello.py", "line": 1}],
            "content": [{"type": "content", "content": {"type": "text", "text": 'print("hello")'}}],
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit hello.py",
            "kind": "edit",
            "status": "completed",
            "content": [
                {
                    "type": "diff",
                    "path": "/project/hello.py",
                    "oldText": 'print("hello")\n',
                    "newText": 'print("hello, world")\n',
                }
            ],
        }
    },
    {"text": "\n\nThe greeting now names the world.\n\n"},
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "x1",
            "title": "Run the tests",
            "kind": "execute",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "1 passed"}}],
        }
    },
    {"text": "All tests pass."},
]

MODES = {
    "currentModeId": "ask",
    "availableModes": [{"id": "ask", "name": "Ask first"}, {"id": "code", "name": "Code"}],
}
MODEL = {
    "id": "model",
    "name": "Model",
    "category": "model",
    "type": "select",
    "currentValue": "m-fast-2",
    "options": [{"value": "m-fast-2", "name": "Fast Model"}, {"value": "m-big-1", "name": "Big Model"}],
}


def chat_column(screen: str, start: int) -> list[str]:
    """The chat window's rows of the screen (right of the split at column `start`), right-trimmed."""
    return [line[start:].rstrip() for line in screen.splitlines()]


def test_a_reply_reads_as_one_conversation_on_screen(tmux: str, tmp_path: Path) -> None:
    """One header for the agent's reply; its thought folded to one line; each tool call one line, stacked, its
    details folded until <CR>; one blank line between blocks; the mode and model by name."""
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Screen Agent", "version": "3.1"},
        "echo": False,
        "session": {"modes": MODES, "configOptions": [MODEL]},
        "turns": [CONVERSATION_TURN],
    }
    init = prompting_init(tmp_path, scenario, chat_width=100)
    start_nvim(tmux, tmp_path, init, "hello.py", size=(200, 50))
    screen = wait_screen(tmux, ["All tests pass.", "Screen Agent 3.1 ready"])
    start = next(line for line in screen.splitlines() if "improve the greeting" in line).index("│") + 1
    rows = chat_column(screen, start)
    first = rows.index("▍ You")
    chat = rows[first : rows.index("All tests pass.") + 1]
    assert chat == [
        "▍ You",
        "improve the greeting",
        "",
        "▍ Screen Agent",
        "  Thinking  ▸ 2 lines",
        "",
        "I will read the code first.",
        "",
        "  ✓ Read hello.py  read  completed  ▸ 2 lines",
        "  ✓ Edit hello.py  edit  completed  ▸ 5 lines",
        "",
        "The greeting now names the world.",
        "",
        "  ✓ Run the tests  execute  completed  ▸ 1 line",
        "",
        "All tests pass.",
    ], "\n".join(rows)
    # Names, not ids: the winbar and the statusline.
    assert "mode: Ask first │ model: Fast Model" in rows[0]
    assert "Screen Agent 3.1 ready · Ask first · Fast Model" in screen
    assert "m-fast-2" not in screen and "· ask" not in screen
    # <CR> on a tool call opens its details.
    keys = [":wincmd l", "Enter", ":call search('Edit hello.py')", "Enter", "Enter"]
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)
    screen = wait_screen(tmux, ['+print("hello, world")'])
    rows = chat_column(screen, start)
    edit = rows.index("  ✓ Edit hello.py  edit  completed")
    assert rows[edit + 1 : edit + 6] == [
        "    --- /project/hello.py",
        "    +++ /project/hello.py",
        "    @@ -1 +1 @@",
        '    -print("hello")',
        '    +print("hello, world")',
    ]
    assert rows[edit - 1] == "  ✓ Read hello.py  read  completed  ▸ 2 lines"  # the other stays closed


def test_what_arrives_while_typing_in_insert_mode_is_folded_when_it_ends(tmux: str, tmp_path: Path) -> None:
    """Neovim updates no folds in Insert mode: a reply that arrives while the user types the next prompt is
    folded (and the chat's view with it) as soon as Insert mode ends."""
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Screen Agent", "version": "3.1"},
        "echo": False,
        "turns": [CONVERSATION_TURN],
    }
    init = prompting_init(tmp_path, scenario, chat_width=100, prompt=False)
    start_nvim(tmux, tmp_path, init, "hello.py", size=(200, 50))
    wait_screen(tmux, ["Screen Agent 3.1 ready"])
    keys = [":AcpChat", "Enter", "improve the greeting", "C-s", "and then"]
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)
    screen = wait_screen(tmux, ["All tests pass.", "-- INSERT --", "and then"])
    assert "I should read the file first." in screen  # not folded yet
    subprocess.run(["tmux", "send-keys", "-t", tmux, "Escape"], check=True)
    screen = wait_screen(tmux, ["  Thinking  ▸ 2 lines", "  ✓ Edit hello.py  edit  completed  ▸ 5 lines"])
    assert "I should read the file first." not in screen and "+print(" not in screen


def test_a_tool_call_opened_stays_open_when_the_chat_is_closed_and_opened_again(
    tmux: str, tmp_path: Path
) -> None:
    """The user opens a tool call's details with <CR>, closes the chat window and opens the chat again with
    :AcpChat: the details are still open, the rest still folded; the next turn's tool call is folded."""
    again = {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "x2",
            "title": "Run the tests again",
            "kind": "execute",
            "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "2 passed"}}],
        }
    }
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Screen Agent", "version": "3.1"},
        "echo": False,
        "turns": [CONVERSATION_TURN, [again, {"text": "Still green."}]],
    }
    init = prompting_init(tmp_path, scenario, chat_width=100, prompt=False)
    start_nvim(tmux, tmp_path, init, "hello.py", size=(200, 50))
    wait_screen(tmux, ["Screen Agent 3.1 ready"])
    keys = [":AcpChat", "Enter", "improve the greeting", "C-s", "Escape"]
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)
    wait_screen(tmux, ["All tests pass.", "  ✓ Edit hello.py  edit  completed  ▸ 5 lines"])
    keys = ["C-w", "k", ":call search('Edit hello.py')", "Enter", "Enter"]
    subprocess.run(["tmux", "send-keys", "-t", tmux, *keys], check=True)
    wait_screen(tmux, ['+print("hello, world")'])
    subprocess.run(["tmux", "send-keys", "-t", tmux, ":close", "Enter"], check=True)
    wait_until(lambda: "All tests pass." not in capture(tmux), 10, "the chat window to close")
    subprocess.run(["tmux", "send-keys", "-t", tmux, ":AcpChat", "Enter"], check=True)
    folded = ["  Thinking  ▸ 2 lines", "  ✓ Read hello.py  read  completed  ▸ 2 lines"]
    screen = wait_screen(tmux, ["All tests pass.", '+print("hello, world")', *folded])
    assert "  ✓ Run the tests  execute  completed  ▸ 1 line" in screen
    subprocess.run(["tmux", "send-keys", "-t", tmux, "once more", "C-s"], check=True)
    wait_screen(tmux, ["Still green."])
    # Open while the user is still typing (Insert mode), folded when it ends.
    subprocess.run(["tmux", "send-keys", "-t", tmux, "Escape"], check=True)
    screen = wait_screen(tmux, ["  ✓ Run the tests again  execute  completed  ▸ 1 line"])
    assert '+print("hello, world")' in screen and all(text in screen for text in folded)

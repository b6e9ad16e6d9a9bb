"""terminal/* through the full stack: the scripted SDK agent runs commands in Neovim PTY terminals; the chat
shows an embedded terminal's output live; nothing outlives :AcpStop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_nvim.app.editor.terminal_rules import keep_tail
from tests.nvim.agent_io import Scripted, error, result
from tests.nvim.conftest import Nvim


def calls(answers: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [a for a in answers if a["call"] == name]


def test_output_exit_code_signal_and_limit(nvim: Nvim, agent: Scripted, project: Path) -> None:
    steps = [
        {
            "terminal": {
                "command": "sh",
                "args": ["-c", 'printf "hello %s in %s\\n" "$GREETING" "$(pwd)"; exit 3'],
                "env": [{"name": "GREETING", "value": "world"}],
                "then": ["wait", "output", "release"],
            }
        },
        {"terminal": {"command": "sh", "args": ["-c", "kill -TERM $$"], "then": ["wait", "output"]}},
        # a € € : 7 bytes; the last 4 start inside the first € -> cut forward to the second one.
        {
            "terminal": {
                "command": "printf",
                "args": ["a\u20ac\u20ac"],
                "outputByteLimit": 4,
                "then": ["wait", "output", "release"],
            }
        },
        {"terminal": {"command": "true", "then": ["release", "output"]}},
    ]
    agent.start([steps], project)
    got = agent.turn()
    waits = calls(got, "terminal/wait_for_exit")
    outputs = calls(got, "terminal/output")
    assert result(waits[0]) == {"exitCode": 3}
    first = result(outputs[0])
    assert first["output"] == f"hello world in {project.resolve()}\n"
    assert first["truncated"] is False and first["exitStatus"]["exitCode"] == 3
    assert result(waits[1])["signal"] == "SIGTERM" and result(waits[1]).get("exitCode") is None
    assert result(outputs[1])["exitStatus"]["signal"] == "SIGTERM"
    cut = result(outputs[2])
    assert cut["output"] == "\u20ac" and cut["truncated"] is True
    # Released: the id is no longer valid.
    gone = error(outputs[3])
    assert gone["code"] == -32002 and "unknown terminal" in gone["message"]


def test_kill_a_command_that_ignores_sigterm(nvim: Nvim, agent: Scripted, project: Path) -> None:
    command = 'trap "" TERM; echo ready; while :; do sleep 1; done'
    steps = [
        {
            "terminal": {
                "command": "sh",
                "args": ["-c", command],
                "then": [{"until_output": "ready"}, "kill", "wait", "output", "release"],
            }
        }
    ]
    agent.start([steps], project)
    nvim.lua("require('acp_nvim.editor.terminal').kill_grace_ms = 300")
    got = agent.turn()
    assert result(calls(got, "terminal/kill")[0]) == {}
    assert result(calls(got, "terminal/wait_for_exit")[0])["signal"] == "SIGKILL"
    # After kill the terminal is still valid: its output and exit status can be read.
    last = result(calls(got, "terminal/output")[-1])
    assert "ready" in last["output"] and last["exitStatus"]["signal"] == "SIGKILL"
    assert result(calls(got, "terminal/release")[0]) == {}


def test_no_process_left_after_stop(nvim: Nvim, agent: Scripted, project: Path) -> None:
    steps = [
        {
            "terminal": {
                "command": "sh",
                "args": ["-c", "sleep 300 & echo started; wait"],
                "then": [{"until_output": "started"}],
            }
        }
    ]
    agent.start([steps], project)
    agent.turn()
    pid = nvim.lua("local t = require('acp_nvim.editor.terminal') return t.pid(t.list()[1])")
    assert nvim.lua("return vim.uv.kill(-..., 0) == 0", pid)
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    nvim.wait("select(1, pcall(vim.uv.kill, -args[1], 0)) == false or vim.uv.kill(-args[1], 0) ~= 0", 10, pid)


def test_chat_shows_the_embedded_terminal(nvim: Nvim, agent: Scripted, project: Path) -> None:
    steps = [
        {
            "terminal": {
                "command": "sh",
                "args": ["-c", "for i in 1 2 3 4 5 6 7 8 9 10; do echo line$i; done; printf 'done\\n'"],
                "toolCallId": "run-1",
                "title": "count",
                "then": ["wait", "release"],
            }
        }
    ]
    agent.start([steps], project)
    agent.turn()
    nvim.wait_chat("⌨ terminal")
    shown = """
    local chat = require('acp_nvim.ui.chat')
    local buf = chat.chats[chat.current].buf
    local ns = vim.api.nvim_create_namespace('acp_nvim_term')
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
      for _, vl in ipairs(m[4].virt_lines or {}) do
        out[#out + 1] = vl[1][1]
      end
    end
    return out
    """
    # After release the chat still shows the last lines the command printed, and how it ended.
    nvim.wait(f"(function() {shown} end)()[9] == '    └ exited with code 0'", 10)
    lines = nvim.lua(shown)
    assert lines[-2] == "    │ done" and lines[0] == "    │ line4"
    assert len(lines) == 9  # 8 lines of output (the default) and the exit line
    # <CR> on the placeholder opens the terminal itself.
    nvim.lua("require('acp_nvim').chat()")
    row = nvim.lua(
        "for i, l in ipairs(require('acp_nvim.ui.chat').lines()) do"
        " if l:find('terminal term-', 1, true) then return i end end"
    )
    nvim.lua(
        "local chat = require('acp_nvim.ui.chat')"
        " vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.chats[chat.current].buf)[1])"
    )
    nvim.api.current.window.cursor = (row, 0)
    nvim.lua("require('acp_nvim.ui.chat').jump('<CR>')")
    assert nvim.lua("return vim.bo.buftype") == "terminal"
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)").startswith("acp-terminal://term-")


def test_a_crashed_agent_leaves_no_process(nvim: Nvim, agent: Scripted, project: Path) -> None:
    steps = [
        {
            "terminal": {
                "command": "sh",
                "args": ["-c", "sleep 300 & echo started; wait"],
                "then": [{"until_output": "started"}],
            }
        },
        {"exit": 3},
    ]
    agent.start([steps], project)
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait("#require('acp_nvim.editor.terminal').list() == 1")
    pid = nvim.lua("local t = require('acp_nvim.editor.terminal') return t.pid(t.list()[1])")
    nvim.wait_state("error")
    nvim.wait("select(1, pcall(vim.uv.kill, -args[1], 0)) == false or vim.uv.kill(-args[1], 0) ~= 0", 10, pid)


def test_host_tail_cuts_at_a_character_boundary() -> None:
    raw = "a\u20ac\u20ac".encode()  # 7 bytes; the last 4 start inside the first euro sign
    buf = bytearray(raw)
    keep_tail(buf, 4)
    assert buf.decode() == "\u20ac"
    buf = bytearray(raw)
    keep_tail(buf, 7)
    assert bytes(buf) == raw
    buf = bytearray(raw)
    keep_tail(buf, 0)
    assert buf == b""

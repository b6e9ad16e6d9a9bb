"""Commands the agent runs itself (tool calls of kind `execute`, no `terminal/*`) show in the chat like ACP
terminals: the command, its output as it grows, its exit status; an output resent whole costs only its new
bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim

# What the chat shows of each command: {command line: [virtual lines under it]}.
SHOWN = """
local chat = require('acp_nvim.ui.chat')
local buf = chat.chats[chat.current].buf
local ns = vim.api.nvim_create_namespace('acp_nvim_term')
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
  local line = vim.api.nvim_buf_get_lines(buf, m[2], m[2] + 1, false)[1]
  local shown = {}
  for _, vl in ipairs(m[4].virt_lines or {}) do
    shown[#shown + 1] = vl[1][1]
  end
  out[line] = shown
end
return out
"""

# Counts the output bytes the chat terminals are handed.
COUNT_BYTES = """
local chat_terminal = require('acp_nvim.ui.chat_terminal')
local show = chat_terminal.show_output
_G.shown_bytes = 0
chat_terminal.show_output = function(id, data, reset)
  _G.shown_bytes = _G.shown_bytes + #data
  return show(id, data, reset)
end
"""


def update(**fields: Any) -> dict[str, Any]:
    return {"update": {"sessionUpdate": "tool_call_update", **fields}}


def codex_fenced(lines: list[str]) -> str:
    # codex-acp's shape without the display-only terminal: the output so far in a fence, sent whole.
    return "```sh\n" + "\n".join(lines) + "\n```\n"


def resent_whole_turn(count: int) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "c1",
                "title": "seq 1 " + str(count),
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": ["bash", "-lc", f"seq 1 {count}"], "cwd": "/p"},
            }
        }
    ]
    output: list[str] = []
    for n in range(1, count + 1):
        output.append(str(n))
        text = {"type": "content", "content": {"type": "text", "text": codex_fenced(output)}}
        steps.append(update(toolCallId="c1", content=[text]))
    steps.append(update(toolCallId="c1", status="completed", rawOutput={"exit_code": 0, "stdout": "…"}))
    return steps


def display_terminal_turn() -> list[dict[str, Any]]:
    # codex-acp's shape for clients that advertise `_meta.terminal_output`.
    return [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "c2",
                "title": "make test",
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": ["make", "test"], "cwd": "/p"},
                "content": [{"type": "terminal", "terminalId": "c2"}],
                "_meta": {"terminal_info": {"terminal_id": "c2", "cwd": "/p"}},
            }
        },
        update(toolCallId="c2", _meta={"terminal_output": {"terminal_id": "c2", "data": "building\n"}}),
        update(
            toolCallId="c2", _meta={"terminal_output": {"terminal_id": "c2", "data": "test 1 ok\ntest 2 "}}
        ),
        update(toolCallId="c2", _meta={"terminal_output": {"terminal_id": "c2", "data": "FAILED\n"}}),
        update(
            toolCallId="c2",
            status="failed",
            _meta={"terminal_exit": {"terminal_id": "c2", "exit_code": 2, "signal": None}},
        ),
    ]


def test_output_resent_whole_shows_as_a_terminal_and_costs_only_new_bytes(
    nvim: Nvim, agent: Scripted, tmp_path: Path
) -> None:
    count = 40
    agent.start([resent_whole_turn(count)], tmp_path)
    nvim.lua(COUNT_BYTES)
    agent.turn()
    nvim.wait("(function() " + SHOWN + " end)()['    $ seq 1 40'] ~= nil", 10)
    nvim.wait(
        "vim.tbl_contains((function() " + SHOWN + " end)()['    $ seq 1 40'], '    └ exited with code 0')", 10
    )
    shown = nvim.lua(SHOWN)["    $ seq 1 40"]
    # The last lines (8, the default), then how it ended: as under an ACP terminal.
    assert shown == [f"    │ {n}" for n in range(count - 7, count + 1)] + ["    └ exited with code 0"]
    text = nvim.chat_text()
    assert "✓ seq 1 40  execute  completed" in text
    # The output is drawn under the command, not again as text in the chat.
    assert "```" not in text and "\n    39\n" not in text
    # Each update resent all of it; the chat was handed each byte once.
    final = "\n".join(str(n) for n in range(1, count + 1))
    assert nvim.lua("return _G.shown_bytes") == len(final)


def test_display_only_terminal_output_and_exit(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    agent.start([display_terminal_turn()], tmp_path)
    caps = agent.initialize()["clientCapabilities"]
    assert caps["_meta"]["terminal_output"] is True
    agent.turn()
    nvim.wait(
        "vim.tbl_contains((function() "
        + SHOWN
        + " end)()['    $ make test'] or {}, '    └ exited with code 2')",
        10,
    )
    shown = nvim.lua(SHOWN)["    $ make test"]
    assert shown == ["    │ building", "    │ test 1 ok", "    │ test 2 FAILED", "    └ exited with code 2"]
    text = nvim.chat_text()
    assert "✗ make test  execute  failed" in text
    # Not an ACP terminal: no placeholder of its own, and not offered by :AcpTerminal.
    assert "⌨ terminal" not in text
    assert nvim.lua("return require('acp_nvim.ui.chat_terminal').ids()") == []


def claude_terminal_turn() -> list[dict[str, Any]]:
    # claude-agent-acp's shape for clients that also advertise `_meta.terminal_output_delta`: pieces as
    # deltas, a `terminal_output` that replaces the whole output, an exit without a code.
    def meta(**fields: Any) -> dict[str, Any]:
        return {
            "toolCallId": "c3",
            "_meta": {key: {"terminal_id": "c3", **value} for key, value in fields.items()},
        }

    return [
        {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": "c3",
                "title": "npm run watch",
                "kind": "execute",
                "status": "in_progress",
                "rawInput": {"command": "npm run watch", "description": "Watch"},
                "content": [{"type": "terminal", "terminalId": "c3"}],
                "_meta": {"terminal_info": {"terminal_id": "c3"}},
            }
        },
        update(**meta(terminal_output_delta={"data": "compiling\n"})),
        update(**meta(terminal_output_delta={"data": "done in 2s\n"})),
        update(**meta(terminal_output={"data": "watching for changes\n"})),
        update(status="completed", **meta(terminal_exit={"exit_code": None, "signal": None})),
    ]


def test_output_deltas_and_a_replacing_output(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    agent.start([claude_terminal_turn()], tmp_path)
    assert agent.initialize()["clientCapabilities"]["_meta"]["terminal_output_delta"] is True
    agent.turn()
    nvim.wait_chat("✓ npm run watch  execute  completed")
    nvim.wait(
        "vim.deep_equal((function() " + SHOWN + " end)()['    $ npm run watch'], {args[1]})",
        10,
        "    │ watching for changes",
    )
    # The replacing output is all that is shown; no exit line without an exit code (the status says it).
    assert nvim.lua(SHOWN)["    $ npm run watch"] == ["    │ watching for changes"]

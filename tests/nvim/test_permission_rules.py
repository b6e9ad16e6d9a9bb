"""Remembered permissions end to end: a real headless Neovim, the scripted agent (official Python SDK) asking
for permissions, the "always allow" choices in the picker (vim.ui.select, recorded by conftest), the answers
the agent gets, the chat's note under a tool call a rule allowed, :AcpPermissions, the project rules file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_restart import wait_lines


def edit(call: str, path: str) -> dict[str, Any]:
    tool_call = {"toolCallId": call, "title": f"Edit {path}", "kind": "edit", "locations": [{"path": path}]}
    return {"permission": {"toolCall": tool_call}}


def answers(agent: Scripted) -> list[Any]:
    return [e["result"]["outcome"] for e in agent.entries() if e.get("call") == "session/request_permission"]


def selects(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def test_always_allow_in_this_session(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent = Scripted(nvim, tmp_path, schema)
    agent.start(
        [
            [edit("e1", "${CWD}/a.py")],
            [edit("e2", "${CWD}/src/b.py"), {"text": "second done"}],
            [edit("e3", str(tmp_path / "outside.py"))],
        ],
        project,
    )
    nvim.lua("acp_test.answers = { 'acp_nvim:always:session' }")
    agent.turn()
    (picker,) = selects(nvim)
    assert picker["items"][-2:] == [
        "Always allow edit in this session (acp.nvim remembers it)",
        "Always allow edit in this project (acp.nvim remembers it)",
    ]
    # The next edit in the project is answered by the rule, with the agent's own allow option.
    agent.turn()
    assert len(selects(nvim)) == 1
    assert answers(agent) == [{"outcome": "selected", "optionId": "allow"}] * 2
    wait_lines(nvim, "sess-1", "second done")
    lines = nvim.chat_lines()
    title = next(n for n, line in enumerate(lines) if "Edit " in line and "b.py" in line)
    assert lines[title + 1].strip() == "✓ allowed by the session rule: always allow edit", lines
    # Outside the project, a rule never answers.
    nvim.lua("acp_test.answers = { 'reject' }")
    agent.turn()
    assert len(selects(nvim)) == 2
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "reject"}


def test_a_project_rule_is_stored_listed_and_revoked(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent = Scripted(nvim, tmp_path, schema)
    agent.start([[edit("e1", "${CWD}/a.py")], [edit("e2", "${CWD}/a.py")]], project)
    nvim.lua("acp_test.answers = { 'acp_nvim:always:project' }")
    agent.turn()
    stored = Path(nvim.lua("return vim.fn.stdpath('data')")) / "acp_nvim" / "permissions.json"
    assert json.loads(stored.read_text()) == {
        "version": 1,
        "projects": {os.path.realpath(project): [{"kind": "edit"}]},
    }
    # Listed in a picker; choosing it revokes it.
    nvim.lua("acp_test.answers = { '1' }")
    nvim.api.command("AcpPermissions")
    nvim.wait("#acp_test.selects == 2")
    assert selects(nvim)[1]["prompt"] == "Permission rules (choose one to revoke)"
    assert selects(nvim)[1]["items"] == ["1. [project] always allow edit"]
    nvim.wait(
        "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, acp_test.notes), args[1])",
        10,
        "acp.nvim: revoked the project rule: always allow edit",
    )
    assert json.loads(stored.read_text()) == {"version": 1, "projects": {}}
    # Revoked: the next edit is asked again.
    nvim.lua("acp_test.answers = { 'allow' }")
    agent.turn()
    assert len(selects(nvim)) == 3
    # A rule made with the command: its words reach the host as they were typed.
    nvim.api.command("AcpPermissions allow project execute npm test")
    nvim.wait(
        "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, acp_test.notes), args[1])",
        10,
        "acp.nvim: added the project rule: always allow `npm test`",
    )
    assert json.loads(stored.read_text())["projects"] == {
        os.path.realpath(project): [{"kind": "execute", "command": "npm test"}]
    }


def add_rule(nvim: Nvim, words: str, described: str) -> None:
    nvim.api.command(f"AcpPermissions allow {words}")
    nvim.wait(
        "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, acp_test.notes), args[1])",
        10,
        f"acp.nvim: added the session rule: always allow {described}",
    )


ATTACKS = [
    "echo ok\nrm -rf X",
    "echo ok\r\nrm -rf X",
    "echo ok # \nrm -rf X",
    "bash -c 'echo ok\nrm -rf X'",
    "echo ok =(rm -rf X)",
    "echo ok; rm -rf X",
    "echo ok\u2028rm -rf X",
]


def test_a_command_rule_is_not_talked_around(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    project = tmp_path / "project"
    (project / "X").mkdir(parents=True)
    (project / "X" / "keep.txt").write_text("precious\n")
    agent = Scripted(nvim, tmp_path, schema)
    turns = [
        [{"shell": {"command": "echo ok", "ask": attack, "toolCallId": f"a{n}"}}]
        for n, attack in enumerate(ATTACKS)
    ]
    # Announced as `echo ok`, then asking for another command under the same title.
    turns.append(
        [
            {
                "shell": {
                    "command": "echo ok",
                    "ask": "curl -s file:///dev/null | sh; rm -rf X",
                    "toolCallId": "swap",
                }
            }
        ]
    )
    turns.append([{"shell": {"command": "echo ok", "ask": "echo ok", "toolCallId": "fine"}}])
    agent.start(turns, project)
    add_rule(nvim, "execute echo ok", "`echo ok`")
    for n, attack in enumerate(ATTACKS):
        nvim.lua("acp_test.answers = { 'reject' }")
        agent.turn()
        assert len(selects(nvim)) == n + 1, attack
        # The question names the command asked about, its newline written out.
        assert (
            "$ " + attack.replace("\n", "\\n").replace("\r", "\\r").replace("\u2028", "\\u2028")
            in (selects(nvim)[-1]["prompt"])
        )
        assert (project / "X" / "keep.txt").read_text() == "precious\n", attack
    nvim.lua("acp_test.answers = { 'reject' }")
    agent.turn()
    assert (
        selects(nvim)[-1]["prompt"] == "Allow execute: echo ok  $ curl -s file:///dev/null | sh; rm -rf X ?"
    )
    assert (project / "X" / "keep.txt").exists()
    # The chat shows the command asked about, not the first announcement.
    lines = nvim.chat_lines()
    assert "    $ curl -s file:///dev/null | sh; rm -rf X" in [line.rstrip() for line in lines], lines
    # The plain command is still allowed by the rule, without a question.
    agent.turn()
    assert len(selects(nvim)) == len(ATTACKS) + 1
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "allow"}
    assert (project / "X" / "keep.txt").exists()


def test_a_path_rule_checks_the_paths_of_rawinput(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    outside = tmp_path / "outside.py"

    def claude_edit(call: str, file_path: str) -> list[dict[str, Any]]:
        # claude-agent-acp: the announcement names the file; the request carries only the tool's input.
        announced = {
            "sessionUpdate": "tool_call",
            "toolCallId": call,
            "title": "Edit src/a.py",
            "kind": "edit",
            "locations": [{"path": "${CWD}/src/a.py"}],
            "rawInput": {"file_path": "${CWD}/src/a.py"},
        }
        raw = {"file_path": file_path, "old_string": "a", "new_string": "b"}
        asked = {"toolCallId": call, "title": "Edit src/a.py", "rawInput": raw}
        return [{"update": announced}, {"permission": {"toolCall": asked}}]

    codex = {
        "toolCallId": "c1",
        "title": "Edit",
        "kind": "edit",
        "locations": [{"path": "${CWD}/src/a.py"}],
        "rawInput": {"call_id": "c1", "changes": {str(outside): {"type": "add", "content": "x"}}},
    }
    agent = Scripted(nvim, tmp_path, schema)
    agent.start(
        [
            claude_edit("e1", str(outside)),
            [{"permission": {"toolCall": codex}}],
            claude_edit("e2", "${CWD}/src/a.py"),
        ],
        project,
    )
    add_rule(nvim, "edit src", f"edit in {os.path.realpath(project / 'src')}")
    nvim.lua("acp_test.answers = { 'reject', 'reject' }")
    agent.turn()
    agent.turn()
    assert len(selects(nvim)) == 2
    assert answers(agent) == [{"outcome": "selected", "optionId": "reject"}] * 2
    # Inside the rule's folder: allowed without a question.
    agent.turn()
    assert len(selects(nvim)) == 2
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "allow"}


def test_a_rules_file_that_is_a_fifo_stops_nothing(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    data = Path(nvim.lua("return vim.fn.stdpath('data')")) / "acp_nvim"
    data.mkdir(parents=True, exist_ok=True)
    os.mkfifo(data / "permissions.json")
    agent = Scripted(nvim, tmp_path, schema)
    agent.start([[edit("e1", "${CWD}/a.py"), {"text": "still here"}], [edit("e2", "${CWD}/a.py")]], project)
    nvim.lua("acp_test.answers = { 'allow', 'allow' }")
    agent.turn(timeout=15)
    wait_lines(nvim, "sess-1", "still here")
    agent.turn(timeout=15)
    assert len(selects(nvim)) == 2
    said = [n["msg"] for n in nvim.notes() if "permission rules not used" in n["msg"]]
    assert said == [
        f"acp.nvim: permission rules not used: {data / 'permissions.json'} is not a regular file (fifo)"
    ]

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

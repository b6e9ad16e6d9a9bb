"""Permission requests that try to slip past the rules, end to end: a real headless Neovim, the scripted agent
(official Python SDK) running the command only when allowed, what the picker and the chat show, and what is
left on disk. An execute request without its command (gemini-cli's shape), a read that runs a command
(codex-acp's), a kind that changes between the announcement and the request, an unknown tool call, a request
without title or kind, rawInput as a string, a command too long to judge."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_permission_rules import add_rule, answers, edit, selects


def noted(nvim: Nvim, message: str) -> None:
    nvim.wait(
        "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, acp_test.notes), args[1])", 10, message
    )


def precious(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "X").mkdir(parents=True)
    (project / "X" / "keep.txt").write_text("precious\n")
    (project / "a.txt").write_text("a\n")
    return project


def test_an_execute_request_without_its_command_is_always_asked(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    project = precious(tmp_path)
    data = Path(nvim.lua("return vim.fn.stdpath('data')")) / "acp_nvim"
    data.mkdir(parents=True, exist_ok=True)
    stored = data / "permissions.json"
    # An earlier version offered "Always allow execute" for such a request and kept it so.
    rules = [{"kind": "execute"}, {"kind": "edit"}]
    stored.write_text(json.dumps({"version": 1, "projects": {os.path.realpath(project): rules}}))

    def gemini(call: str, command: str) -> list[dict[str, Any]]:
        return [{"shell": {"command": command, "ask": command, "bare": True, "toolCallId": call}}]

    agent = Scripted(nvim, tmp_path, schema)
    agent.start(
        [gemini("g1", "touch made.txt"), gemini("g2", "true\nrm -rf X"), [edit("e1", "${CWD}/a.py")]], project
    )
    nvim.lua("acp_test.answers = { 'allow' }")
    agent.turn()
    (picker,) = selects(nvim)
    # Asked, with no "Always allow": a rule for it would allow any command the title does not show.
    assert picker["prompt"] == "Allow execute: touch made.txt?"
    assert not [item for item in picker["items"] if "Always allow" in item], picker
    assert (project / "made.txt").exists()
    # The kind-only rule in the file allows nothing: asked, refused, the folder kept.
    nvim.lua("acp_test.answers = { 'reject' }")
    agent.turn()
    assert len(selects(nvim)) == 2
    assert (project / "X" / "keep.txt").read_text() == "precious\n"
    # The file's other rule still answers.
    agent.turn()
    assert len(selects(nvim)) == 2
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "allow"}
    said = [n["msg"] for n in nvim.notes() if "is not used" in n["msg"]]
    assert said == [
        "acp.nvim: the project rule 'always allow execute' is not used: an execute rule names the command"
        " it allows (`execute npm test`), never any command (revoke it with :AcpPermissions)"
    ]
    # Not made by hand either; listed, to be revoked.
    nvim.api.command("AcpPermissions allow project execute")
    noted(
        nvim,
        "acp.nvim: no rule made: an execute rule names the command it allows (`execute npm test`), never any"
        " command",
    )
    nvim.lua("acp_test.answers = { '1' }")
    nvim.api.command("AcpPermissions")
    nvim.wait("#acp_test.selects == 3")
    assert selects(nvim)[2]["items"] == [
        "1. [project] always allow execute (names no command: allows nothing)",
        "2. [project] always allow edit",
    ]
    noted(nvim, "acp.nvim: revoked the project rule: always allow execute (names no command: allows nothing)")
    assert json.loads(stored.read_text())["projects"] == {os.path.realpath(project): [{"kind": "edit"}]}


def test_a_read_that_runs_a_command_shows_it_and_no_kind_rule_allows_it(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    project = precious(tmp_path)
    sneaky = "cat a.txt && rm -rf X"
    honest_read = {
        "toolCallId": "r2",
        "title": "Read a.txt",
        "kind": "read",
        "locations": [{"path": "${CWD}/a.txt"}],
    }
    agent = Scripted(nvim, tmp_path, schema)
    agent.start(
        [
            # codex-acp reports `cat` as a read, its command in rawInput.
            [{"shell": {"command": sneaky, "kind": "read", "ask": sneaky, "toolCallId": "r1"}}],
            [{"permission": {"toolCall": honest_read}}],
        ],
        project,
    )
    add_rule(nvim, "read", "read")
    nvim.lua("acp_test.answers = { 'reject' }")
    agent.turn()
    (picker,) = selects(nvim)
    assert picker["prompt"] == f"Allow read: {sneaky}  $ {sneaky} ?"
    assert not [item for item in picker["items"] if "Always allow" in item], picker
    assert (project / "X" / "keep.txt").exists()
    lines = [line.rstrip() for line in nvim.chat_lines()]
    assert f"    $ {sneaky}" in lines, lines
    # A read that runs nothing is the rule's.
    agent.turn()
    assert len(selects(nvim)) == 1
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "allow"}


EVIL = "echo ok; rm -rf X"
# What the agent asks (each runs EVIL when allowed) and the question it gets, with the rules "always allow
# `echo ok`" and "always allow read".
ATTACKS: list[tuple[dict[str, Any], str]] = [
    # Announced as a read, asking as an execute with another command.
    (
        {"command": "cat a.txt", "kind": "read", "askFields": {"kind": "execute"}},
        f"Allow execute: cat a.txt  $ {EVIL} ?",
    ),
    # Announced as the allowed command, asking as a read (which the read rule would allow).
    ({"command": "echo ok", "askFields": {"kind": "read"}}, f"Allow read: echo ok  $ {EVIL} ?"),
    # A tool call never announced.
    (
        {"command": "echo ok", "announce": False, "askFields": {"kind": "execute"}},
        f"Allow execute: echo ok  $ {EVIL} ?",
    ),
    # No title, no kind: only its id and its command.
    ({"command": "echo ok", "announce": False, "askTitle": None}, f"Allow other: t3  $ {EVIL} ?"),
    # rawInput as a JSON string holding the allowed command.
    (
        {"command": "echo ok", "askRawInput": json.dumps({"command": "echo ok"})},
        "Allow execute: echo ok?",
    ),
]


def test_requests_that_change_their_shape_are_asked(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    project = precious(tmp_path)
    turns = [
        [{"shell": {**shape, "ask": EVIL, "toolCallId": f"t{n}"}}] for n, (shape, _) in enumerate(ATTACKS)
    ]
    # The allowed command, then 400 KB of words and a second line.
    huge = "echo ok " + "a " * 200_000 + "\nrm -rf X"
    turns.append([{"shell": {"command": "echo ok", "ask": huge, "toolCallId": "huge"}}])
    turns.append([{"shell": {"command": "echo ok", "ask": "echo ok", "toolCallId": "fine"}}])
    agent = Scripted(nvim, tmp_path, schema)
    agent.start(turns, project)
    add_rule(nvim, "execute echo ok", "`echo ok`")
    add_rule(nvim, "read", "read")
    for n, (shape, question) in enumerate(ATTACKS):
        nvim.lua("acp_test.answers = { 'reject' }")
        agent.turn()
        assert len(selects(nvim)) == n + 1, shape
        assert selects(nvim)[-1]["prompt"] == question, shape
        assert (project / "X" / "keep.txt").read_text() == "precious\n", shape
    nvim.lua("acp_test.answers = { 'reject' }")
    agent.turn(timeout=30)
    prompt = selects(nvim)[-1]["prompt"]
    assert prompt.startswith("Allow execute: echo ok  $ echo ok a a ")
    assert prompt.endswith(f" … ({len(huge) - 1000} more characters) ?")
    assert (project / "X" / "keep.txt").exists()
    # The honest command is still allowed by its rule.
    agent.turn()
    assert len(selects(nvim)) == len(ATTACKS) + 1
    assert answers(agent)[-1] == {"outcome": "selected", "optionId": "allow"}
    assert (project / "X" / "keep.txt").exists()

"""Subagents (ACP's unstable child sessions), end to end with the scripted agent (official Python SDK)
playing a parent that announces a child with `subagent_update` and then speaks as it: the child's transcript
is folded under the tool call that started it, with its state; its permission request and file read reach the
user and Neovim as the parent's do (the picker says it is the subagent's); cancelling the parent cancels the
child, and the child can be cancelled alone where it allows that. These are the client's side, scripted: the
real codex-acp 2.6 is in tests/nvim/test_real_subagents.py. The capability is advertised only to an agent
known to offer subagents: from the start after one whose answer offered them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim

CHILD = "sess-1:subagent:thread-9"
OFFERS = {"sessionCapabilities": {"subagents": {}}}


def announce(state: str = "running", **fields: Any) -> dict[str, Any]:
    update = {"sessionUpdate": "subagent_update", "sessionId": CHILD, "state": {"state": state}, **fields}
    return {"update": update}


def spawn_call(status: str = "in_progress") -> dict[str, Any]:
    raw = {"prompt": "Check a.txt", "receiverThreadIds": ["thread-9"]}
    update = {"sessionUpdate": "tool_call", "toolCallId": "spawn-1", "title": "spawnAgent", "kind": "other"}
    return {"update": {**update, "status": status, "rawInput": raw}}


def child_work(cwd: str) -> list[dict[str, Any]]:
    """What the child does: says something, plans, reads a file and asks to run a command."""
    plan = {
        "sessionUpdate": "plan",
        "entries": [{"content": "child step", "priority": "low", "status": "pending"}],
    }
    return [
        {"text": "child says hello"},
        {"update": plan},
        {"read": {"path": f"{cwd}/a.txt"}},
        {"write": {"path": f"{cwd}/by-child.txt", "content": "written by the child\n"}},
        {
            "terminal": {
                "command": "echo",
                "args": ["from the child"],
                "cwd": cwd,
                "then": ["wait", "output", "release"],
            }
        },
        {"shell": {"command": "touch child.txt", "ask": "touch child.txt", "toolCallId": "c-run"}},
    ]


def start_twice(agent: Scripted, nvim: Nvim, turns: list[list[dict[str, Any]]], project: Path) -> None:
    """The first start learns that the agent offers subagents; the restart advertises the capability."""
    agent.start(turns, project, {"agentCapabilities": OFFERS})
    first = agent.initialize()
    assert "subagents" not in first["clientCapabilities"], first
    nvim.api.command("AcpRestart")
    wait_until(lambda: len(inits(agent)) == 2, 20, "the restart's initialize")
    nvim.wait_state("ready")
    assert inits(agent)[1]["clientCapabilities"]["subagents"] == {}


def inits(agent: Scripted) -> list[dict[str, Any]]:
    return [e["params"] for e in agent.entries() if e.get("method") == "initialize"]


def test_a_subagents_transcript_and_permission_reach_the_user_under_its_tool_call(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    (project / "a.txt").write_text("for the child\n")
    cwd = str(project.resolve())
    turn = [
        spawn_call(),
        announce(title="worker", description="Checks a.txt", capabilities={"cancel": {}}),
        {"as": CHILD, "steps": child_work(cwd)},
        announce("idle", stopReason="end_turn"),
        {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "spawn-1", "status": "completed"}},
        {"text": "parent done"},
    ]
    start_twice(agent, nvim, [turn], project)
    nvim.lua("acp_test.answers = { 'allow' }")
    answers = agent.turn()
    # The child's requests were served as the parent's: the file read through Neovim, the command allowed.
    read = next(a for a in answers if a["call"] == "fs/read_text_file")
    assert read["kind"] == "result" and read["result"]["content"] == "for the child\n"
    assert (project / "by-child.txt").read_text() == "written by the child\n"
    output = next(a for a in answers if a["call"] == "terminal/output")
    assert output["kind"] == "result" and "from the child" in output["result"]["output"], answers
    assert all(a["kind"] == "result" for a in answers), answers
    (picker,) = nvim.lua("return acp_test.selects")
    assert picker["prompt"] == "Subagent worker: Allow execute: touch child.txt  $ touch child.txt ?", picker
    assert (project / "child.txt").exists()
    nvim.wait_chat("parent done")
    lines = nvim.chat_lines()
    spawn = next(n for n, line in enumerate(lines) if "spawnAgent" in line)
    header = lines.index("    ↳ subagent worker  done")
    assert header > spawn, lines
    # Its transcript under it, indented: its words, its plan, its tool call.
    below = "\n".join(lines[header + 1 :])
    for text in ("Checks a.txt", "child says hello", "[ ] child step", "touch child.txt"):
        assert text in below, lines
    assert below.index("child says hello") < below.index("parent done")
    # Folded under its line, closed, like a tool call's details.
    nvim.lua(
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1])",
        nvim.status()["session_id"],
    )
    said = header + 1 + next(n for n, line in enumerate(lines[header + 1 :]) if "child says hello" in line)
    assert nvim.lua("return vim.fn.foldclosed(...)", said + 1) == header + 1
    assert nvim.lua("return vim.fn.foldclosed(...)", header + 1) == header + 1


def test_cancelling_the_parent_cancels_its_subagent_and_one_can_be_cancelled_alone(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    wait_child = {"as": CHILD, "background": True, "steps": [{"sleep_until_cancel": True}]}
    turns = [
        # Cancelled with its parent.
        [
            spawn_call(),
            announce(title="worker", capabilities={"cancel": {}}),
            wait_child,
            {"sleep_until_cancel": True},
        ],
        # Cancelled alone: the parent's turn goes on to its end.
        [announce(title="worker", capabilities={"cancel": {}}), wait_child, {"text": "parent waits"}],
        # A child that does not allow it is not cancelled alone.
        [announce(title="worker", capabilities={"cancel": None}), {"text": "no cancel"}],
    ]
    start_twice(agent, nvim, turns, project)
    assert nvim.lua("return require('acp_nvim').prompt('go')")
    nvim.wait_chat("↳ subagent worker  running")
    nvim.api.command("AcpCancel")
    wait_until(
        lambda: ends(agent) == [("as_end", CHILD, "cancelled"), ("turn_end", "sess-1", "cancelled")],
        20,
        "parent and child cancelled",
    )
    cancels = [e["params"]["sessionId"] for e in agent.entries() if e.get("method") == "session/cancel"]
    assert cancels == ["sess-1", CHILD]
    nvim.wait_state("ready")
    nvim.wait_chat("↳ subagent worker  cancelled")

    assert nvim.lua("return require('acp_nvim').prompt('go')")
    nvim.wait_chat("parent waits")
    nvim.api.command("AcpCancel subagent")
    wait_until(lambda: len(ends(agent)) == 4, 20, "the child cancelled alone")
    assert ends(agent)[2:] == [("as_end", CHILD, "cancelled"), ("turn_end", "sess-1", "end_turn")]
    nvim.wait_state("ready")
    assert "acp.nvim: subagent worker cancelled" in [n["msg"] for n in nvim.notes()]

    assert nvim.lua("return require('acp_nvim').prompt('go')")
    nvim.wait_chat("no cancel")
    nvim.wait_state("ready")
    before = len([e for e in agent.entries() if e.get("method") == "session/cancel"])
    nvim.api.command("AcpCancel subagent")
    nvim.wait("acp_test.notes[#acp_test.notes].msg:find('does not let the client cancel worker') ~= nil", 5)
    assert len([e for e in agent.entries() if e.get("method") == "session/cancel"]) == before


def ends(agent: Scripted) -> list[tuple[str, str, str]]:
    return [
        (e["kind"], e["sessionId"], e["stopReason"])
        for e in agent.entries()
        if e["kind"] in ("as_end", "turn_end")
    ]


def test_an_agent_that_offers_no_subagents_is_advertised_none(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    agent.start([[{"text": "plain"}]], project)
    nvim.api.command("AcpRestart")
    wait_until(lambda: len(inits(agent)) == 2, 20, "the restart's initialize")
    nvim.wait_state("ready")
    assert all(
        "subagents" not in i["clientCapabilities"] and "plan" not in i["clientCapabilities"]
        for i in inits(agent)
    )
    agent.turns_done = 0
    agent.turn()
    nvim.wait_chat("plain")

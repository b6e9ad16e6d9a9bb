"""Issue 29 with the real codex-acp 2.6 (offline, tests/nvim/test_real_agents.py's set-up): its subagents and
its plan for approval. The fake Responses API plays the model: the parent searches codex's deferred tools
(`tool_search`: its multi-agent tools are offered only once searched for), calls `spawn_agent` in their
namespace, and the child codex starts asks to run a command outside what read-only mode allows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.test_real_agents import TURN, RealAgent, real_agent

pytestmark = [
    pytest.mark.skipif(__import__("os").geteuid() != 0, reason="the agents' network namespace needs root"),
    pytest.mark.timeout(240),
]

__all__ = ["real_agent"]  # the fixture, used by name

CHILD_TASK = "CHILDWORK touch the file"


def script(agent: RealAgent, steps: dict[str, list[dict[str, Any]]]) -> None:
    data = json.loads(agent.script.read_text())
    data["steps"].update(steps)
    agent.script.write_text(json.dumps(data))


def sent(nvim: Any, tmp_path: Path) -> list[dict[str, Any]]:
    """What the client sent and got, from `:AcpLog save`."""
    saved = tmp_path / "traffic.ndjson"
    nvim.api.command(f"AcpLog save {saved}")
    nvim.wait(f"vim.fn.filereadable('{saved}') == 1")
    return [json.loads(line) for line in saved.read_text().splitlines()]


@pytest.mark.parametrize("real_agent", ["codex"], indirect=True)
def test_a_subagent_of_codex_asks_the_user_and_shows_under_its_parent(
    real_agent: RealAgent, tmp_path: Path
) -> None:
    agent, nvim = real_agent, real_agent.nvim
    spawn = {"tool": "spawn_agent", "namespace": "multi_agent_v1", "args": {"message": CHILD_TASK}}
    command = {"cmd": "touch child.txt", "sandbox_permissions": "require_escalated", "justification": "asked"}
    script(
        agent,
        {
            "SPAWN": [{"search": "spawn agent"}, spawn, {"text": "Spawned the worker."}],
            "CHILDWORK": [{"tool": "exec_command", "args": command}, {"text": "child done"}],
        },
    )
    agent.start()
    # Read-only: the child's command is asked about (codex's default mode reviews it itself).
    nvim.api.command("AcpMode read-only")
    nvim.wait("require('acp_nvim').status().mode == 'read-only'")
    assert nvim.lua("return require('acp_nvim').prompt(...)", "SPAWN please spawn a worker")
    nvim.wait_chat("child done", TURN)
    nvim.wait_chat(f"↳ subagent {CHILD_TASK}  done", TURN)
    # The child's permission request reached the user, saying whose it is, and was answered.
    (picker,) = nvim.lua("return acp_test.selects")
    assert picker["prompt"] == f"Subagent {CHILD_TASK}: Allow execute: touch child.txt  $ touch child.txt ?"
    assert (agent.work / "child.txt").exists()
    lines = nvim.chat_lines()
    header = lines.index(f"    ↳ subagent {CHILD_TASK}  done")
    below = "\n".join(lines[header + 1 :])
    assert "touch child.txt  execute  completed" in below and "child done" in below, lines
    # Announced as the protocol says (the client advertised the capability to codex), and every request of
    # the child answered: none for a session the client did not know.
    traffic = sent(nvim, tmp_path)
    (init,) = [e["message"] for e in traffic if e.get("method") == "initialize"]
    assert init["params"]["clientCapabilities"]["subagents"] == {}
    announced = {
        e["message"]["params"]["update"]["sessionId"]
        for e in traffic
        if e.get("method") == "session/update"
        and e["message"]["params"]["update"].get("sessionUpdate") == "subagent_update"
    }
    (child,) = announced
    asked = [
        e["message"]
        for e in traffic
        if e.get("method") == "session/request_permission" and e["direction"] == "in"
    ]
    assert [a["params"]["sessionId"] for a in asked] == [child]
    answers = {
        e["message"]["id"]: e["message"] for e in traffic if e["direction"] == "out" and "id" in e["message"]
    }
    assert all("result" in answers[a["id"]] for a in asked), answers
    assert not [n for n in nvim.notes() if "not open" in str(n["msg"])], nvim.notes()
    assert agent.escapes() == []
    assert nvim.errors() == []

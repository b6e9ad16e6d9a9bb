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


PLAN = "# Fix the file\n\n1. Read a.txt\n2. Capitalise two\n3. Check the result\n4. Say what changed"
# The pickers of the plan: the chat as it stood when each opened, then the choice made (by its kind).
PLAN_PICKERS = r"""
acp_test.plan_pickers = {}
acp_test.plan_choice = {}
vim.ui.select = function(items, opts, on_choice)
  local entry = { prompt = opts.prompt, items = {}, chat = require('acp_nvim.ui.chat').lines() }
  for _, item in ipairs(items) do
    table.insert(entry.items, opts.format_item and opts.format_item(item) or tostring(item))
  end
  table.insert(acp_test.plan_pickers, entry)
  local kind = table.remove(acp_test.plan_choice, 1)
  for _, item in ipairs(items) do
    if item.kind == kind then
      return on_choice(item)
    end
  end
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  acp_test.input_prompt = opts.prompt
  on_confirm("REPLY make it shorter")
end
"""


@pytest.mark.parametrize("real_agent", ["codex"], indirect=True)
def test_a_plan_of_codex_is_shown_in_full_and_approved_rejected_or_answered(
    real_agent: RealAgent, tmp_path: Path
) -> None:
    """codex-acp 2.6 in plan mode (`/plan`) asks "Implement this plan?" once the model proposed one: the
    chat shows the plan in full under the request before the picker opens; the picker offers approve,
    reject and reply, and no "always allow"; a reply rejects the plan and goes as the next prompt, an
    approval lets codex implement it."""
    agent, nvim = real_agent, real_agent.nvim
    script(agent, {"PLANIT": [{"text": f"<proposed_plan>\n{PLAN}\n</proposed_plan>"}]})
    agent.start()
    nvim.lua(PLAN_PICKERS)
    agent.prompt("/plan", "Collaboration mode: Plan")
    nvim.lua("acp_test.plan_choice = { 'reply' }")
    agent.prompt("PLANIT make a plan", "Implement this plan?")
    nvim.wait_chat("Hello from the fake model.", TURN)
    nvim.wait_state("ready", TURN)
    # Proposed as a plan by id (the client advertised `plan`), shown as the plan is.
    text = nvim.chat_text()
    assert "  Plan\n  # Fix the file" in text, text
    (first,) = nvim.lua("return acp_test.plan_pickers")
    assert first["prompt"] == "Plan: Implement this plan?"
    assert first["items"] == [
        "Yes, implement this plan (allow once)",
        "No, and tell Codex what to do differently (reject once)",
        "Reply: reject it and tell the agent what to change (then write your reply)",
    ]
    # The plan in full under the request, while it was asked.
    shown = "\n".join(first["chat"])
    asked = shown.index("Implement this plan?  switch_mode  awaiting permission")
    assert "\n".join("    " + line if line else "" for line in PLAN.split("\n")) in shown[asked:], shown
    assert nvim.lua("return acp_test.input_prompt") == "Reply to the plan: "
    nvim.lua("acp_test.plan_choice = { 'allow_once' }")
    agent.prompt("PLANIT again", "Collaboration mode: Default")
    nvim.wait_state("ready", TURN)
    traffic = sent(nvim, tmp_path)
    asked_ids = [e["message"]["id"] for e in traffic if e.get("method") == "session/request_permission"]
    outcomes = [
        e["message"]["result"]["outcome"]
        for e in traffic
        if e["direction"] == "out" and e["message"].get("id") in asked_ids and "result" in e["message"]
    ]
    assert outcomes == [
        {"outcome": "selected", "optionId": "revise_plan"},
        {"outcome": "selected", "optionId": "implement_plan"},
    ]
    # The reply went to the model as the prompt after the rejected plan.
    prompts = [
        e["message"]["params"]["prompt"][0]["text"] for e in traffic if e.get("method") == "session/prompt"
    ]
    assert prompts == ["/plan", "PLANIT make a plan", "REPLY make it shorter", "PLANIT again"]
    assert agent.escapes() == []
    assert nvim.errors() == []


@pytest.mark.parametrize("real_agent", ["gemini"], indirect=True)
def test_an_agent_without_subagents_is_offered_none_of_them(real_agent: RealAgent, tmp_path: Path) -> None:
    """gemini-cli 0.61 offers no subagents: neither they nor plans by id are advertised, and its turn goes as
    ever."""
    agent, nvim = real_agent, real_agent.nvim
    agent.start()
    agent.prompt("REPLY say hello", "Hello from the fake model.")
    traffic = sent(nvim, tmp_path)
    (init,) = [e["message"] for e in traffic if e.get("method") == "initialize"]
    caps = init["params"]["clientCapabilities"]
    assert "subagents" not in caps and "plan" not in caps, caps
    assert agent.escapes() == []
    assert nvim.errors() == []


@pytest.mark.parametrize("real_agent", ["codex"], indirect=True)
def test_a_subagent_of_codex_is_cancelled_alone(real_agent: RealAgent, tmp_path: Path) -> None:
    """While codex's child streams a long answer it lets the client cancel it (`capabilities.cancel`):
    `:AcpCancel subagent` cancels the child alone, which codex interrupts, and the chat says so; `:AcpCancel`
    after the parent's turn ended cancels the child still working."""
    agent, nvim = real_agent, real_agent.nvim
    spawn = {
        "tool": "spawn_agent",
        "namespace": "multi_agent_v1",
        "args": {"message": "LAZYCHILD take your time"},
    }
    script(
        agent,
        {
            "SPAWN": [{"search": "spawn agent"}, spawn, {"text": "Spawned the worker."}],
            "LAZYCHILD": [{"slow": "tock", "pieces": 150, "delay": 0.2}],
        },
    )
    agent.start()
    assert nvim.lua("return require('acp_nvim').prompt(...)", "SPAWN please spawn a worker")
    nvim.wait_chat("tock 2", TURN)
    nvim.api.command("AcpCancel subagent")
    nvim.wait_chat("↳ subagent LAZYCHILD take your time  cancelled", TURN)
    assert "acp.nvim: subagent LAZYCHILD take your time cancelled" in [n["msg"] for n in nvim.notes()]
    traffic = sent(nvim, tmp_path)
    cancels = [e["message"]["params"]["sessionId"] for e in traffic if e.get("method") == "session/cancel"]
    (child,) = {
        e["message"]["params"]["update"]["sessionId"]
        for e in traffic
        if e.get("method") == "session/update"
        and e["message"]["params"]["update"].get("sessionUpdate") == "subagent_update"
    }
    assert cancels == [child]
    assert "tock 149" not in nvim.chat_text()
    # Its parent's turn ended long ago; a new child works on: :AcpCancel stops it too.
    nvim.wait_state("ready", TURN)
    assert nvim.lua("return require('acp_nvim').prompt(...)", "SPAWN another worker")
    nvim.wait(
        "select(2, table.concat(require('acp_nvim.ui.chat').lines(), '\\n'):gsub('tock 2 ', '')) == 2", TURN
    )
    nvim.wait_state("ready", TURN)
    nvim.api.command("AcpCancel")
    nvim.wait(
        "select(2, table.concat(require('acp_nvim.ui.chat').lines(), '\\n'):gsub('  cancelled', '')) == 2",
        TURN,
    )
    assert agent.escapes() == []
    assert nvim.errors() == []

"""A plan to approve in Claude's shape (claude-agent-acp's exit from plan mode: a `switch_mode` request whose
plan is the tool call's text), played by the scripted agent (official Python SDK) in a real Neovim: the plan
in full in the chat before the picker, approve / reject / reply offered and no "always allow", a reply
rejecting the plan and going as the next prompt, no rule answering it. codex-acp 2.6's own shape, with the
real agent, is in tests/nvim/test_real_subagents.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_real_subagents import PLAN_PICKERS

PLAN = "## Plan\n\n1. Read the code\n2. Change it\n3. Run the tests\n4. Report"
OPTIONS = [
    {"optionId": "acceptEdits", "name": "Yes, and auto-accept edits", "kind": "allow_always"},
    {"optionId": "default", "name": "Yes, and manually approve edits", "kind": "allow_once"},
    {"optionId": "plan", "name": "No, keep planning", "kind": "reject_once"},
]


def exit_plan(call_id: str) -> dict[str, Any]:
    content = [{"type": "content", "content": {"type": "text", "text": PLAN}}]
    tool_call = {"toolCallId": call_id, "title": "Ready to code?", "kind": "switch_mode", "content": content}
    return {"permission": {"toolCall": tool_call, "options": OPTIONS}}


def test_a_plan_in_claudes_shape_is_read_in_full_and_answered_by_the_user(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    # Even a project rule that allows switch_mode does not answer a plan.
    data = Path(nvim.lua("return vim.fn.stdpath('data')")) / "acp_nvim"
    data.mkdir(parents=True, exist_ok=True)
    rules = {"version": 1, "projects": {os.path.realpath(project): [{"kind": "switch_mode"}]}}
    (data / "permissions.json").write_text(json.dumps(rules))
    agent.start([[exit_plan("p1")], [{"text": "got: ${PROMPT}"}], [exit_plan("p2")]], project)
    nvim.lua(PLAN_PICKERS)
    nvim.lua("acp_test.plan_choice = { 'reply' }")
    answers = agent.turn()
    assert answers[-1]["result"] == {"outcome": {"outcome": "selected", "optionId": "plan"}}
    # The reply went as the next prompt, to this session.
    agent.turns_done += 1
    wait_until(lambda: agent.turn_ends() >= 2, 20, "the reply's turn")
    nvim.wait_chat("got: REPLY make it shorter")
    (picker,) = nvim.lua("return acp_test.plan_pickers")
    assert picker["prompt"] == "Plan: Ready to code?"
    assert picker["items"] == [
        "Yes, and auto-accept edits (allow always)",
        "Yes, and manually approve edits (allow once)",
        "No, keep planning (reject once)",
        "Reply: reject it and tell the agent what to change (then write your reply)",
    ]
    shown = "\n".join(picker["chat"])
    asked = shown.index("Ready to code?  switch_mode  awaiting permission")
    assert "\n".join("    " + line if line else "" for line in PLAN.split("\n")) in shown[asked:], shown
    # Drawn once: the text content is the plan shown above.
    assert shown.count("1. Read the code") == 1, shown
    nvim.lua("acp_test.plan_choice = { 'allow_once' }")
    answers = agent.turn()
    assert answers[-1]["result"] == {"outcome": {"outcome": "selected", "optionId": "default"}}
    # Answered, the plan folds under its line.
    lines = nvim.chat_lines()
    line = 1 + max(n for n, text in enumerate(lines) if "Ready to code?" in text)
    session = nvim.status()["session_id"]
    nvim.lua(
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1])",
        session,
    )
    assert nvim.lua("return vim.fn.foldclosed(...)", line + 1) == line, lines

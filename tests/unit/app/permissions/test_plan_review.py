"""A plan to approve (app/permissions/plan_review.py): found in codex-acp's and Claude's requests, offered
with a reply, and a reply answered as the agent's reject."""

from __future__ import annotations

from acp_nvim.app.permissions import plan_review
from acp_nvim.client.session.transcript import ToolCallItem
from acp_nvim.protocol import schema as s

OPTIONS = [
    s.PermissionOption(option_id="implement_plan", name="Yes", kind="allow_once"),
    s.PermissionOption(option_id="revise_plan", name="No", kind="reject_once"),
]


def item(kind: str = "switch_mode", raw_input: object = None, text: str | None = None) -> ToolCallItem:
    content: list[s.ToolCallContent] = []
    if text is not None:
        content.append(s.ToolCallContentContent(content=s.ContentBlockText(text=text)))
    return ToolCallItem(
        key="1", tool_call_id="t", title="Plan?", kind=kind, raw_input=raw_input, content=content
    )


def test_the_plan_of_codex_and_of_claude_and_no_plan_elsewhere() -> None:
    assert plan_review.plan_of(item(raw_input={"plan": "# A\n1. b"})) == "# A\n1. b"
    assert plan_review.plan_of(item(text="## Plan\n- x")) == "## Plan\n- x"
    assert plan_review.plan_of(item(raw_input={"plan": "  "})) is None
    assert plan_review.plan_of(item(kind="execute", raw_input={"plan": "# A"})) is None
    assert plan_review.plan_of(item(raw_input={"mode": "code"})) is None


def test_a_reply_is_offered_and_answered_as_the_agents_reject() -> None:
    offered = plan_review.choices(OPTIONS)
    assert [(c.id, c.kind) for c in offered] == [
        ("implement_plan", "allow_once"),
        ("revise_plan", "reject_once"),
        (plan_review.REPLY, "reply"),
    ]
    assert plan_review.choices(OPTIONS[:1]) == offered[:1]
    reply = s.RequestPermissionOutcomeSelected(option_id=plan_review.REPLY)
    assert plan_review.settle(OPTIONS, reply) == s.RequestPermissionOutcomeSelected(option_id="revise_plan")
    approve = s.RequestPermissionOutcomeSelected(option_id="implement_plan")
    assert plan_review.settle(OPTIONS, approve) is approve
    assert plan_review.question("Implement this plan?") == "Plan: Implement this plan?"

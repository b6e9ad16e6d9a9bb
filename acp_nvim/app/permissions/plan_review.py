"""A plan the agent asks the user to approve before anything runs (plan mode): codex-acp 2.6's "Implement this
plan?" and Claude's exit-plan request are permission requests of kind `switch_mode` that carry the plan
(`rawInput.plan`, or the tool call's text content). Such a request is never answered by a rule and offers no
"always allow": each plan is read before it is approved. The chat shows the plan in full under the request
(`ToolCallItem.plan`), and the picker offers the agent's approve and reject choices and one more, reply:
the plan is rejected and the user's words go to the agent as the next prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_nvim.app.editor.permission import dismissed_outcome
from acp_nvim.app.views import PermissionChoice
from acp_nvim.client.session.transcript import ToolCallItem, content_text
from acp_nvim.protocol import schema as s

REPLY = "acp_nvim:reply"
REPLY_KIND = "reply"
REPLY_NAME = "Reply: reject it and tell the agent what to change"


def plan_of(item: ToolCallItem) -> str | None:
    """The plan a request for this tool call asks to approve, or None when it is no plan review."""
    if item.kind != "switch_mode":
        return None
    raw = item.raw_input
    if isinstance(raw, dict):
        plan = raw.get("plan")
        if isinstance(plan, str) and plan.strip():
            return plan
    texts = [
        content_text(content.content)
        for content in item.content
        if isinstance(content, s.ToolCallContentContent)
    ]
    text = "\n".join(part for part in texts if part.strip())
    return text or None


def question(title: str) -> str:
    return f"Plan: {title}" if title else "Approve the plan?"


def choices(options: Sequence[s.PermissionOption]) -> list[PermissionChoice]:
    """The agent's own choices, then reply (where the agent offers a way to reject)."""
    offered = [
        PermissionChoice(id=option.option_id, name=option.name, kind=option.kind) for option in options
    ]
    if any(option.kind.startswith("reject") for option in options):
        offered.append(PermissionChoice(id=REPLY, name=REPLY_NAME, kind=REPLY_KIND))
    return offered


def settle(
    options: Sequence[s.PermissionOption], outcome: s.RequestPermissionOutcome
) -> s.RequestPermissionOutcome:
    """A reply rejects the plan (the user's words follow as a prompt, sent by the chat)."""
    if isinstance(outcome, s.RequestPermissionOutcomeSelected) and outcome.option_id == REPLY:
        return dismissed_outcome(list(options))
    return outcome

"""A plan in the chat: its entries with their status, or the markdown (or the file's link) the agent sent for
it (unstable `plan_update`), under one title line; a plan the agent removed says so."""

from __future__ import annotations

from acp_nvim.app.chat.lines import Line, clip_line, reply_header, segments_line, text_lines
from acp_nvim.client.session.transcript import PlanItem

PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
PLAN_TITLE = "  Plan"
# Of a plan, its entries shown at most.
MAX_PLAN_ENTRIES = 100
PLAN_GROUPS = {"completed": "AcpChatPlanDone", "in_progress": "AcpChatPlanRunning"}


def plan_view(item: PlanItem, agent_name: str = "") -> list[Line]:
    lines: list[Line] = [reply_header(agent_name)] if item.opens_reply else []
    lines.append({"s": [[PLAN_TITLE + (" (removed)" if item.removed else ""), "AcpChatPlan"]]})
    if item.text:
        lines.extend(text_lines(item.text, indent="  "))
    for entry in item.entries[:MAX_PLAN_ENTRIES]:
        group = PLAN_GROUPS.get(entry.status, "AcpChatPlanPending")
        mark = PLAN_MARKS.get(entry.status, "[ ]")
        segments = [["  " + mark + " ", group], [clip_line(entry.content), group]]
        if entry.priority == "high":
            segments.append(["  !", "AcpChatPlanHigh"])
        lines.append({"s": segments})
    if len(item.entries) > MAX_PLAN_ENTRIES:
        lines.append(
            segments_line((f"  … {len(item.entries) - MAX_PLAN_ENTRIES} more entries", "AcpChatNotice"))
        )
    return lines

"""The unstable updates the session reducer shows (client/session/unstable_updates.py): a subagent announced
on its parent and placed under the tool call that started it, its state as the parent reports it, and plans
by id (`plan_update`, `plan_removed`)."""

from __future__ import annotations

from typing import Any

from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.subagents import OWN_TOOL_CALL
from acp_nvim.client.session.transcript import PlanItem, ToolCallItem
from tests.unit.client.session.test_state import chunk, update

CHILD = "s:subagent:thread-7"


def tool_call(call_id: str, status: str = "in_progress", raw_input: Any = None) -> Any:
    raw = {"sessionUpdate": "tool_call", "toolCallId": call_id, "title": call_id, "status": status}
    if raw_input is not None:
        raw["rawInput"] = raw_input
    return update(raw)


def announce(**fields: Any) -> Any:
    return update({"sessionUpdate": "subagent_update", "sessionId": CHILD, **fields})


def test_a_child_goes_under_the_tool_call_that_names_it_else_the_running_one_else_its_own() -> None:
    named = SessionState("s")
    named.apply(tool_call("spawn", "completed", {"receiverThreadIds": ["thread-7"]}))
    named.apply(tool_call("other"))
    named.apply(announce(title="worker"))
    (child,) = named.children.values()
    assert named.item(child.tool_call_key or "") == named.tool_call("spawn")
    assert named.children_under(child.tool_call_key or "") == [child]

    running = SessionState("s")
    running.apply(tool_call("done", "completed"))
    running.apply(tool_call("busy"))
    running.apply(announce())
    (child,) = running.children.values()
    assert running.item(child.tool_call_key or "") == running.tool_call("busy")

    alone = SessionState("s")
    alone.apply(chunk("hi"))
    alone.apply(announce(description="Checks a.txt"))
    (child,) = alone.children.values()
    own = alone.tool_call(OWN_TOOL_CALL + CHILD)
    assert (
        isinstance(own, ToolCallItem) and own.title == "Subagent Checks a.txt" and own.status == "in_progress"
    )
    alone.take_changes()
    alone.apply(announce(state={"state": "idle", "stopReason": "end_turn"}))
    assert own.status == "completed"
    assert alone.take_changes().replaced == [own.key]
    alone.apply(announce(state={"state": "idle", "stopReason": "cancelled"}))
    assert own.status == "cancelled"


def test_the_parents_words_patch_the_child_and_say_its_state() -> None:
    state = SessionState("s")
    state.apply(tool_call("spawn"))
    state.apply(announce(title="worker", capabilities={"cancel": {}}, state={"state": "running"}))
    (child,) = state.children.values()
    assert (child.name, child.can_cancel, child.status_words(), child.running) == (
        "worker",
        True,
        "running",
        True,
    )
    # Omitted fields keep their value; a capability set replaces the whole set.
    state.apply(announce(state={"state": "requires_action"}, capabilities={"cancel": None}))
    assert (child.name, child.can_cancel, child.status_words()) == ("worker", False, "requires action")
    child.asking = 1
    assert child.status_words() == "awaiting permission"
    child.asking = 0
    state.apply(
        announce(state={"state": "idle", "stopReason": "error", "error": {"code": 1, "message": "boom"}})
    )
    assert (child.status_words(), child.running) == ("failed: boom", False)
    state.apply(announce(state={"state": "sleeping"}))
    assert child.status_words() == "sleeping"
    # The child's own transcript is a reducer of its own.
    assert isinstance(child.state, SessionState) and child.state.session_id == CHILD


def test_a_cancelled_turn_shows_its_running_children_cancelled() -> None:
    state = SessionState("s")
    state.apply(tool_call("spawn"))
    state.apply(announce(state={"state": "running"}))
    (child,) = state.children.values()
    state.end_turn("cancelled")
    assert child.status_words() == "cancelled"


def test_plans_by_id_show_as_the_plan_and_a_removed_one_says_so() -> None:
    state = SessionState("s")
    entry = {"content": "step", "priority": "low", "status": "pending"}
    state.apply(
        update(
            {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p1", "entries": [entry]}}
        )
    )
    state.apply(
        update(
            {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p2", "content": "# A"}}
        )
    )
    plans = [item for item in state.items if isinstance(item, PlanItem)]
    assert [(len(p.entries), p.text) for p in plans] == [(1, ""), (0, "# A")]
    state.take_changes()
    state.apply(
        update({"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "p1", "uri": "file:///p"}})
    )
    state.apply(update({"sessionUpdate": "plan_removed", "planId": "p2"}))
    assert [(p.text, p.removed) for p in plans] == [("[plan](file:///p)", False), ("# A", True)]
    assert state.take_changes().replaced == [plans[0].key, plans[1].key]
    # Unknown ids are no trouble.
    state.apply(update({"sessionUpdate": "plan_removed", "planId": "nope"}))


def test_a_child_without_a_title_is_named_by_the_start_of_its_task() -> None:
    state = SessionState("s")
    state.apply(tool_call("spawn"))
    task = "Look at every file\nof the project " + "and more " * 20
    state.apply(announce(description=task))
    (child,) = state.children.values()
    assert len(child.name) == 60 and child.name.endswith("…") and "\n" not in child.name
    assert child.name.startswith("Look at every file of the project and more")

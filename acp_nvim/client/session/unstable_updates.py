"""The session updates of ACP's unstable schema this client shows, each only when the agent sends it: a
subagent's announcement and state (`subagent_update`, `client/session/subagents.py`) and plans by id
(`plan_update`, `plan_removed`), which show as the stable `plan` does.
"""

from __future__ import annotations

from acp_nvim.client.session.subagents import OWN_TOOL_CALL, Subagent, names_child
from acp_nvim.client.session.tool_calls import FINISHED_STATUSES, ToolCallTranscript
from acp_nvim.client.session.transcript import PlanItem, ToolCallItem
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

UnstableUpdate = u.SessionUpdateSubagentUpdate | u.SessionUpdatePlanUpdate | u.SessionUpdatePlanRemoved
UNSTABLE_UPDATES = (u.SessionUpdateSubagentUpdate, u.SessionUpdatePlanUpdate, u.SessionUpdatePlanRemoved)


class UnstableTranscript(ToolCallTranscript):
    """The part of the session reducer that takes the unstable updates."""

    def __init__(self) -> None:
        super().__init__()
        self.session_id = ""
        # The children announced on this session, by their session id.
        self.children: dict[str, Subagent] = {}
        self._plans_by_id: dict[str, PlanItem] = {}

    def apply_unstable(self, update: UnstableUpdate) -> Subagent | None:
        """Applies one; returns the child a `subagent_update` announced or changed."""
        if isinstance(update, u.SessionUpdateSubagentUpdate):
            return self._subagent(update)
        if isinstance(update, u.SessionUpdatePlanUpdate):
            self._plan_by_id(update.plan)
        else:
            item = self._plans_by_id.pop(update.plan_id, None)
            if item is not None:
                item.removed = True
                self._replace(item.key)
        return None

    # ---- subagents --------------------------------------------------------------------------------

    def _subagent(self, update: u.SubagentUpdate) -> Subagent:
        child = self.children.get(update.session_id)
        if child is None:
            # Its own transcript is a reducer like this one (built by this one's class: no import cycle).
            state = type(self)(update.session_id)  # type: ignore[call-arg]
            child = Subagent(update.session_id, self.session_id, state)
            self.children[update.session_id] = child
            child.patch(update)
            self._place_child(child)
        else:
            child.patch(update)
        self.child_changed(child)
        return child

    def _place_child(self, child: Subagent) -> None:
        """Under the parent's tool call that names it, else its newest one still running, else one of its
        own."""
        calls = [item for item in reversed(self.items) if isinstance(item, ToolCallItem)]
        named = next((item for item in calls if names_child(item, child.session_id)), None)
        running = next((item for item in calls if item.status not in FINISHED_STATUSES), None)
        item = named or running
        if item is None:
            own = s.ToolCallUpdate(
                tool_call_id=OWN_TOOL_CALL + child.session_id, title=f"Subagent {child.name}", kind="other"
            )
            item = self.update_tool_call(own)
            item.status = "in_progress"
        child.tool_call_key = item.key

    def child_changed(self, child: Subagent) -> None:
        """Its transcript or state changed: the tool call it is shown under is drawn again."""
        if child.tool_call_key is not None:
            self._replace(child.tool_call_key)
        own = self.tool_call(OWN_TOOL_CALL + child.session_id)
        if own is not None and child.work == "idle":
            own.status = {"error": "failed", "cancelled": "cancelled"}.get(
                child.stop_reason or "", "completed"
            )

    def children_cancelled(self) -> None:
        """The parent's turn was cancelled, and its children with it: those still said to run are shown
        cancelled (a later state from the agent says otherwise)."""
        for child in self.children.values():
            if isinstance(child.state, UnstableTranscript):
                child.state.children_cancelled()
                child.state.take_changes()
            if child.running:
                child.work, child.stop_reason, child.asking = "idle", "cancelled", 0
            self.child_changed(child)

    def children_under(self, key: str) -> list[Subagent]:
        return [child for child in self.children.values() if child.tool_call_key == key]

    def all_children(self) -> list[Subagent]:
        """Its children and theirs, parents first."""
        found: list[Subagent] = []
        for child in self.children.values():
            found.append(child)
            if isinstance(child.state, UnstableTranscript):
                found.extend(child.state.all_children())
        return found

    # ---- plans by id ------------------------------------------------------------------------------

    def _plan_by_id(self, plan: u.PlanUpdateContent) -> None:
        item = self._plans_by_id.get(plan.plan_id)
        if item is None:
            item = PlanItem(key=self._new_key(), entries=[])
            self._plans_by_id[plan.plan_id] = item
            self._add(item)
        else:
            self._replace(item.key)
        if isinstance(plan, u.PlanUpdateContentItems):
            item.entries, item.text = list(plan.entries), ""
        elif isinstance(plan, u.PlanUpdateContentMarkdown):
            item.entries, item.text = [], plan.content
        else:
            item.entries, item.text = [], f"[plan]({plan.uri})"

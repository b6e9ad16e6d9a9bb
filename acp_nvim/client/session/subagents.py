"""A session's subagents (ACP's unstable child sessions): each announced by a `subagent_update` on its parent,
kept with the parent's transcript, and shown under the tool call that started it.

A child has a transcript of its own (`SessionState`: its messages, tool calls, plan), reduced from the updates
that name its session id, and what its parent said of it: title, description, current work state, and whether
the client may cancel it alone (`capabilities.cancel`). Which tool call of the parent started it is not in
the protocol: the one whose input names the child (codex-acp's `spawnAgent` names the child's thread, the end
of its session id), else the parent's newest tool call still running, else none: the child is then shown
under a tool call of its own, made for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import unquote

from acp_nvim.client.session.transcript import ToolCallItem
from acp_nvim.protocol import unstable as u

# The tool call made for a child no tool call of its parent names.
OWN_TOOL_CALL = "subagent:"
# A child's own words for its state, as the chat shows them.
STATE_WORDS = {
    "running": "running",
    "requires_action": "requires action",
    "unknown": "status unknown",
}
IDLE_WORDS = {"end_turn": "done", "cancelled": "cancelled", "error": "failed", "refusal": "refused"}
# Of a child's name (a title, or a task it was given), the characters shown.
MAX_NAME_CHARS = 60
# Strings in a tool call's input looked at, at most, when finding the child it names.
MAX_NAMES = 200


class Subagent:
    """One child session, as its parent's updates describe it. `state` is its own transcript (a
    `SessionState`, typed `object` here: the reducer imports this module)."""

    def __init__(self, session_id: str, parent_id: str, state: object) -> None:
        self.session_id = session_id
        self.parent_id = parent_id
        self.state = state
        self.title: str | None = None
        self.description: str | None = None
        self.work: str | None = None
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.can_cancel = False
        # The parent's tool call it is shown under (its key in the parent's transcript).
        self.tool_call_key: str | None = None
        # Permission requests of the child waiting on the user (client/session: counted by the app).
        self.asking = 0
        # The client asked the agent to cancel it (alone or with its parent).
        self.cancel_sent = False

    @property
    def name(self) -> str:
        """What the chat and the picker call it: its title, else the start of its description (codex-acp's
        is the task it was given), else its session id."""
        name = self.title or self.description or self.session_id
        name = " ".join(name.split())
        return name if len(name) <= MAX_NAME_CHARS else name[: MAX_NAME_CHARS - 1] + "…"

    @property
    def running(self) -> bool:
        return self.work in ("running", "requires_action") or self.asking > 0

    def status_words(self) -> str:
        if self.asking:
            return "awaiting permission"
        if self.work == "idle":
            words = IDLE_WORDS.get(self.stop_reason or "end_turn", "idle")
            return words + (f": {self.error}" if self.error else "")
        if self.work is None:
            return "started"
        return STATE_WORDS.get(self.work, self.work.replace("_", " "))

    def patch(self, update: u.SubagentUpdate) -> None:
        """What the parent says of the child: omitted fields keep their value (a `null` reads as omitted:
        the decoded update cannot tell them apart)."""
        if update.title is not None:
            self.title = update.title
        if update.description is not None:
            self.description = update.description
        if update.capabilities is not None:
            self.can_cancel = update.capabilities.cancel is not None
        state = update.state
        if state is None:
            return
        if isinstance(state, u.StateUpdateIdle):
            self.work, self.stop_reason = "idle", state.stop_reason
            self.error = state.error.message if state.error is not None else None
            self.cancel_sent = False
        elif isinstance(state, u.StateUpdateOther):
            self.work = state.state
        else:
            self.work = _STATE_TAGS.get(type(state), "unknown")


_STATE_TAGS: dict[type, str] = {
    u.StateUpdateRunning: "running",
    u.StateUpdateRequiresAction: "requires_action",
    u.StateUpdateUnknown: "unknown",
}


def _strings(value: object, budget: list[int]) -> Iterator[str]:
    if budget[0] <= 0:
        return
    if isinstance(value, str):
        budget[0] -= 1
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item, budget)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, budget)


def names_child(item: ToolCallItem, child_id: str) -> bool:
    """Whether the tool call's input names the child: its session id, or the last part of it (codex-acp's
    child ids are `<parent>:subagent:<thread>`, URL-encoded, and its spawnAgent input names the thread)."""
    tail = unquote(child_id.rsplit(":", 1)[-1])
    return any(text in (child_id, tail) for text in _strings(item.raw_input, [MAX_NAMES]) if text)

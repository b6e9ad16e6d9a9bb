"""An in-memory `Editor` for client tests: records what the agent streams, answers permissions by a policy."""

from __future__ import annotations

from collections.abc import Callable

import anyio

from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.protocol import schema as s

PermissionPolicy = Callable[[s.RequestPermissionRequest], s.RequestPermissionResponse]


def choose(kind_prefix: str) -> PermissionPolicy:
    """A policy that picks the first option whose kind starts with `kind_prefix` ("allow" or "reject")."""

    def policy(request: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        option = next(o for o in request.options if o.kind.startswith(kind_prefix))
        return s.RequestPermissionResponse(
            outcome=s.RequestPermissionOutcomeSelected(option_id=option.option_id)
        )

    return policy


class RecordingEditor(HeadlessEditor):
    def __init__(self, policy: PermissionPolicy | None = None) -> None:
        self.updates: list[s.SessionNotification] = []
        self.permission_requests: list[s.RequestPermissionRequest] = []
        self.policy = policy or choose("allow")
        self.permission_asked = anyio.Event()
        self.hold_permission: anyio.Event | None = None
        self.updated = anyio.Event()

    def session_updates(self, notifications: list[s.SessionNotification]) -> None:
        self.updates += notifications
        self.updated.set()
        self.updated = anyio.Event()

    async def wait_for_update(self, kind: type[object]) -> None:
        while not any(isinstance(u.update, kind) for u in self.updates):
            await self.updated.wait()

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        self.permission_requests.append(params)
        self.permission_asked.set()
        if self.hold_permission is not None:
            await self.hold_permission.wait()
            return s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled())
        return self.policy(params)

    def agent_text(self) -> str:
        return "".join(
            u.update.content.text
            for u in self.updates
            if isinstance(u.update, s.SessionUpdateAgentMessageChunk)
            and isinstance(u.update.content, s.ContentBlockText)
        )

    def kinds(self) -> list[str]:
        return [type(u.update).__name__ for u in self.updates]

    def tool_statuses(self, tool_call_id: str) -> list[str]:
        statuses: list[str] = []
        for u in self.updates:
            update = u.update
            if (
                isinstance(update, s.SessionUpdateToolCall | s.SessionUpdateToolCallUpdate)
                and update.tool_call_id == tool_call_id
                and update.status is not None
            ):
                statuses.append(update.status)
        return statuses

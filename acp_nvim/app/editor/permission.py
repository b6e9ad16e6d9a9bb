"""Permission requests: one picker at a time, every request answered exactly once.

Requests that arrive while a picker is open — this one or any other (the port's `pickers`: one queue of
pickers) — wait their turn. A turn cancel (or stopping the agent) answers the open request and every queued
one with `cancelled`, as the protocol requires after `session/cancel`. The user's choice comes back from the
port's `ask_permission`; the question of a request already answered is given up there, and a late choice for
it is dropped by the port.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from acp_nvim.app.editor.port import EditorPort
from acp_nvim.app.views import PermissionView
from acp_nvim.protocol import schema as s

REJECT_KINDS = ("reject_once", "reject_always")


def dismissed_outcome(options: list[s.PermissionOption]) -> s.RequestPermissionOutcome:
    """Closing the picker without a choice means "no": the first reject option, else `cancelled`."""
    for kind in REJECT_KINDS:
        for option in options:
            if option.kind == kind:
                return s.RequestPermissionOutcomeSelected(option_id=option.option_id)
    return s.RequestPermissionOutcomeCancelled()


def chosen_outcome(
    request: s.RequestPermissionRequest, view: PermissionView, answer: str | None
) -> s.RequestPermissionOutcome:
    """The choice as an outcome: one of the request's options, or one the application added to the question
    (an "always allow", app/permissions/service.py), which it turns into one of the request's before
    answering."""
    offered = {option.option_id for option in request.options}
    offered |= {choice.id for choice in view.options}
    if answer is not None and answer in offered:
        return s.RequestPermissionOutcomeSelected(option_id=answer)
    return dismissed_outcome(request.options)


class PermissionBroker:
    def __init__(self, editor: EditorPort, on_busy: Callable[[bool], None]) -> None:
        """`editor` shows the picker and carries the answer back (its `pickers` lock is held while one is
        open); `on_busy(True/False)` when a picker opens/closes."""
        self._editor = editor
        self._on_busy = on_busy
        self._lock = editor.pickers
        # The open question's scope, and its request: a cancel gives the question up.
        self._open: dict[int, tuple[anyio.CancelScope, s.RequestPermissionRequest]] = {}
        # Per session: a cancelled turn answers its own queued requests, not another session's.
        self._session_epochs: dict[str, int] = {}
        # Requests waiting for the pickers lock, by session: a cancel must answer them at once, not when some
        # other picker (a mode, a session to open) happens to close.
        self._queued: list[tuple[str, anyio.CancelScope]] = []

    async def ask(
        self, request: s.RequestPermissionRequest, view: PermissionView
    ) -> s.RequestPermissionOutcome:
        session_epoch = self._session_epochs.get(request.session_id, 0)
        queued = (request.session_id, anyio.CancelScope())
        self._queued.append(queued)
        acquired = False
        try:
            with queued[1]:
                await self._lock.acquire()
                acquired = True
        finally:
            self._queued.remove(queued)
        if not acquired:
            return s.RequestPermissionOutcomeCancelled()
        try:
            if session_epoch != self._session_epochs.get(request.session_id, 0):
                # Cancelled while waiting in the queue.
                return s.RequestPermissionOutcomeCancelled()
            scope = anyio.CancelScope()
            key = id(scope)
            self._open[key] = (scope, request)
            self._on_busy(True)
            answered = False
            answer: str | None = None
            try:
                with scope:
                    answer = await self._editor.ask_permission(view)
                    answered = True
            finally:
                del self._open[key]
                self._on_busy(False)
            if not answered:
                return s.RequestPermissionOutcomeCancelled()
            return chosen_outcome(request, view, answer)
        finally:
            self._lock.release()

    def cancel_session(self, session_id: str) -> None:
        """Answers the session's open request and all its queued ones with `cancelled`."""
        self._session_epochs[session_id] = self._session_epochs.get(session_id, 0) + 1
        for owner, scope in self._queued:
            if owner == session_id:
                scope.cancel()
        for scope, request in self._open.values():
            if request.session_id == session_id:
                scope.cancel()

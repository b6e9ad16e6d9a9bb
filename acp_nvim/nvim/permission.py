"""Permission requests: one picker at a time, every request answered exactly once.

Requests that arrive while a picker is open — this one or any other (`ui.py`: one queue of pickers) — wait
their turn. A turn cancel (or stopping the agent) answers the
open request and every queued one with `cancelled`, as the protocol requires after `session/cancel`. The
user's choice comes back from Lua through the ui token channel (`acp_reply`) and resolves the waiting
request; a late choice for a request already answered is dropped there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from acp_nvim.nvim import lua_api
from acp_nvim.nvim.ui import Slot, Ui
from acp_nvim.protocol import schema as s

REJECT_KINDS = ("reject_once", "reject_always")
# What a cancelled request's slot is resolved with: no answer from Lua can be this object.
_CANCELLED = object()


def dismissed_outcome(options: list[s.PermissionOption]) -> s.RequestPermissionOutcome:
    """Closing the picker without a choice means "no": the first reject option, else `cancelled`."""
    for kind in REJECT_KINDS:
        for option in options:
            if option.kind == kind:
                return s.RequestPermissionOutcomeSelected(option_id=option.option_id)
    return s.RequestPermissionOutcomeCancelled()


def _outcome(
    request: s.RequestPermissionRequest, view: dict[str, Any], answer: Any
) -> s.RequestPermissionOutcome:
    """The choice as an outcome: one of the request's options, or one the application added to the question
    (an "always allow", app/permissions.py), which it turns into one of the request's before answering."""
    if answer is _CANCELLED:
        return s.RequestPermissionOutcomeCancelled()
    offered = {option.option_id for option in request.options}
    offered |= {str(choice.get("id")) for choice in view.get("options", []) if isinstance(choice, dict)}
    if isinstance(answer, str) and answer in offered:
        return s.RequestPermissionOutcomeSelected(option_id=answer)
    return dismissed_outcome(request.options)


class PermissionBroker:
    def __init__(self, ui: Ui, on_busy: Callable[[bool], None]) -> None:
        """`ui` shows the picker and carries the answer back (its `pickers` lock is held while one is open);
        `on_busy(True/False)` when a picker opens/closes."""
        self._ui = ui
        self._on_busy = on_busy
        self._lock = ui.pickers
        self._open: dict[int, tuple[Slot, s.RequestPermissionRequest]] = {}
        self._epoch = 0
        # Per session: a cancelled turn answers its own queued requests, not another session's.
        self._session_epochs: dict[str, int] = {}
        # Requests waiting for the pickers lock, by session: a cancel must answer them at once, not when some
        # other picker (a mode, a session to open) happens to close.
        self._queued: list[tuple[str, anyio.CancelScope]] = []

    async def ask(
        self, request: s.RequestPermissionRequest, view: dict[str, Any]
    ) -> s.RequestPermissionOutcome:
        epoch = self._epoch
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
            if epoch != self._epoch or session_epoch != self._session_epochs.get(request.session_id, 0):
                # Cancelled while waiting in the queue.
                return s.RequestPermissionOutcomeCancelled()
            with self._ui.slot() as slot:
                self._open[slot.token] = (slot, request)
                self._on_busy(True)
                try:
                    answer = await self._ui.ask_with(slot, lua_api.ASK_PERMISSION, view)
                finally:
                    del self._open[slot.token]
                    self._on_busy(False)
            return _outcome(request, view, answer)
        finally:
            self._lock.release()

    def cancel_all(self) -> None:
        """Answers the open request and all queued ones with `cancelled`."""
        self._epoch += 1
        for _, scope in self._queued:
            scope.cancel()
        for slot, _ in self._open.values():
            slot.set(_CANCELLED)

    def cancel_session(self, session_id: str) -> None:
        """Like `cancel_all`, for the requests of one session only."""
        self._session_epochs[session_id] = self._session_epochs.get(session_id, 0) + 1
        for owner, scope in self._queued:
            if owner == session_id:
                scope.cancel()
        for slot, request in self._open.values():
            if request.session_id == session_id:
                slot.set(_CANCELLED)

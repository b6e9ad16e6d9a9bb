"""Permission requests: one picker at a time, every request answered exactly once.

Requests that arrive while a picker is open — this one or any other (`ui.py`: one queue of pickers) — wait
their turn. A turn cancel (or stopping the agent) answers the
open request and every queued one with `cancelled`, as the protocol requires after `session/cancel`. The
user's choice comes back from Lua as a notification and resolves the waiting request; a late choice for a
request already answered is ignored.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.permission")

ASK = "require('acp_nvim.permission').ask(...)"
CLOSE = "require('acp_nvim.permission').close(...)"
REJECT_KINDS = ("reject_once", "reject_always")


@dataclass
class _Pending:
    request: s.RequestPermissionRequest
    answered: anyio.Event = field(default_factory=anyio.Event)
    outcome: s.RequestPermissionOutcome | None = None


def dismissed_outcome(options: list[s.PermissionOption]) -> s.RequestPermissionOutcome:
    """Closing the picker without a choice means "no": the first reject option, else `cancelled`."""
    for kind in REJECT_KINDS:
        for option in options:
            if option.kind == kind:
                return s.RequestPermissionOutcomeSelected(option_id=option.option_id)
    return s.RequestPermissionOutcomeCancelled()


class PermissionBroker:
    def __init__(
        self, show: Callable[..., None], on_busy: Callable[[bool], None], pickers: anyio.Lock
    ) -> None:
        """`show(code, *args)` runs Lua (the bridge); `on_busy(True/False)` when a picker opens/closes;
        `pickers` is the lock every picker holds while open."""
        self._show = show
        self._on_busy = on_busy
        self._lock = pickers
        self._ids = itertools.count(1)
        self._open: dict[int, _Pending] = {}
        self._epoch = 0
        # Per session: a cancelled turn answers its own queued requests, not another session's.
        self._session_epochs: dict[str, int] = {}
        # Requests waiting for the pickers lock, by session: a cancel must answer them at once, not when some
        # other picker (a mode, a session to open) happens to close.
        self._queued: list[tuple[str, anyio.CancelScope]] = []

    @property
    def pending(self) -> int:
        return len(self._open)

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
            request_id = next(self._ids)
            pending = _Pending(request)
            self._open[request_id] = pending
            self._on_busy(True)
            try:
                self._show(ASK, request_id, view)
                await pending.answered.wait()
            finally:
                self._open.pop(request_id, None)
                self._on_busy(False)
            assert pending.outcome is not None
            return pending.outcome
        finally:
            self._lock.release()

    def answer(self, request_id: int, option_id: str | None) -> None:
        pending = self._open.get(request_id)
        if pending is None or pending.answered.is_set():
            log.debug("late answer for permission request %s ignored", request_id)
            return
        known = {option.option_id for option in pending.request.options}
        if option_id is not None and option_id in known:
            pending.outcome = s.RequestPermissionOutcomeSelected(option_id=option_id)
        else:
            pending.outcome = dismissed_outcome(pending.request.options)
        pending.answered.set()

    def cancel_all(self) -> None:
        """Answers the open request and all queued ones with `cancelled`."""
        self._epoch += 1
        for _, scope in self._queued:
            scope.cancel()
        for request_id, pending in list(self._open.items()):
            if not pending.answered.is_set():
                pending.outcome = s.RequestPermissionOutcomeCancelled()
                pending.answered.set()
                self._show(CLOSE, request_id)

    def cancel_session(self, session_id: str) -> None:
        """Like `cancel_all`, for the requests of one session only."""
        self._session_epochs[session_id] = self._session_epochs.get(session_id, 0) + 1
        for owner, scope in self._queued:
            if owner == session_id:
                scope.cancel()
        for request_id, pending in list(self._open.items()):
            if pending.request.session_id == session_id and not pending.answered.is_set():
                pending.outcome = s.RequestPermissionOutcomeCancelled()
                pending.answered.set()
                self._show(CLOSE, request_id)

"""Answers that come back from Lua later: a picker's choice, a terminal's exit.

The anyio side opens a slot, hands its token to Lua, and awaits the slot; Lua sends
`rpcnotify(channel, "acp_reply", token, value)` (`require("acp_nvim.reply").send`) when the answer exists.
Nothing polls, and a reply for a slot nobody waits on any more (the request was cancelled) is dropped.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio

log = logging.getLogger("acp_nvim.replies")


class Slot:
    def __init__(self, token: int) -> None:
        self.token = token
        self.value: Any = None
        self._done = anyio.Event()

    def set(self, value: Any) -> None:
        if not self._done.is_set():
            self.value = value
            self._done.set()

    async def wait(self) -> Any:
        await self._done.wait()
        return self.value


class Replies:
    """Only used from the anyio thread."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._open: dict[int, Slot] = {}

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        slot = Slot(next(self._ids))
        self._open[slot.token] = slot
        try:
            yield slot
        finally:
            self._open.pop(slot.token, None)

    def resolve(self, token: Any, value: Any) -> None:
        slot = self._open.get(token) if isinstance(token, int) else None
        if slot is None:
            log.debug("reply for unknown or finished token %r dropped", token)
            return
        slot.set(value)

"""Turns a stream of protocol trouble from one agent into a few messages a person can read.

A broken agent can send the same fault thousands of times a second (garbage lines, updates for a session that
is not open). Each one is logged where it happens; the user gets one message per kind of trouble when it first
appears. Only trouble that goes on past the interval brings another message, a count ("… 999 more"); a burst
that is over leaves its count in the log (`flush`) and in `:AcpLog`, not in a second notification.
Knows nothing of Neovim: the sink is any callable (the Neovim layer hooks it to `vim.notify`).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Literal, TypeAlias

import msgspec

log = logging.getLogger("acp_nvim.client")

TroubleKind: TypeAlias = Literal[
    "unreadable",
    "oversized",
    "not_jsonrpc",
    "bad_notification",
    "malformed_update",
    "unknown_session",
    "too_deep",
]
TroubleSink: TypeAlias = Callable[[str], None]

DEFAULT_INTERVAL = 10.0
LOG_HINT = ":AcpLog"
_DETAIL_MAX = 160

# The words of each kind: what happened once, what is counted afterwards.
PHRASES: dict[TroubleKind, tuple[str, str]] = {
    "unreadable": ("sent a line that is not JSON", "more lines that are not JSON"),
    "oversized": (
        "sent a message over the size limit; it was dropped",
        "more oversized messages (dropped)",
    ),
    "not_jsonrpc": ("sent JSON that is not a valid JSON-RPC message", "more invalid JSON-RPC messages"),
    "bad_notification": ("sent a notification with invalid params", "more invalid notifications"),
    "malformed_update": (
        "sent a malformed session/update; it was dropped",
        "more malformed session/updates (dropped)",
    ),
    "unknown_session": (
        "sent updates for a session that is not open; they are ignored",
        "more updates for sessions that are not open (ignored)",
    ),
    "too_deep": (
        "sent a message nested too deeply to read; it was refused",
        "more messages nested too deeply (refused)",
    ),
}

# The connection's finer kinds, grouped as the user would see them: a line that is not UTF-8 is, to a
# person, just another line that is not JSON.
_FROM_PROTOCOL_ERROR: dict[str, TroubleKind] = {
    "oversized": "oversized",
    "not_utf8": "unreadable",
    "not_json": "unreadable",
    "invalid_message": "not_jsonrpc",
    "malformed_error": "not_jsonrpc",
    "invalid_params": "bad_notification",
    "too_deep": "too_deep",
}


class _Category(msgspec.Struct):
    unreported: int = 0
    last_message: float = -math.inf


class Diagnostics:
    """Rate-limited trouble reports for one agent.

    `report(kind, detail)` is cheap and synchronous (it runs on the connection's reader, once per bad line);
    `protocol_error` is the connection's `on_protocol_error` hook. A failing sink is logged, never raised.
    """

    def __init__(
        self,
        agent_name: str,
        sink: TroubleSink,
        *,
        interval: float = DEFAULT_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.agent_name = agent_name
        self._sink = sink
        self._interval = interval
        self._clock = clock
        self._categories: dict[TroubleKind, _Category] = {}

    # ---- input ---------------------------------------------------------------------------------------

    def report(self, kind: TroubleKind, detail: str | None = None) -> None:
        category = self._categories.get(kind)
        if category is None:
            category = self._categories[kind] = _Category()
        now = self._clock()
        if now - category.last_message < self._interval:
            category.unreported += 1
            return
        if category.unreported:
            # The interval is over but the burst goes on: the summary covers this one too.
            category.unreported += 1
            self._summarize(kind, category, now)
            return
        first, _ = PHRASES[kind]
        text = f"agent {self.agent_name} {first}"
        if detail:
            # The detail may quote the agent's data: a notification must stay one readable line.
            detail = " ".join(detail.split())
            text += f": {detail[:_DETAIL_MAX]}…" if len(detail) > _DETAIL_MAX else f": {detail}"
        self._emit(f"{text} (see {LOG_HINT})")
        category.last_message = now

    def protocol_error(self, message: str) -> None:
        """The connection's `on_protocol_error` hook; a plain string without a kind counts as not_jsonrpc."""
        kind = _FROM_PROTOCOL_ERROR.get(getattr(message, "kind", ""), "not_jsonrpc")
        self.report(kind)

    # ---- output --------------------------------------------------------------------------------------

    def flush(self) -> None:
        """Log the counts not yet reported (end of a turn, agent stopped): the user already had one message
        per kind, and a second one for a burst that is over would only be noise."""
        for kind, category in self._categories.items():
            if category.unreported:
                _, more = PHRASES[kind]
                log.warning("agent %s sent %d %s", self.agent_name, category.unreported, more)
                category.unreported = 0

    # ---- internals -----------------------------------------------------------------------------------

    def _summarize(self, kind: TroubleKind, category: _Category, now: float) -> None:
        _, more = PHRASES[kind]
        count, category.unreported = category.unreported, 0
        category.last_message = now
        self._emit(f"agent {self.agent_name} sent {count} {more} (see {LOG_HINT})")

    def _emit(self, message: str) -> None:
        log.warning("%s", message)
        try:
            self._sink(message)
        except Exception:
            log.exception("trouble sink failed")

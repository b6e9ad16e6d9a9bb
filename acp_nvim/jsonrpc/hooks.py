"""What a connection's observers are told: every line read or sent, and every protocol error. An observer that
raises is logged, never allowed to break the connection."""

from __future__ import annotations

import logging
from typing import cast

from .framing import Oversized
from .wire import Direction, MessageHook, MessagesHook, ProtocolError, ProtocolErrorHook, ProtocolErrorKind

logger = logging.getLogger("acp_nvim.jsonrpc")


class ConnectionHooks:
    """`on_message(direction, line)` sees every line read or sent, one call each; `on_messages(direction,
    lines)` the same lines, those of one read in one call; `on_protocol_error(report)` each protocol error."""

    __slots__ = ("on_message", "on_messages", "on_protocol_error")

    def __init__(
        self,
        on_message: MessageHook | None,
        on_messages: MessagesHook | None,
        on_protocol_error: ProtocolErrorHook | None,
    ) -> None:
        self.on_message = on_message
        self.on_messages = on_messages
        self.on_protocol_error = on_protocol_error

    def sent(self, line: bytes) -> None:
        if self.on_message is not None:
            self.line_read_or_sent("out", line)
        if self.on_messages is not None:
            try:
                self.on_messages("out", [line])
            except Exception:
                logger.exception("on_messages hook failed")

    def line_read_or_sent(self, direction: Direction, line: bytes) -> None:
        """`on_message`, which must be set: a line read is told as it is handled (`read` tells `on_messages`
        of the whole read first)."""
        try:
            cast(MessageHook, self.on_message)(direction, line)
        except Exception:
            logger.exception("on_message hook failed")

    def read(self, items: list[bytes | Oversized], oversized: bool) -> None:
        """The lines of one read, at once (`oversized`: some items are not lines): a stream's hundreds of
        lines per read cost the hook one call."""
        if self.on_messages is None or not items:
            return
        lines = [item for item in items if not isinstance(item, Oversized)] if oversized else items
        try:
            self.on_messages("in", cast(list[bytes], lines))
        except Exception:
            logger.exception("on_messages hook failed")

    def protocol_error(self, kind: ProtocolErrorKind, message: str) -> None:
        logger.warning("%s", message)
        if self.on_protocol_error is None:
            return
        try:
            self.on_protocol_error(ProtocolError(kind, message))
        except Exception:
            logger.exception("on_protocol_error hook failed")

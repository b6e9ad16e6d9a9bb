"""What a connection answers to a line it cannot take: too large, nested too deeply, not a JSON-RPC message,
not UTF-8 or not JSON. Each is reported (the `on_protocol_error` hook, the log) and gets at most one answer:
under the line's id when the framing or a peek could read it, else under null (JSON-RPC 2.0 §5); an answer of
the peer's that cannot be read fails the request of ours it answers instead of leaving it waiting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from .errors import InternalError, InvalidParams, InvalidRequest, ParseError, RpcError
from .framing import Oversized, format_size
from .peek import Head, peek
from .pending import PendingRequests
from .wire import DEEP_SCAN_LIMIT, TOO_DEEP, ProtocolErrorKind, RequestId, preview

logger = logging.getLogger("acp_nvim.jsonrpc")

SendError = Callable[[RequestId, RpcError], None]
Report = Callable[[ProtocolErrorKind, str], None]


class BadLines:
    def __init__(
        self, peer: str, max_size: int, pending: PendingRequests, send_error: SendError, report: Report
    ) -> None:
        self._peer = peer
        self._max_size = max_size
        self._pending = pending
        self._send_error = send_error
        self._report = report

    def not_utf8(self, line: bytes) -> None:
        self._report("not_utf8", f"the {self._peer} sent a line that is not UTF-8: {preview(line)}")
        self._send_error(None, ParseError())

    def not_json(self, line: bytes) -> None:
        self._report("not_json", f"the {self._peer} sent a line that is not JSON: {preview(line)}")
        self._send_error(None, ParseError())

    def oversized(self, item: Oversized) -> None:
        limit = format_size(self._max_size)
        self._report(
            "oversized",
            f"message of more than {limit} from the {self._peer} was dropped ({item.size} bytes)",
        )
        # The head kept by the framing tells whom to answer when the id came before the bulk of the message.
        head = peek(item.head)
        data = {"size": item.size, "limit": self._max_size}
        if self._fails_pending(
            head,
            InternalError(
                f"the answer of the {self._peer} was dropped: {item.size} bytes, over {limit}", data
            ),
        ):
            return
        # -32600: the message is not a request this side accepts (its size is), and nothing was parsed.
        error = InvalidRequest(
            f"Invalid request: message of {item.size} bytes dropped, over the {limit} limit", data
        )
        self._answer_unreadable(head, error)

    def too_deep(self, line: bytes) -> None:
        self._report("too_deep", f"the {self._peer} sent a message {TOO_DEEP}: {preview(line)}")
        head = peek(line[:DEEP_SCAN_LIMIT])
        if self._fails_pending(head, InternalError(f"the answer of the {self._peer} is {TOO_DEEP}")):
            return
        if head.method and head.id is not None:
            # The request itself is readable; what the decoder refused is inside it, in practice its params.
            self._send_error(head.id, InvalidParams(f"Invalid params: {TOO_DEEP}"))
            return
        self._answer_unreadable(head, ParseError(f"Parse error: message {TOO_DEEP}"))

    def _fails_pending(self, head: Head, error: RpcError) -> bool:
        """True when `head` is an answer (never answered back): the request of ours it answers fails with
        `error` instead of waiting forever, when its id could be read."""
        if not head.response or head.method:
            return False
        if not self._pending.fail(head.id, error):
            logger.warning("an unreadable answer from the %s (id %r) matches no request", self._peer, head.id)
        return True

    def _answer_unreadable(self, head: Head, error: RpcError) -> None:
        """A line that could not be decoded gets one answer, under its id when that could be read, else under
        null (JSON-RPC 2.0 §5) — except a notification, recognised only when the whole object was read."""
        if head.method and head.complete and not head.has_id:
            return
        self._send_error(head.id if head.has_id else None, error)

    def invalid_request(self, request_id: RequestId, detail: str, line: bytes) -> None:
        self._report(
            "invalid_message",
            f"the {self._peer} sent an invalid JSON-RPC message ({detail}): {preview(line)}",
        )
        self._send_error(request_id, InvalidRequest(f"Invalid request: {detail}"))

"""Our requests waiting for the peer's answers: their ids, the answer or failure each one gets, and the ids
whose callers gave up (a late answer to one of those is expected, not worth a warning).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import msgspec

from .errors import ConnectionClosed, InternalError, RpcError
from .wire import NULL, ProtocolErrorKind, RequestId, WireError, preview

logger = logging.getLogger("acp_nvim.jsonrpc")


class Waiter:
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: msgspec.Raw | None = None
        self.error: Exception | None = None


class PendingRequests:
    def __init__(self, peer_name: str, protocol_error: Callable[[ProtocolErrorKind, str], None]) -> None:
        self._peer = peer_name
        # Reports an answer whose error is malformed; the request gets an error of ours in its place.
        self._protocol_error = protocol_error
        self._error_decoder = msgspec.json.Decoder(WireError)
        self._next_id = 0
        self._waiting: dict[int, Waiter] = {}
        self._abandoned: set[int] = set()

    def new_id(self) -> int:
        request_id = self._next_id
        self._next_id += 1
        return request_id

    def wait_for(self, request_id: int) -> Waiter:
        waiter = Waiter()
        self._waiting[request_id] = waiter
        return waiter

    def give_up(self, request_id: int) -> bool:
        """Forgets a request no answer reached; True when it was still waiting (its caller is cancelled, the
        connection is up), False when it was answered or failed."""
        if self._waiting.pop(request_id, None) is None:
            return False
        self._abandoned.add(request_id)
        return True

    def fail(self, request_id: RequestId, error: RpcError) -> bool:
        """The request `request_id` fails with `error`; False when no request of ours has that id."""
        waiter = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if waiter is None:
            return False
        waiter.error = error
        waiter.done.set()
        return True

    def fail_all(self, reason: str) -> None:
        waiting, self._waiting = self._waiting, {}
        for waiter in waiting.values():
            # A fresh exception per waiter: re-raising one shared instance would chain its tracebacks.
            waiter.error = ConnectionClosed(reason)
            waiter.done.set()

    def answer(
        self,
        request_id: RequestId,
        result: msgspec.Raw,
        error: msgspec.Raw,
    ) -> None:
        waiter = self._waiting.pop(request_id, None) if isinstance(request_id, int) else None
        if waiter is None:
            if isinstance(request_id, int) and request_id in self._abandoned:
                self._abandoned.discard(request_id)
                logger.debug("late answer to cancelled request %d ignored", request_id)
            elif request_id is None and error:
                logger.warning(
                    "the %s reported an error about no request: %s",
                    self._peer,
                    preview(bytes(memoryview(error))),
                )
            else:
                logger.warning("ignored an answer to unknown request id %r", request_id)
            return
        if error and error != NULL:
            waiter.error = self._decode_error(error)
        else:
            waiter.result = result if result else NULL
        waiter.done.set()

    def _decode_error(self, raw: msgspec.Raw) -> RpcError:
        try:
            wire = self._error_decoder.decode(raw)
        except (msgspec.DecodeError, RecursionError) as exc:
            text = preview(bytes(memoryview(raw)))
            self._protocol_error(
                "malformed_error", f"the {self._peer} sent a malformed error ({exc}): {text}"
            )
            return InternalError(f"malformed error from the {self._peer}: {text}")
        return RpcError.from_wire(wire.code, wire.message, wire.data)

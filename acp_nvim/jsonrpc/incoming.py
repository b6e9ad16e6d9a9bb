"""The peer's requests to us: each runs in a task of its own under a cancel scope, answered with its result or
the JSON-RPC error its handler's failure maps to, and cancelled by the protocol's cancel notification.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import msgspec
from anyio.abc import TaskGroup

from .errors import InternalError, InvalidParams, RequestCancelled, RpcError
from .wire import NULL, TOO_DEEP, CancelParams, OutResult, RequestHandler, RequestId, describe

logger = logging.getLogger("acp_nvim.jsonrpc")


class IncomingRequests:
    """The requests of the peer still running, by id, and the one way each is answered."""

    def __init__(
        self,
        on_request: RequestHandler,
        *,
        peer_name: str,
        cancel_method: str | None,
        encode: Callable[[msgspec.Struct], bytes],
        enqueue: Callable[[bytes], None],
        send_error: Callable[[RequestId, RpcError], None],
    ) -> None:
        self._on_request = on_request
        self._peer = peer_name
        self._cancel_method = cancel_method
        self._encode = encode
        self._enqueue = enqueue
        self._send_error = send_error
        self._cancel_decoder = msgspec.json.Decoder(CancelParams)
        self._running: dict[RequestId, anyio.CancelScope] = {}

    def cancel(self, params: msgspec.Raw | None) -> None:
        try:
            request_id = self._cancel_decoder.decode(params if params is not None else NULL).request_id
        except (msgspec.DecodeError, RecursionError) as exc:
            logger.warning("ignored malformed %s from the %s: %s", self._cancel_method, self._peer, exc)
            return
        scope = self._running.get(request_id)
        if scope is None:
            logger.debug("%s for request %r, which is not running", self._cancel_method, request_id)
            return
        scope.cancel()

    def start(self, request_id: RequestId, method: str, params: msgspec.Raw | None, tg: TaskGroup) -> None:
        # The scope exists before the task starts, so a cancel notification right behind the request finds it.
        scope = anyio.CancelScope()
        if request_id in self._running:
            logger.warning("the %s reused id %r of a request still running", self._peer, request_id)
        else:
            self._running[request_id] = scope
        tg.start_soon(self._run, request_id, method, params, scope)

    async def _run(
        self, request_id: RequestId, method: str, params: msgspec.Raw | None, scope: anyio.CancelScope
    ) -> None:
        error: RpcError | None = None
        result: object = None
        try:
            with scope:
                try:
                    result = await self._on_request(method, params)
                except RpcError as exc:
                    error = exc
                except msgspec.ValidationError as exc:
                    error = InvalidParams(f"Invalid params: {exc}")
                except RecursionError:
                    # The handler's typed decode runs deeper in the stack than the envelope's did.
                    error = InvalidParams(f"Invalid params: {TOO_DEEP}")
                except Exception as exc:
                    logger.exception("handler for the %s request failed", method)
                    error = InternalError(f"Internal error: {describe(exc)}")
        finally:
            if self._running.get(request_id) is scope:
                del self._running[request_id]
        if scope.cancelled_caught:
            error = RequestCancelled()
        if error is not None:
            self._send_error(request_id, error)
            return
        try:
            data = self._encode(OutResult("2.0", request_id, result))
        except Exception as exc:
            logger.exception("result of the %s request could not be encoded", method)
            self._send_error(
                request_id, InternalError(f"Internal error: unencodable result: {describe(exc)}")
            )
            return
        self._enqueue(data)

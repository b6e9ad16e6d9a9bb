"""One JSON-RPC 2.0 connection over a pair of byte streams, serving both roles at once.

Tasks inside `serve()`: one reader (framing, decoding and in-order dispatch), one writer (drains the outbox,
so messages never interleave), and one task per incoming request (a slow handler blocks neither the reader
nor the peer's other requests).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable
from typing import NoReturn, cast

import anyio
import msgspec
from anyio.abc import AnyByteReceiveStream, AnyByteSendStream, TaskGroup
from msgspec import UNSET, UnsetType

from .bad_lines import BadLines
from .errors import ConnectionClosed, RpcError
from .framing import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, Oversized
from .hooks import ConnectionHooks
from .incoming import IncomingRequests
from .pending import PendingRequests
from .wire import (
    NULL,
    TOO_DEEP,
    CancelParams,
    ClosedReason,
    Envelope,
    MessageHook,
    MessagesHook,
    NotificationHandler,
    NotificationRoute,
    OutError,
    OutErrorBody,
    OutNotification,
    OutRequest,
    ProtocolErrorHook,
    RequestHandler,
    RequestId,
    describe,
    is_utf8,
    preview,
    usable_id,
)

logger = logging.getLogger("acp_nvim.jsonrpc")


class Connection:
    """A JSON-RPC 2.0 peer over newline-delimited JSON.

    `on_request(method, params)` answers the peer's requests: return any msgspec-encodable result, or raise
    `RpcError` (e.g. `MethodNotFound.for_method(method)`, `InvalidParams(...)`) to answer with an error; a
    `msgspec.ValidationError` escaping it is answered with -32602, any other exception with -32603.
    `on_notification(method, params)` is awaited in arrival order on the reader: keep it quick and never
    await one of our own `request()`s inside it (the answer is read by the same task). A `route` takes the
    valid lines of one notification method (the bulk of a stream) in one decode, in the same order.
    `on_message(direction, line)` sees every line read or sent; `on_messages(direction, lines)` the same, the
    lines of one read in one call.
    `params` is None when the message had none (or null).

    The caller owns the streams: `serve()` neither closes them nor the process behind them.
    """

    def __init__(
        self,
        receive: AnyByteReceiveStream,
        send: AnyByteSendStream,
        *,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        route: NotificationRoute | None = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        closed_reason: ClosedReason | None = None,
        on_message: MessageHook | None = None,
        on_messages: MessagesHook | None = None,
        on_protocol_error: ProtocolErrorHook | None = None,
        peer_name: str = "peer",
        cancel_method: str | None = None,
    ) -> None:
        self._receive = receive
        self._send = send
        self._on_notification = on_notification
        self._route = route
        self._closed_reason = closed_reason
        self._hooks = ConnectionHooks(on_message, on_messages, on_protocol_error)
        self._protocol_error = self._hooks.protocol_error
        self._peer = peer_name
        # The protocol above names its cancel notification (ACP has one); None: requests are never cancelled.
        self._cancel_method = cancel_method
        self._splitter = LineSplitter(max_message_size)
        self._encoder = msgspec.json.Encoder()
        self._envelope_decoder = msgspec.json.Decoder(Envelope)
        # Unbounded: enqueueing never waits, so the reader can answer garbage while the peer is not reading,
        # and a cancelled caller can still queue its cancel notification without a checkpoint.
        self._outbox_send, self._outbox_receive = anyio.create_memory_object_stream[bytes](math.inf)
        self._pending = PendingRequests(peer_name, self._protocol_error)
        self._bad = BadLines(
            peer_name, max_message_size, self._pending, self._send_error, self._protocol_error
        )
        self._incoming = IncomingRequests(
            on_request,
            peer_name=peer_name,
            cancel_method=cancel_method,
            encode=self._encode,
            enqueue=self._enqueue,
            send_error=self._send_error,
        )
        self._serving = False
        self._closing = False
        self._closed_message: str | None = None
        # Created on first wait: anyio.Event needs a running event loop, __init__ may not have one.
        self._closed_event: anyio.Event | None = None

    @property
    def closed(self) -> bool:
        """True once the peer's stream ended or broke (or `serve()` stopped): requests now fail."""
        return self._closing

    @property
    def max_message_size(self) -> int:
        return self._splitter.max_size

    async def serve(self) -> None:
        """Read, dispatch and write until the peer's stream ends (then fail what is pending and return) or
        until cancelled. Handlers still running at that point are cancelled."""
        if self._serving:
            raise RuntimeError("Connection.serve() can run only once")
        self._serving = True
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._write_loop)
                await self._read_loop(tg)
                await self._shutdown(f"the {self._peer} closed the connection")
                tg.cancel_scope.cancel()
        finally:
            self._finish_close(f"the connection to the {self._peer} was closed")
            # Only here: the writer may still be waiting on it until the task group has ended.
            self._outbox_receive.close()

    async def request(self, method: str, params: object = None) -> msgspec.Raw:
        """Send a request and wait for its raw result.

        Raises `RpcError` (the most specific subclass for the peer's code) when the peer answers with an
        error, `ConnectionClosed` when the connection ends first. Cancelling the caller sends
        the cancel notification (`cancel_method`) for it and forgets the id.
        """
        if self._closing:
            await self._raise_closed()
        request_id = self._pending.new_id()
        data = self._encode(OutRequest("2.0", request_id, method, params))
        pending = self._pending.wait_for(request_id)
        self._enqueue(data)
        try:
            await pending.done.wait()
        finally:
            # Still registered means no answer arrived and the connection is up: we are being cancelled.
            if self._pending.give_up(request_id) and self._cancel_method is not None:
                cancel = OutNotification("2.0", self._cancel_method, CancelParams(request_id))
                self._enqueue(self._encode(cancel))
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None
        return pending.result

    async def notify(self, method: str, params: object = None) -> None:
        """Queue a notification; raises `ConnectionClosed` once the connection has ended."""
        if self._closing:
            await self._raise_closed()
        self._enqueue(self._encode(OutNotification("2.0", method, params)))

    # --- closing

    async def _shutdown(self, default_reason: str) -> None:
        if self._closing:
            await self._wait_closed()
            return
        self._closing = True
        reason = default_reason
        if self._closed_reason is not None:
            try:
                reason = await self._closed_reason()
            except Exception:
                logger.exception("closed_reason callback failed")
        self._finish_close(reason)

    def _finish_close(self, reason: str) -> None:
        if self._closed_message is not None:
            return
        self._closing = True
        self._closed_message = reason
        self._pending.fail_all(reason)
        self._outbox_send.close()
        if self._closed_event is not None:
            self._closed_event.set()

    async def _wait_closed(self) -> None:
        if self._closed_message is None:
            if self._closed_event is None:
                self._closed_event = anyio.Event()
            await self._closed_event.wait()

    async def _raise_closed(self) -> NoReturn:
        await self._wait_closed()
        assert self._closed_message is not None
        raise ConnectionClosed(self._closed_message)

    # --- writing

    def _encode(self, message: msgspec.Struct) -> bytes:
        data = self._encoder.encode(message)
        if b"\n" in data:
            # Only a msgspec.Raw passed through verbatim can hold a raw newline; re-encoding compacts it.
            data = self._encoder.encode(msgspec.json.decode(data))
        return data

    def _enqueue(self, data: bytes) -> None:
        try:
            self._outbox_send.send_nowait(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("connection closed, dropped outgoing message: %s", preview(data))

    async def _write_loop(self) -> None:
        async with self._outbox_receive:
            async for data in self._outbox_receive:
                self._hooks.sent(data)
                try:
                    await self._send.send(data + b"\n")
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                    logger.warning("writing to the %s failed: %s", self._peer, describe(exc))
                    break
            else:
                return
        # Nothing we send can arrive any more, so nothing pending can be answered.
        await self._shutdown(f"the {self._peer} stopped reading")

    def _send_error(self, request_id: RequestId, error: RpcError) -> None:
        body = OutErrorBody(error.code, error.message, error.data)
        try:
            data = self._encode(OutError("2.0", request_id, body))
        except Exception as exc:
            logger.warning("error data for request %r could not be encoded: %s", request_id, describe(exc))
            data = self._encode(OutError("2.0", request_id, OutErrorBody(error.code, error.message)))
        self._enqueue(data)

    # --- reading

    async def _read_loop(self, tg: TaskGroup) -> None:
        while True:
            try:
                chunk = await self._receive.receive()
            except anyio.EndOfStream:
                break
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
                logger.warning("reading from the %s failed: %s", self._peer, describe(exc))
                break
            await self._handle_read(self._splitter.feed(chunk), tg)
        await self._handle_read(self._splitter.finish(), tg)

    async def _handle_read(self, items: list[bytes | Oversized], tg: TaskGroup) -> None:
        self._hooks.read(items, self._splitter.oversized)
        route = self._route
        # A per-line hook sees each line as it is handled: the ordinary path, one line at a time.
        decode = route.decoder.decode if route is not None and self._hooks.on_message is None else None
        start = 0
        if decode is not None and not self._splitter.oversized:
            leading, start = cast(NotificationRoute, route).take_leading(cast(list[bytes], items))
            if leading:
                self._handle_routed(leading)
            if start == len(items):
                return
            items = items[start:] if start else items
        routed: list[object] = []
        for item in items:
            if decode is not None and type(item) is bytes and (item.isascii() or is_utf8(item)):
                try:
                    line = decode(item)
                except Exception:
                    # Not a valid line of the route: the ordinary path decodes it again and says why.
                    line = None
                if line is not None and line.id is UNSET:
                    routed.append(line.params)
                    continue
            if routed:
                self._handle_routed(routed)
                routed = []
            waiting = self._handle_item(item, tg)
            if waiting is not None:
                await waiting
        if routed:
            self._handle_routed(routed)

    def _handle_routed(self, params: list[object]) -> None:
        """Consecutive lines of the route, handed on in one call: a stream's hundreds of lines per read cost
        the layers above one call, not one each."""
        route = cast(NotificationRoute, self._route)
        try:
            route.handle(params)
        except Exception:
            # The rest of these lines is not handled: a handler that can fail on one contains it itself.
            logger.exception("handler for the %s notification failed", route.method)

    def _handle_item(self, item: bytes | Oversized, tg: TaskGroup) -> Awaitable[None] | None:
        """Handles one line at once (the route's lines are `_handle_read`'s); returns what is left to await
        (a notification handler that waits), so that lines handled at once cost no coroutine each."""
        if isinstance(item, Oversized):
            self._bad.oversized(item)
            return None
        if self._hooks.on_message is not None:
            self._hooks.line_read_or_sent("in", item)
        if not item.isascii() and not is_utf8(item):
            self._bad.not_utf8(item)
            return None
        try:
            envelope = self._envelope_decoder.decode(item)
        except msgspec.ValidationError as exc:
            self._bad.invalid_request(usable_id(item), str(exc), item)
            return None
        except msgspec.DecodeError:
            self._bad.not_json(item)
            return None
        except RecursionError:
            # msgspec's depth limit is Python's recursion limit: valid JSON a few hundred levels deep is
            # refused by the decoder, not by us, and must be answered like any other bad line.
            self._bad.too_deep(item)
            return None

        params = envelope.params if envelope.params and envelope.params != NULL else None
        method = envelope.method
        if isinstance(method, str):
            if isinstance(envelope.id, UnsetType):
                # A notification, the bulk of the traffic (streamed updates): dispatched here rather than
                # through one more coroutine per message.
                if method == self._cancel_method:
                    self._incoming.cancel(params)
                    return None
                try:
                    waiting = self._on_notification(method, params)
                except Exception as exc:
                    self._notification_failed(method, item, exc)
                    return None
                return None if waiting is None else self._finish_notification(method, item, waiting)
            self._incoming.start(envelope.id, method, params, tg)
        elif not isinstance(envelope.id, UnsetType) and (envelope.result or envelope.error):
            self._pending.answer(envelope.id, envelope.result, envelope.error)
        else:
            request_id = None if isinstance(envelope.id, UnsetType) else envelope.id
            self._bad.invalid_request(request_id, "no method, result or error", item)
        return None

    async def _finish_notification(self, method: str, item: bytes, waiting: Awaitable[None]) -> None:
        try:
            await waiting
        except Exception as exc:
            self._notification_failed(method, item, exc)

    def _notification_failed(self, method: str, item: bytes, exc: Exception) -> None:
        if isinstance(exc, msgspec.ValidationError):
            self._protocol_error("invalid_params", f"the {self._peer} sent invalid params in {method}: {exc}")
        elif isinstance(exc, RecursionError):
            self._protocol_error(
                "too_deep", f"the {self._peer} sent params {TOO_DEEP} in {method}: {preview(item)}"
            )
        else:
            logger.error("handler for the %s notification failed", method, exc_info=exc)

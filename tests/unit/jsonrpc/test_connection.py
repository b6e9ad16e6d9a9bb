"""Connection on in-memory byte streams (and one real socket pair): both directions, every error class,
cancellation both ways, the size cap, end of stream."""

from __future__ import annotations

import logging
import math
import socket
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import msgspec
import pytest
from anyio.abc import SocketStream

from acp_nvim.jsonrpc import (
    Connection,
    ConnectionClosed,
    InternalError,
    InvalidParams,
    LineSplitter,
    MethodNotFound,
    NotificationRoute,
    RoutedNotification,
    RpcError,
)

pytestmark = pytest.mark.anyio

DEADLINE = 10
# The jsonrpc layer knows no cancel method of its own: ACP's is passed in, as the client does.
CANCEL_REQUEST_METHOD = "$/cancel_request"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Wire:
    """The far end of a Connection, speaking raw bytes."""

    def __init__(self) -> None:
        self.input_send, self.conn_receive = anyio.create_memory_object_stream[bytes](math.inf)
        self.conn_send, self.output_receive = anyio.create_memory_object_stream[bytes](math.inf)
        self._splitter = LineSplitter()
        self._lines: deque[Any] = deque()

    def close(self) -> None:
        for stream in (self.input_send, self.conn_receive, self.conn_send, self.output_receive):
            stream.close()

    async def write(self, data: bytes) -> None:
        await self.input_send.send(data)

    async def send(self, message: object) -> None:
        await self.write(msgspec.json.encode(message) + b"\n")

    async def read(self) -> Any:
        """The next message the connection wrote."""
        with anyio.fail_after(DEADLINE):
            while not self._lines:
                self._lines.extend(self._splitter.feed(await self.output_receive.receive()))
        return msgspec.json.decode(self._lines.popleft())

    async def read_rest(self) -> list[Any]:
        """Everything the connection wrote that was not read yet (its send side must be closed)."""
        rest = []
        with anyio.fail_after(DEADLINE):
            async for chunk in self.output_receive:
                self._lines.extend(self._splitter.feed(chunk))
        while self._lines:
            rest.append(msgspec.json.decode(self._lines.popleft()))
        return rest


@dataclass
class Harness:
    conn: Connection
    wire: Wire
    served: anyio.Event = field(default_factory=anyio.Event)
    protocol_errors: list[str] = field(default_factory=list)

    async def end_input_and_drain(self) -> list[Any]:
        """EOF to the connection, wait until serve() returned, then all that it still wrote."""
        await self.wire.input_send.aclose()
        with anyio.fail_after(DEADLINE):
            await self.served.wait()
        self.wire.conn_send.close()
        return await self.wire.read_rest()


async def echo(method: str, params: msgspec.Raw | None) -> object:
    return {"method": method, "params": None if params is None else msgspec.json.decode(params)}


async def ignore(method: str, params: msgspec.Raw | None) -> None:
    pass


@asynccontextmanager
async def running(
    on_request: Callable[[str, msgspec.Raw | None], Awaitable[object]] = echo,
    on_notification: Callable[[str, msgspec.Raw | None], Awaitable[None]] = ignore,
    **kwargs: Any,
) -> AsyncIterator[Harness]:
    wire = Wire()
    errors: list[str] = []
    kwargs.setdefault("cancel_method", CANCEL_REQUEST_METHOD)
    conn = Connection(
        wire.conn_receive,
        wire.conn_send,
        on_request=on_request,
        on_notification=on_notification,
        on_protocol_error=errors.append,
        **kwargs,
    )
    harness = Harness(conn, wire, protocol_errors=errors)

    async def serve() -> None:
        await conn.serve()
        harness.served.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            yield harness
            tg.cancel_scope.cancel()
    finally:
        wire.close()


def request(id: object, method: str, params: object = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


# --- both directions


async def test_peer_request_is_served_while_ours_is_pending_with_the_same_id() -> None:
    async with running() as h, anyio.create_task_group() as tg:
        results: list[msgspec.Raw] = []

        async def ask() -> None:
            results.append(await h.conn.request("ask", {"q": 1}))

        tg.start_soon(ask)
        ours = await h.wire.read()
        assert ours == request(0, "ask", {"q": 1})
        # The peer numbers its own requests from 0 too; it must be served, not taken for our answer.
        await h.wire.send(request(0, "peer/asks", {"x": True}))
        answer = await h.wire.read()
        assert answer == {"jsonrpc": "2.0", "id": 0, "result": {"method": "peer/asks", "params": {"x": True}}}
        assert results == []
        await h.wire.send({"jsonrpc": "2.0", "id": 0, "result": {"ok": 1}})
        with anyio.fail_after(DEADLINE):
            while not results:
                await anyio.wait_all_tasks_blocked()
        assert msgspec.json.decode(results[0]) == {"ok": 1}


async def test_two_connections_over_a_socket_pair_call_each_other_while_waiting() -> None:
    left_sock, right_sock = socket.socketpair()
    left = await SocketStream.from_socket(left_sock)
    right = await SocketStream.from_socket(right_sock)
    connections: dict[str, Connection] = {}

    async def left_handler(method: str, params: msgspec.Raw | None) -> object:
        return {"left saw": method}

    async def right_handler(method: str, params: msgspec.Raw | None) -> object:
        # Calls back into the caller before answering: both sides have id 0 in flight.
        inner = msgspec.json.decode(await connections["right"].request("callback", {}))
        return {"right saw": method, "inner": inner}

    connections["left"] = Connection(
        left, left, on_request=left_handler, on_notification=ignore, cancel_method=CANCEL_REQUEST_METHOD
    )
    connections["right"] = Connection(
        right, right, on_request=right_handler, on_notification=ignore, cancel_method=CANCEL_REQUEST_METHOD
    )
    async with left, right, anyio.create_task_group() as tg:
        tg.start_soon(connections["left"].serve)
        tg.start_soon(connections["right"].serve)
        with anyio.fail_after(DEADLINE):
            raw = await connections["left"].request("outer", {})
        assert msgspec.json.decode(raw) == {"right saw": "outer", "inner": {"left saw": "callback"}}
        tg.cancel_scope.cancel()


async def test_slow_handler_blocks_neither_reader_nor_other_requests() -> None:
    release = anyio.Event()

    async def handler(method: str, params: msgspec.Raw | None) -> object:
        if method == "slow":
            await release.wait()
        return method

    async with running(on_request=handler) as h:
        await h.wire.send(request(1, "slow"))
        await h.wire.send(request(2, "fast"))
        assert await h.wire.read() == {"jsonrpc": "2.0", "id": 2, "result": "fast"}
        release.set()
        assert await h.wire.read() == {"jsonrpc": "2.0", "id": 1, "result": "slow"}


async def test_ten_thousand_notifications_keep_their_order() -> None:
    seen: list[int] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        assert params is not None
        seen.append(msgspec.json.decode(params)["i"])

    async with running(on_notification=on_notification) as h:
        blob = b"".join(
            msgspec.json.encode({"jsonrpc": "2.0", "method": "update", "params": {"i": i}}) + b"\n"
            for i in range(10_000)
        )
        for start in range(0, len(blob), 4093):  # chunk edges fall mid-line
            await h.wire.write(blob[start : start + 4093])
        await h.wire.send(request("end", "done"))
        assert (await h.wire.read())["id"] == "end"
        # Notifications are dispatched before anything that arrived after them.
        assert seen == list(range(10_000))


async def test_notifications_before_our_answer_are_handled_before_request_returns() -> None:
    seen: list[int] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        assert params is not None
        seen.append(msgspec.json.decode(params)["i"])

    async with running(on_notification=on_notification) as h, anyio.create_task_group() as tg:
        done = anyio.Event()
        counts: list[int] = []

        async def prompt() -> None:
            await h.conn.request("prompt", {})
            counts.append(len(seen))
            done.set()

        tg.start_soon(prompt)
        sent = await h.wire.read()
        for i in range(100):
            await h.wire.send({"jsonrpc": "2.0", "method": "update", "params": {"i": i}})
        await h.wire.send({"jsonrpc": "2.0", "id": sent["id"], "result": {"stopReason": "end_turn"}})
        with anyio.fail_after(DEADLINE):
            await done.wait()
        assert counts == [100]


# --- exactly one answer for every request, whatever goes wrong


class Greet(msgspec.Struct):
    name: str


greet_decoder = msgspec.json.Decoder(Greet)


async def strict_handler(method: str, params: msgspec.Raw | None) -> object:
    if method == "greet":
        return {"hello": greet_decoder.decode(params if params is not None else b"null").name}
    if method == "explicit_bad":
        raise InvalidParams("Invalid params: `name` is required", {"field": "name"})
    if method == "crash":
        raise ValueError("kaboom")
    if method == "unencodable":
        return object()
    raise MethodNotFound.for_method(method)


async def test_every_error_class_is_answered_exactly_once_and_the_connection_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lines = [
        msgspec.json.encode(request(1, "no/such", {})),
        msgspec.json.encode(request(2, "greet", {"name": 5})),
        msgspec.json.encode(request(3, "explicit_bad", {})),
        msgspec.json.encode(request(4, "crash")),
        msgspec.json.encode(request(5, "unencodable")),
        b"not json at all",
        b'{"jsonrpc":"2.0","id":6,"method":"greet","params":{"name":"\xff"}}',
        b"[1,2]",
        b"42",
        b'{"jsonrpc":"2.0","id":7}',
        b'{"jsonrpc":"2.0","id":8,"method":9}',
        b'{"jsonrpc":"2.0","id":1.5,"method":"greet"}',
        msgspec.json.encode(request("last", "greet", {"name": "x"})),
    ]
    async with running(on_request=strict_handler) as h:
        await h.wire.write(b"\n".join(lines) + b"\n")
        answers = [await h.wire.read() for _ in lines]
        answers += await h.end_input_and_drain()

    def error_of(id: object) -> Any:
        (match,) = [a for a in answers if a["id"] == id]
        return match["error"]

    assert len(answers) == len(lines)
    assert error_of(1)["code"] == -32601 and "no/such" in error_of(1)["message"]
    assert error_of(2)["code"] == -32602 and "$.name" in error_of(2)["message"]
    assert error_of(3) == {
        "code": -32602,
        "message": "Invalid params: `name` is required",
        "data": {"field": "name"},
    }
    assert error_of(4)["code"] == -32603 and "kaboom" in error_of(4)["message"]
    assert "Traceback" not in error_of(4)["message"]
    assert error_of(5)["code"] == -32603
    nulls = [a["error"] for a in answers if a["id"] is None]
    assert sorted(e["code"] for e in nulls) == [-32700, -32700, -32600, -32600, -32600]
    assert error_of(7)["code"] == -32600
    assert error_of(8)["code"] == -32600
    assert [a["result"] for a in answers if a["id"] == "last"] == [{"hello": "x"}]
    assert len(h.protocol_errors) == 7  # garbage, not UTF-8, and five invalid messages
    assert any("Traceback" in r.exc_text for r in caplog.records if r.exc_text)


async def test_unknown_and_failing_notifications_are_ignored() -> None:
    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        if method == "bad":
            greet_decoder.decode(params if params is not None else b"null")
        raise ValueError(f"unknown notification {method}")

    async with running(on_notification=on_notification) as h:
        await h.wire.send({"jsonrpc": "2.0", "method": "_vendor/thing", "params": {}})
        await h.wire.send({"jsonrpc": "2.0", "method": "$/progress"})
        await h.wire.send({"jsonrpc": "2.0", "method": "bad", "params": {"name": 1}})
        await h.wire.send(request(1, "still/alive"))
        assert (await h.wire.read())["id"] == 1
        assert await h.end_input_and_drain() == []
        assert len(h.protocol_errors) == 1 and "$.name" in h.protocol_errors[0]


async def test_answers_to_unknown_ids_and_duplicates_are_ignored_with_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="acp_nvim.jsonrpc")
    async with running() as h, anyio.create_task_group() as tg:
        await h.wire.send({"jsonrpc": "2.0", "id": 42, "result": {}})
        results: list[Any] = []

        async def call() -> None:
            results.append(msgspec.json.decode(await h.conn.request("x")))

        tg.start_soon(call)
        sent = await h.wire.read()
        await h.wire.send({"jsonrpc": "2.0", "id": sent["id"], "result": 1})
        await h.wire.send({"jsonrpc": "2.0", "id": sent["id"], "result": 2})
        await h.wire.send({"jsonrpc": "2.0", "id": str(sent["id"]), "result": 3})
        await h.wire.send(request("ping", "ping"))
        assert (await h.wire.read())["id"] == "ping"
        assert results == [1]
        warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(warnings) == 3
        assert "42" in warnings[0] and "0" in warnings[1] and "'0'" in warnings[2]


async def test_peer_errors_raise_the_matching_rpc_error() -> None:
    async with running() as h, anyio.create_task_group() as tg:
        outcomes: list[BaseException | msgspec.Raw] = []

        async def call(method: str) -> None:
            try:
                outcomes.append(await h.conn.request(method, {}))
            except RpcError as exc:
                outcomes.append(exc)

        replies: list[tuple[str, dict[str, Any]]] = [
            ("a", {"error": {"code": -32602, "message": "bad", "data": {"field": "x"}}}),
            ("b", {"error": {"code": 7, "message": "custom"}}),
            ("c", {"error": "oops"}),
            ("d", {"result": None}),
        ]
        for method, reply in replies:
            tg.start_soon(call, method)
            sent = await h.wire.read()
            await h.wire.send({"jsonrpc": "2.0", "id": sent["id"], **reply})
            with anyio.fail_after(DEADLINE):
                while len(outcomes) < sent["id"] + 1:
                    await anyio.wait_all_tasks_blocked()
        a, b, c, d = outcomes
        assert isinstance(a, InvalidParams) and a.message == "bad" and a.data == {"field": "x"}
        assert type(b) is RpcError and b.code == 7 and b.message == "custom"
        assert isinstance(c, InternalError) and "oops" in c.message
        assert isinstance(d, msgspec.Raw) and bytes(memoryview(d)) == b"null"
        assert len(h.protocol_errors) == 1  # the malformed error object


async def test_raw_params_with_newlines_do_not_break_framing() -> None:
    async with running() as h:
        await h.conn.notify("note", msgspec.Raw(b'{\n  "a": [1,\n 2]\n}'))
        assert await h.wire.read() == {"jsonrpc": "2.0", "method": "note", "params": {"a": [1, 2]}}


async def test_traffic_hook_sees_raw_lines_both_ways() -> None:
    traffic: list[tuple[str, bytes]] = []
    async with running(on_message=lambda d, line: traffic.append((d, line))) as h:
        await h.conn.notify("out/note", {"k": 1})
        await h.wire.read()
        await h.wire.write(b'{"jsonrpc":"2.0","method":"in/note"}\r\n')
        await h.end_input_and_drain()
    assert traffic == [
        ("out", b'{"jsonrpc":"2.0","method":"out/note","params":{"k":1}}'),
        ("in", b'{"jsonrpc":"2.0","method":"in/note"}'),
    ]


async def test_traffic_hook_by_read_sees_a_reads_lines_at_once_and_no_dropped_line() -> None:
    reads: list[tuple[str, list[bytes]]] = []
    async with running(max_message_size=64, on_messages=lambda d, lines: reads.append((d, lines))) as h:
        await h.conn.notify("out/note")
        await h.wire.read()
        # One read: two notifications, an oversized line (not a line the hook sees), one more.
        await h.wire.write(b'{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n')
        await h.wire.write(b"x" * 100 + b'\n{"jsonrpc":"2.0","method":"c"}\n')
        await h.end_input_and_drain()
    *seen, (direction, answer) = reads
    assert seen == [
        ("out", [b'{"jsonrpc":"2.0","method":"out/note"}']),
        ("in", [b'{"jsonrpc":"2.0","method":"a"}', b'{"jsonrpc":"2.0","method":"b"}']),
        ("in", [b'{"jsonrpc":"2.0","method":"c"}']),
    ]
    # The line dropped is answered, and the answer is seen as it goes out.
    assert direction == "out" and msgspec.json.decode(answer[0])["error"]["code"] == -32600


class Tick(msgspec.Struct):
    n: int


class TickLine(RoutedNotification, kw_only=True):
    method: Literal["tick"]
    params: Tick


async def test_a_route_takes_its_valid_lines_in_one_decode_and_leaves_the_rest_to_the_ordinary_path() -> None:
    routed: list[Tick] = []
    notified: list[tuple[str, object]] = []
    requested: list[str] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        notified.append((method, None if params is None else msgspec.json.decode(params)))

    async def on_request(method: str, params: msgspec.Raw | None) -> object:
        requested.append(method)
        return "ok"

    route = NotificationRoute("tick", msgspec.json.Decoder(TickLine), routed.extend)
    async with running(on_request=on_request, on_notification=on_notification, route=route) as h:
        await h.wire.send({"jsonrpc": "2.0", "method": "tick", "params": {"n": 1}})
        await h.wire.send({"params": {"n": 2}, "method": "tick", "jsonrpc": "2.0"})  # any key order
        await h.wire.send({"jsonrpc": "2.0", "method": "tick", "params": {"n": "three"}})  # bad params
        await h.wire.send({"jsonrpc": "2.0", "method": "tock", "params": {"n": 4}})  # another method
        await h.wire.send({"jsonrpc": "2.0", "id": 5, "method": "tick", "params": {"n": 5}})  # a request
        await h.wire.write(b'{"jsonrpc":"2.0","method":"tick","params":{"n":6}\n')  # not JSON
        await h.wire.send({"jsonrpc": "2.0", "method": "tick", "params": {"n": 7}})
        rest = await h.end_input_and_drain()
    assert [tick.n for tick in routed] == [1, 2, 7]
    assert notified == [("tick", {"n": "three"}), ("tock", {"n": 4})]
    assert requested == ["tick"]
    assert [(message["id"], message["result"]) for message in rest] == [(5, "ok")]
    (not_json,) = h.protocol_errors
    assert "not JSON" in not_json


async def test_a_route_whose_handler_fails_is_logged_and_the_stream_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    routed: list[int] = []

    def handle(ticks: list[Tick]) -> None:
        for tick in ticks:
            if tick.n == 1:
                raise RuntimeError("boom")
            routed.append(tick.n)

    route = NotificationRoute("tick", msgspec.json.Decoder(TickLine), handle)
    with caplog.at_level(logging.ERROR, "acp_nvim.jsonrpc"):
        async with running(route=route) as h:
            for n in (1, 2):
                await h.wire.send({"jsonrpc": "2.0", "method": "tick", "params": {"n": n}})
            # Read together, the lines after the failing one in that call are not handled; the next read is.
            await h.wire.write(tick_lines(1, 3))
            await h.wire.write(tick_lines(4))
            await h.end_input_and_drain()
    assert routed == [2, 4]
    assert caplog.text.count("handler for the tick notification failed") == 2


def tick_lines(*numbers: int) -> bytes:
    return b"".join(
        msgspec.json.encode({"jsonrpc": "2.0", "method": "tick", "params": {"n": n}}) + b"\n" for n in numbers
    )


async def test_a_route_gets_the_lines_of_one_read_in_one_call_in_their_place_among_the_others() -> None:
    seen: list[object] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        seen.append(method)

    def handle(ticks: list[Tick]) -> None:
        seen.append([tick.n for tick in ticks])

    route = NotificationRoute("tick", msgspec.json.Decoder(TickLine), handle)
    async with running(on_notification=on_notification, route=route) as h:
        tock = msgspec.json.encode({"jsonrpc": "2.0", "method": "tock"}) + b"\n"
        await h.wire.write(tick_lines(1, 2, 3) + tock + tick_lines(4) + b'{"jsonrpc":"2.0","method":"tick"\n')
        await h.wire.write(tick_lines(5, 6))
        await h.end_input_and_drain()
    assert seen == [[1, 2, 3], "tock", [4], [5, 6]]
    (not_json,) = h.protocol_errors
    assert "not JSON" in not_json


def test_a_route_must_name_its_method_as_a_literal() -> None:
    class Loose(RoutedNotification, kw_only=True):
        params: Tick

    with pytest.raises(TypeError, match="Literal"):
        NotificationRoute("tick", msgspec.json.Decoder(Loose), print)
    with pytest.raises(TypeError, match="Literal"):
        NotificationRoute("tock", msgspec.json.Decoder(TickLine), print)
    with pytest.raises(TypeError, match="RoutedNotification"):
        NotificationRoute("tick", msgspec.json.Decoder(Tick), print)


# --- cancellation


async def test_incoming_cancel_request_cancels_the_handler_and_still_answers() -> None:
    started = anyio.Event()

    async def handler(method: str, params: msgspec.Raw | None) -> object:
        if method == "slow":
            started.set()
            await anyio.sleep_forever()
        return "fine"

    async with running(on_request=handler) as h:
        await h.wire.send(request("r1", "slow"))
        with anyio.fail_after(DEADLINE):
            await started.wait()
        await h.wire.send({"jsonrpc": "2.0", "method": CANCEL_REQUEST_METHOD, "params": {"requestId": "r1"}})
        assert await h.wire.read() == {
            "jsonrpc": "2.0",
            "id": "r1",
            "error": {"code": -32800, "message": "Request cancelled"},
        }
        # A cancel right behind its request, in the same chunk, before the handler task even started.
        await h.wire.write(
            msgspec.json.encode(request(5, "slow"))
            + b"\n"
            + msgspec.json.encode(
                {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 5}}
            )
            + b"\n"
        )
        assert (await h.wire.read())["error"]["code"] == -32800
        # Cancelling what is not running is harmless.
        await h.wire.send({"jsonrpc": "2.0", "method": CANCEL_REQUEST_METHOD, "params": {"requestId": 99}})
        await h.wire.send({"jsonrpc": "2.0", "method": CANCEL_REQUEST_METHOD, "params": {}})
        await h.wire.send(request(6, "other"))
        assert await h.wire.read() == {"jsonrpc": "2.0", "id": 6, "result": "fine"}
        assert await h.end_input_and_drain() == []


async def test_the_cancel_method_is_the_caller_s_other_names_are_plain_notifications() -> None:
    seen: list[str] = []

    async def notified(method: str, params: msgspec.Raw | None) -> None:
        seen.append(method)

    async with (
        running(on_notification=notified, cancel_method="$/stop") as h,
        anyio.create_task_group() as tg,
    ):
        await h.wire.send({"jsonrpc": "2.0", "method": CANCEL_REQUEST_METHOD, "params": {"requestId": 1}})
        await h.wire.send({"jsonrpc": "2.0", "method": "$/stop", "params": {"requestId": 1}})
        await h.wire.send({"jsonrpc": "2.0", "method": "done"})
        with anyio.fail_after(DEADLINE):
            while seen != [CANCEL_REQUEST_METHOD, "done"]:
                await anyio.sleep(0.001)
        scope = anyio.CancelScope()
        finished = anyio.Event()

        async def call() -> None:
            with scope:
                await h.conn.request("slow", {})
            finished.set()

        tg.start_soon(call)
        await h.wire.read()
        scope.cancel()
        with anyio.fail_after(DEADLINE):
            await finished.wait()
        await h.conn.notify("after", {})
        assert (await h.wire.read())["method"] == "$/stop"
        assert (await h.wire.read())["method"] == "after"


async def test_without_a_cancel_method_a_cancelled_request_sends_nothing() -> None:
    async with running(cancel_method=None) as h, anyio.create_task_group() as tg:
        scope = anyio.CancelScope()
        finished = anyio.Event()

        async def call() -> None:
            with scope:
                await h.conn.request("slow", {})
            finished.set()

        tg.start_soon(call)
        await h.wire.read()
        scope.cancel()
        with anyio.fail_after(DEADLINE):
            await finished.wait()
        await h.conn.notify("after", {})
        assert await h.wire.read() == {"jsonrpc": "2.0", "method": "after", "params": {}}


async def test_cancelling_our_request_sends_cancel_request_and_forgets_the_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with running() as h, anyio.create_task_group() as tg:
        scope = anyio.CancelScope()
        finished = anyio.Event()

        async def call() -> None:
            with scope:
                await h.conn.request("slow", {})
            finished.set()

        tg.start_soon(call)
        sent = await h.wire.read()
        scope.cancel()
        with anyio.fail_after(DEADLINE):
            await finished.wait()
        assert scope.cancelled_caught
        assert await h.wire.read() == {
            "jsonrpc": "2.0",
            "method": "$/cancel_request",
            "params": {"requestId": sent["id"]},
        }
        # The peer must still answer; that late answer is expected and not worth a warning.
        caplog.clear()
        await h.wire.send(
            {"jsonrpc": "2.0", "id": sent["id"], "error": {"code": -32800, "message": "Request cancelled"}}
        )
        results: list[Any] = []

        async def second() -> None:
            results.append(msgspec.json.decode(await h.conn.request("next")))

        tg.start_soon(second)
        again = await h.wire.read()
        assert again["id"] != sent["id"]
        await h.wire.send({"jsonrpc": "2.0", "id": again["id"], "result": "ok"})
        with anyio.fail_after(DEADLINE):
            while not results:
                await anyio.wait_all_tasks_blocked()
        assert results == ["ok"]
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


# --- size cap


async def test_oversized_line_is_dropped_and_the_next_line_is_processed() -> None:
    async with running(max_message_size=1024, peer_name="agent") as h:
        big = msgspec.json.encode(request(1, "big", {"blob": "x" * 5000}))
        for start in range(0, len(big), 700):
            await h.wire.write(big[start : start + 700])
        await h.wire.write(b"\n")
        await h.wire.send(request(2, "small"))
        # Its id came before the bulk, in the head the framing kept: it is answered, once, and first.
        dropped = await h.wire.read()
        assert dropped["id"] == 1 and dropped["error"]["code"] == -32600
        assert dropped["error"]["data"] == {"size": len(big), "limit": 1024}
        assert "over the 1 KiB limit" in dropped["error"]["message"]
        assert (await h.wire.read())["id"] == 2
        assert await h.end_input_and_drain() == []
    assert len(h.protocol_errors) == 1
    assert "message of more than 1 KiB from the agent was dropped" in h.protocol_errors[0]


async def test_oversized_request_with_its_id_after_the_bulk_is_answered_under_null() -> None:
    async with running(max_message_size=1024) as h:
        blob = "x" * 5000
        await h.wire.write(b'{"jsonrpc":"2.0","method":"big","params":"' + blob.encode() + b'","id":9}\n')
        await h.wire.send(request(2, "small"))
        dropped = await h.wire.read()
        assert dropped["id"] is None and dropped["error"]["code"] == -32600
        assert (await h.wire.read())["id"] == 2
        assert await h.end_input_and_drain() == []


async def test_oversized_answer_fails_our_request_instead_of_leaving_it_waiting() -> None:
    async with running(max_message_size=1024, peer_name="agent") as h, anyio.create_task_group() as tg:
        failures: list[RpcError] = []

        async def ask() -> None:
            try:
                await h.conn.request("big/please")
            except RpcError as err:
                failures.append(err)

        tg.start_soon(ask)
        ours = await h.wire.read()
        await h.wire.send({"jsonrpc": "2.0", "id": ours["id"], "result": {"blob": "x" * 5000}})
        with anyio.fail_after(DEADLINE):
            while not failures:
                await anyio.wait_all_tasks_blocked()
        (failure,) = failures
        assert isinstance(failure, InternalError)
        assert "the answer of the agent was dropped" in failure.message and "over 1 KiB" in failure.message
        # An answer is never answered back.
        assert await h.end_input_and_drain() == []


async def test_default_cap_is_at_least_64_mib() -> None:
    async with running() as h:
        assert h.conn.max_message_size >= 64 * 1024 * 1024


# --- end of stream


async def test_end_of_stream_fails_pending_requests_at_once_with_the_supplied_reason() -> None:
    release = anyio.Event()
    calls: list[int] = []

    async def closed_reason() -> str:
        calls.append(1)
        await release.wait()
        return "agent exited with code 1: boom"

    async with running(closed_reason=closed_reason) as h, anyio.create_task_group() as tg:
        failures: list[BaseException] = []

        async def call(method: str) -> None:
            try:
                await h.conn.request(method, {})
            except ConnectionClosed as exc:
                failures.append(exc)

        tg.start_soon(call, "one")
        tg.start_soon(call, "two")
        await h.wire.read()
        await h.wire.read()
        await h.wire.input_send.aclose()
        with anyio.fail_after(DEADLINE):
            while not h.conn.closed:
                await anyio.wait_all_tasks_blocked()
        tg.start_soon(call, "during")  # while the reason is still being worked out
        release.set()
        with anyio.fail_after(DEADLINE):
            await h.served.wait()
            while len(failures) < 3:
                await anyio.wait_all_tasks_blocked()
        assert [str(f) for f in failures] == ["agent exited with code 1: boom"] * 3
        with pytest.raises(ConnectionClosed, match="agent exited with code 1: boom"):
            await h.conn.request("after", {})
        with pytest.raises(ConnectionClosed, match="code 1"):
            await h.conn.notify("after", {})
        assert calls == [1]


async def test_without_a_reason_callback_the_message_says_the_peer_closed() -> None:
    async with running(peer_name="agent") as h:
        await h.end_input_and_drain()
        with pytest.raises(ConnectionClosed, match="the agent closed the connection"):
            await h.conn.request("x")


async def test_unterminated_last_line_is_still_handled_at_end_of_stream() -> None:
    seen: list[str] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        seen.append(method)

    async with running(on_notification=on_notification) as h:
        await h.wire.write(b'{"jsonrpc":"2.0","method":"last"}')
        await h.end_input_and_drain()
    assert seen == ["last"]


async def test_writing_to_a_peer_that_stopped_reading_fails_requests_cleanly() -> None:
    async def closed_reason() -> str:
        return "agent exited with code 2"

    async with running(closed_reason=closed_reason) as h:
        await h.wire.output_receive.aclose()
        with anyio.fail_after(DEADLINE), pytest.raises(ConnectionClosed, match="code 2"):
            await h.conn.request("x", {})
        assert h.conn.closed
        await h.wire.input_send.aclose()
        with anyio.fail_after(DEADLINE):
            await h.served.wait()


async def test_cancelling_serve_fails_pending_requests() -> None:
    wire = Wire()
    conn = Connection(
        wire.conn_receive,
        wire.conn_send,
        on_request=echo,
        on_notification=ignore,
        cancel_method=CANCEL_REQUEST_METHOD,
    )
    failures: list[BaseException] = []

    async def call() -> None:
        try:
            await conn.request("x")
        except ConnectionClosed as exc:
            failures.append(exc)

    async with anyio.create_task_group() as outer:
        outer.start_soon(call)
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.serve)
            with anyio.fail_after(DEADLINE):
                await wire.output_receive.receive()
            tg.cancel_scope.cancel()
    wire.close()
    assert len(failures) == 1 and "closed" in str(failures[0])
    with pytest.raises(RuntimeError):
        await conn.serve()


# --- nested deeper than the decoder goes


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("depth", [1_000, 100_000])
async def test_deep_nesting_gets_one_answer_per_request_and_the_connection_goes_on(depth: int) -> None:
    deep = nested(depth)
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + deep + b"}",
        # Found after the deep params by the scanner: the decoder never got that far.
        b'{"jsonrpc":"2.0","method":"m","params":' + deep + b',"id":"after"}',
        # An id no request can have: an invalid request, answered under null.
        b'{"jsonrpc":"2.0","id":' + deep + b',"method":"m"}',
        # No method, no id: nobody to answer but null.
        b'{"jsonrpc":"2.0","params":' + deep + b"}",
        # A notification is never answered; it is reported.
        b'{"jsonrpc":"2.0","method":"n","params":' + deep + b"}",
        b'{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":' + deep + b"}}}",
    ]
    async with running(peer_name="agent") as h:
        await h.wire.write(b"\n".join(lines) + b"\n")
        await h.wire.send(request(2, "still/alive"))
        answers = [await h.wire.read() for _ in range(5)]
        answers += await h.end_input_and_drain()
    by_id = {json_key(a["id"]): a for a in answers if a["id"] is not None}
    assert len(by_id) == 3, answers
    assert by_id["1"]["error"] == {"code": -32602, "message": "Invalid params: nested too deeply to decode"}
    assert by_id['"after"']["error"]["code"] == -32602
    assert by_id["2"]["result"]["method"] == "still/alive"
    assert sorted(a["error"]["code"] for a in answers if a["id"] is None) == [-32700, -32600]
    kinds = [getattr(e, "kind", None) for e in h.protocol_errors]
    assert kinds == ["too_deep", "too_deep", "invalid_message", "too_deep", "too_deep", "too_deep"]


async def test_an_id_past_the_scanned_part_of_a_deep_line_is_answered_under_null() -> None:
    line = b'{"jsonrpc":"2.0","method":"m","params":' + nested(200_000) + b',"id":1}'
    async with running() as h:
        await h.wire.write(line + b"\n")
        answer = await h.wire.read()
        assert await h.end_input_and_drain() == []
    assert answer["id"] is None and answer["error"]["code"] == -32700


async def test_100_deep_is_fine() -> None:
    async with running() as h:
        await h.wire.write(b'{"jsonrpc":"2.0","id":1,"method":"m","params":' + nested(100) + b"}\n")
        answer = await h.wire.read()
    assert answer["result"]["params"] == msgspec.json.decode(nested(100))


async def test_deep_answer_fails_our_request() -> None:
    async with running(peer_name="agent") as h, anyio.create_task_group() as tg:
        failures: list[RpcError] = []

        async def ask() -> None:
            try:
                await h.conn.request("deep/please")
            except RpcError as err:
                failures.append(err)

        tg.start_soon(ask)
        ours = await h.wire.read()
        await h.wire.write(b'{"jsonrpc":"2.0","id":%d,"result":%s}\n' % (ours["id"], nested(5000)))
        with anyio.fail_after(DEADLINE):
            while not failures:
                await anyio.wait_all_tasks_blocked()
        assert failures[0].message == "the answer of the agent is nested too deeply to decode"
        assert await h.end_input_and_drain() == []


async def test_a_handler_hitting_the_recursion_limit_answers_invalid_params() -> None:
    async def handler(method: str, params: msgspec.Raw | None) -> object:
        # What a typed decode deeper in the stack than the envelope's raises for the same params.
        raise RecursionError("maximum recursion depth exceeded while deserializing an object")

    async with running(on_request=handler) as h:
        await h.wire.send(request(1, "m", {"a": 1}))
        answer = await h.wire.read()
    assert answer["error"] == {"code": -32602, "message": "Invalid params: nested too deeply to decode"}


def json_key(value: object) -> str:
    return msgspec.json.encode(value).decode()


async def test_a_route_s_lines_read_together_are_taken_as_one_by_one_whatever_follows_them() -> None:
    """The leading lines of a read are decoded without Python work per line; from the first line the route
    refuses, and in a read with a request of its method or a line that is not UTF-8, the per-line path:
    the same lines handled, in the same order, with the same answers and reports."""
    seen: list[object] = []
    requested: list[str] = []

    async def on_notification(method: str, params: msgspec.Raw | None) -> None:
        seen.append((method, None if params is None else msgspec.json.decode(params)))

    async def on_request(method: str, params: msgspec.Raw | None) -> object:
        requested.append(method)
        return "ok"

    def handle(ticks: list[Tick]) -> None:
        seen.extend(tick.n for tick in ticks)

    route = NotificationRoute("tick", msgspec.json.Decoder(TickLine), handle)
    async with running(on_request=on_request, on_notification=on_notification, route=route) as h:
        bad_params = msgspec.json.encode({"jsonrpc": "2.0", "method": "tick", "params": {"n": "x"}}) + b"\n"
        await h.wire.write(tick_lines(1, 2) + bad_params + tick_lines(3) + b'{"jsonrpc":"2.0","method":\n')
        request = msgspec.json.encode({"jsonrpc": "2.0", "id": 9, "method": "tick", "params": {"n": 9}})
        await h.wire.write(tick_lines(4) + request + b"\n" + tick_lines(5))
        not_utf8 = b'{"jsonrpc":"2.0","method":"tock","params":"\xff"}\n'
        await h.wire.write(tick_lines(6) + not_utf8 + tick_lines(7, 8))
        await h.end_input_and_drain()
    assert seen == [1, 2, ("tick", {"n": "x"}), 3, 4, 5, 6, 7, 8]
    assert requested == ["tick"]
    not_json, bad_utf8 = h.protocol_errors
    assert "not JSON" in not_json and "UTF-8" in bad_utf8

"""The stream's two decode paths, side by side (issue 31): `python -m bench.stream_paths [--lines N]`.

Every `session/update` kind the decoder knows (the samples of `tests/unit/protocol/test_codec.py` and
`test_unstable.py`, which their tests hold to the whole schema, and the message chunk's variants), as a run of
lines of one kind and mixed with message chunks, responses, requests and bad lines, is read by a real
`Connection` with the real `Dispatcher` three ways: the whole stream in one read (the batched path:
`route_leading`, then the per-line route decode after the first line it refuses), one read per line, and the
per-line typed path (a per-line hook sends every line through the envelope decode, then
`codec.decode_session_update`). What reaches the editor, what is sent back (answers, errors), the protocol
errors and the diagnostics must be the same all three ways; any difference is printed and fails the run.

Then each kind's decode is timed on both paths (process CPU, best of 5, the collector off as in the host's
hot path): `route_leading` over a run of lines of that kind, against the envelope and the typed decode
of each.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import logging
import math
import time
from collections.abc import Callable
from typing import Any, Literal

import anyio
import msgspec

from acp_nvim.client.agent.diagnostics import Diagnostics
from acp_nvim.client.dispatch import Dispatcher, SessionUpdateLine
from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.client.session.text_run import TextRun, TextRunReader
from acp_nvim.jsonrpc import Connection
from acp_nvim.jsonrpc.wire import Envelope, route_leading
from acp_nvim.protocol import codec
from acp_nvim.protocol import unstable as u
from acp_nvim.protocol.methods import CANCEL_REQUEST

SESSION_ID = "sess-1"
Mode = Literal["one read", "a read per line", "reads of 3 lines", "typed per line"]
MODES: tuple[Mode, ...] = ("one read", "a read per line", "reads of 3 lines", "typed per line")


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


# The message chunk as agents send it: plain, with an id, with `_meta`, annotations, not ASCII, escapes, an
# image; the common shape of a stream first.
CHUNK_VARIANTS: list[dict[str, Any]] = [
    {"sessionUpdate": "agent_message_chunk", "content": _text("word ")},
    {"sessionUpdate": "agent_message_chunk", "content": _text("word "), "messageId": "m1"},
    {"sessionUpdate": "agent_message_chunk", "content": _text("é ✓ 😀 "), "_meta": {"k": [1, None]}},
    {"sessionUpdate": "agent_message_chunk", "content": _text('"quoted"\\ \n\t\u0001 ')},
    {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "x", "annotations": {"audience": ["user"], "priority": 0.5}},
    },
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "AAAA", "mimeType": "i/p"}},
    {"sessionUpdate": "agent_thought_chunk", "content": _text("think ")},
    {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "resource_link", "uri": "file:///w/a.py", "name": "a.py"},
    },
]


def samples() -> list[tuple[str, dict[str, Any]]]:
    """(a name, an update) for every kind the decoder knows, and the chunk's variants."""
    # Imported by name: the tests' modules are not type-checked with the bench's.
    tests = [importlib.import_module(f"tests.unit.protocol.test_{name}") for name in ("codec", "unstable")]
    updates = [update for module in tests for update, _ in module.UPDATES] + CHUNK_VARIANTS
    seen: dict[str, int] = {}
    named = []
    for update in updates:
        kind = update["sessionUpdate"]
        seen[kind] = seen.get(kind, 0) + 1
        named.append((kind if seen[kind] == 1 else f"{kind} ({seen[kind]})", update))
    return named


def line(update: dict[str, Any], session_id: str = SESSION_ID) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def chunk(text: str) -> bytes:
    return line({"sessionUpdate": "agent_message_chunk", "content": _text(text)})


def _request(request_id: int, method: str, params: object) -> bytes:
    return (
        json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode() + b"\n"
    )


def in_chunk(slot: bytes) -> bytes:
    """A message chunk's line with `slot` where its text's JSON string is: what the text template reader
    (`client/session/text_run.py`) must read as the typed decode does, or leave to it."""
    return chunk("SLOT").replace(b'"SLOT"', slot)


# Lines shaped like the stream's chunks: their text slot holds something else than one JSON string.
AROUND_THE_TEMPLATE: list[tuple[str, bytes]] = [
    ("a second text key in the slot", in_chunk(b'"a","text":"b"')),
    ("a number in the slot", in_chunk(b"123")),
    ("null in the slot", in_chunk(b"null")),
    ("an object in the slot", in_chunk(b'{"a":1}')),
    ("two strings in the slot", in_chunk(b'"a" "b"')),
    ("an unclosed string in the slot", in_chunk(b'"a')),
    ("an escaped quote closing nothing", in_chunk(b'"a\\"}}}}, "b"')),
    ("not UTF-8 in the slot", in_chunk(b'"\xff"')),
    ("an overlong UTF-8 in the slot", in_chunk(b'"\xc0\xaf"')),
    ("a lone surrogate escape in the slot", in_chunk(b'"\\ud800"')),
    ("a bad escape in the slot", in_chunk(b'"\\q"')),
    ("whitespace around the string", in_chunk(b' "spaced" ')),
    ("an empty text", in_chunk(b'""')),
    ("a text of escapes", in_chunk(b'"\\u00e9\\n\\"\\\\\\/"')),
    ("the tail's bytes in the text", in_chunk(b'"}}}}"')),
    ("a line of the head and tail alone", in_chunk(b"")),
    ("the chunk with an id (a request)", chunk("x").replace(b'"2.0",', b'"2.0","id":7,')),
    ("another session's chunk", line({"sessionUpdate": "agent_message_chunk", "content": _text("x")}, "s2")),
]

# What else a stream meets: each is answered, reported or dropped, and the stream goes on.
OTHERS: list[tuple[str, bytes]] = [
    ("response to no request", b'{"jsonrpc":"2.0","id":77,"result":{}}\n'),
    ("error response to no request", b'{"jsonrpc":"2.0","id":78,"error":{"code":-1,"message":"x"}}\n'),
    ("unknown request", _request(1, "x/unknown", {})),
    ("request with bad params", _request(2, "session/request_permission", {"sessionId": SESSION_ID})),
    ("request of an unknown session", _request(3, "fs/read_text_file", {"sessionId": "no", "path": "/x"})),
    ("session/update as a request", _request(4, "session/update", {"sessionId": SESSION_ID})),
    ("unknown notification", b'{"jsonrpc":"2.0","method":"x/note","params":{}}\n'),
    ("cancel of no request", b'{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":9}}\n'),
    ("not JSON", b"{not json\n"),
    ("not UTF-8", b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"\xff"}}\n'),
    ("no method, result or error", b'{"jsonrpc":"2.0","id":5}\n'),
    ("a JSON array", b"[1,2]\n"),
    ("session/update without params", b'{"jsonrpc":"2.0","method":"session/update"}\n'),
    ("session/update, params null", b'{"jsonrpc":"2.0","method":"session/update","params":null}\n'),
    ("malformed update", line({"sessionUpdate": "agent_message_chunk"})),
    ("unknown update kind", line({"sessionUpdate": "future_kind", "x": 1})),
    (
        "update of an unknown session",
        line({"sessionUpdate": "agent_message_chunk", "content": _text("x")}, "no"),
    ),
    (
        "too deep",
        b'{"jsonrpc":"2.0","method":"session/update","params":' + b"[" * 2000 + b"]" * 2000 + b"}\n",
    ),
    ("empty line", b"\n"),
]


class RecordingEditor(HeadlessEditor):
    """Takes the stream's bulk as the application does (`session_stream`: `TextRun`s among the
    notifications), and records each run as the notifications it stands for."""

    def __init__(self) -> None:
        self.updates: list[u.SessionNotification] = []
        self.runs = 0

    def session_updates(self, notifications: list[u.SessionNotification]) -> None:
        self.updates += notifications

    def session_stream(self, notifications: list[u.SessionNotification | TextRun]) -> None:
        for notification in notifications:
            if isinstance(notification, TextRun):
                self.runs += 1
                self.updates += notification.notifications()
            else:
                self.updates.append(notification)


class Received(msgspec.Struct):
    updates: list[u.SessionNotification]
    # How many `TextRun`s the editor got (how the lines were read: not compared).
    text_runs: int
    # What the client sent back, each line decoded (answers may go out in any order: sorted).
    sent: list[str]
    protocol_errors: list[str]
    diagnostics: list[str]


def receive(data: bytes, mode: Mode, sessions: frozenset[str] = frozenset({SESSION_ID})) -> Received:
    """`data` read by a real connection and dispatcher, `mode`'s way, `sessions` open."""

    async def main() -> Received:
        agent_send, client_receive = anyio.create_memory_object_stream[bytes](math.inf)
        client_send, agent_receive = anyio.create_memory_object_stream[bytes](math.inf)
        editor = RecordingEditor()
        reports: list[str] = []
        diagnostics = Diagnostics("paths", reports.append, interval=0)
        dispatcher = Dispatcher(editor, diagnostics)
        dispatcher.sessions.update(sessions)
        errors: list[str] = []

        def protocol_error(message: str) -> None:
            errors.append(f"{getattr(message, 'kind', None)}: {message}")

        conn = Connection(
            client_receive,
            client_send,
            on_request=dispatcher.on_request,
            on_notification=dispatcher.on_notification,
            route=dispatcher.route(),
            on_message=(lambda _direction, _line: None) if mode == "typed per line" else None,
            on_protocol_error=protocol_error,
            cancel_method=CANCEL_REQUEST,
        )
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(conn.serve)
                if mode in ("a read per line", "reads of 3 lines"):
                    pieces = data.splitlines(keepends=True)
                    step = 1 if mode == "a read per line" else 3
                    for at in range(0, len(pieces), step):
                        await agent_send.send(b"".join(pieces[at : at + step]))
                else:
                    await agent_send.send(data)
                # Every line handled and every answer written before the stream ends (else which answers
                # are out by then depends on how the reads fell).
                await anyio.wait_all_tasks_blocked()
                await agent_send.aclose()
        sent = b""
        while True:
            try:
                sent += agent_receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
        return Received(editor.updates, editor.runs, sorted(sent.decode().splitlines()), errors, reports)

    return anyio.run(main)


def streams() -> list[tuple[str, bytes]]:
    """(a name, the bytes read): each kind in a run of its own, amid message chunks, and the others amid
    chunks; then all of it in one stream."""
    named: list[tuple[str, bytes]] = []
    for name, update in samples():
        named.append((f"{name}: a run", line(update) * 3))
        named.append(
            (f"{name}: amid chunks", chunk("a ") + line(update) + chunk("é ") + line(update) + chunk("z"))
        )
    for name, data in OTHERS + AROUND_THE_TEMPLATE:
        named.append((f"{name}: amid chunks", chunk("a ") + data + chunk("b ") + chunk("c")))
    named.append(("everything, interleaved", b"".join(data for _, data in named)))
    return named


def differences(data: bytes, sessions: frozenset[str] = frozenset({SESSION_ID})) -> list[str]:
    """How the other modes' results differ from the typed path's (empty: none)."""
    typed = receive(data, "typed per line", sessions)
    found = []
    for mode in MODES[:-1]:
        got = receive(data, mode, sessions)
        for field in Received.__struct_fields__:
            if field != "text_runs" and getattr(got, field) != getattr(typed, field):
                found.append(
                    f"{mode} vs typed per line: {field}: {getattr(got, field)!r} != {getattr(typed, field)!r}"
                )
    return found


def _best_cpu(run: Callable[[], object], repeat: int = 5) -> float:
    best = math.inf
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def time_kinds(count: int) -> list[tuple[str, float, float, float]]:
    """(kind, µs per update: the template reader (after it has seen one line), batched typed, typed per
    line) over `count` lines of each sample."""
    route = codec.decoder(SessionUpdateLine).decode
    envelope = msgspec.json.Decoder(Envelope).decode
    rows = []

    def typed(lines: list[bytes]) -> None:
        for item in lines:
            codec.decode_session_update(envelope(item).params)

    for name, update in samples():
        lines = [line(update)] * count
        assert len(route_leading(route, lines)) == count, name
        reader = TextRunReader(lambda lines: route_leading(route, lines), route)
        reader.leading(lines[:1])
        runs = _best_cpu(lambda lines=lines, reader=reader: reader.leading(lines))  # type: ignore[misc]
        fast = _best_cpu(lambda lines=lines: route_leading(route, lines))  # type: ignore[misc]
        slow = _best_cpu(lambda lines=lines: typed(lines))  # type: ignore[misc]
        rows.append((name, runs / count * 1e6, fast / count * 1e6, slow / count * 1e6))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--lines", type=int, default=20_000, help="lines per kind timed (default 20,000)")
    args = parser.parse_args(argv)
    # The bad lines' reports go to the log, as in the host: not to the terminal.
    logging.basicConfig(handlers=[logging.NullHandler()])
    failed = 0
    checked = streams()
    for name, data in checked:
        for difference in differences(data):
            failed += 1
            print(f"DIFFERENT ({name}): {difference}")
    print(f"{len(checked)} streams read {len(MODES)} ways ({', '.join(MODES)}): {failed or 'no'} differences")
    gc.disable()
    try:
        rows = time_kinds(args.lines)
    finally:
        gc.enable()
    print(f"\nµs per update, process CPU, best of 5 over {args.lines:,} lines of each")
    print(f"{'kind':<36} {'template':>8} {'batched':>8} {'per line':>8}")
    for name, runs, fast, slow in rows:
        print(f"{name:<36} {runs:>8.2f} {fast:>8.2f} {slow:>8.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

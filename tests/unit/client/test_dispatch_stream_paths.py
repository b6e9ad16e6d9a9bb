"""The stream's fast path against the ordinary one (issue 31): every `session/update` kind, read in one block
among message chunks (the route's C-level path: `route_leading`, then the dispatcher's type sets) and read
through the per-line path (a connection with a per-line hook: envelope, then the typed decode of its params),
reaches the editor as the same notifications, in the same order."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from acp_nvim.protocol import codec
from acp_nvim.protocol import unstable as u
from bench import stream_paths
from tests.conftest import TRANSCRIPTS
from tests.unit.protocol.test_codec import UPDATES

SESSION_ID = "s1"


def line(update: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SESSION_ID, "update": update},
    }
    return json.dumps(message).encode() + b"\n"


def chunk(text: str) -> bytes:
    return line({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def received(data: bytes, *, per_line: bool) -> list[u.SessionNotification]:
    """`data` read in one block (the route's C-level path), or each line through the per-line path."""
    mode: stream_paths.Mode = "typed per line" if per_line else "one read"
    return stream_paths.receive(data, mode, frozenset({SESSION_ID})).updates


@pytest.mark.parametrize(("update", "_cls"), UPDATES, ids=[update["sessionUpdate"] for update, _ in UPDATES])
def test_every_update_kind_reaches_the_editor_the_same_by_the_fast_path_and_the_ordinary_one(
    update: dict[str, Any], _cls: type[Any]
) -> None:
    data = chunk("before ") + chunk("é ") + line(update) + chunk("after") + line(update)
    fast, ordinary = received(data, per_line=False), received(data, per_line=True)
    assert len(fast) == 5
    assert fast == ordinary
    assert [type(notification.update) for notification in fast][2] is _cls


# `bench/stream_paths.py`'s streams: every kind (stable and unstable, and the message chunk's variants) in
# runs of its own and amid chunks, the other lines a stream meets (responses, requests, bad lines) amid
# chunks, and all of it interleaved, each read in one read, one read per line and by the typed per-line path.
STREAMS = stream_paths.streams()


@pytest.mark.parametrize("data", [data for _, data in STREAMS], ids=[name for name, _ in STREAMS])
def test_every_stream_is_read_the_same_by_the_batched_path_and_the_typed_one(data: bytes) -> None:
    assert stream_paths.differences(data) == []


def test_the_streams_cover_every_kind_and_what_a_stream_meets() -> None:
    kinds = {update["sessionUpdate"] for _, update in stream_paths.samples()}
    assert kinds == codec.SESSION_UPDATE_KINDS | codec.UNSTABLE_SESSION_UPDATE_KINDS
    everything = stream_paths.receive(STREAMS[-1][1], "one read")
    # What the typed path is compared on is there to compare: the answers to the requests and the bad lines,
    # each bad line's report, and every valid update of the open session.
    assert len(everything.sent) >= 8
    assert {error.split(":")[0] for error in everything.protocol_errors} >= {
        "not_json",
        "not_utf8",
        "invalid_message",
        "too_deep",
    }
    assert len(everything.diagnostics) >= 4
    # A kind's run is 3 updates, amid chunks 2 and 3 chunks; each other line is among 3 chunks, and of the
    # lines shaped like a chunk, 5 are valid chunks of the open session (a second text key, whitespace around
    # the string, an empty text, escapes, the tail's bytes in the text).
    others = len(stream_paths.OTHERS) + len(stream_paths.AROUND_THE_TEMPLATE)
    assert len(everything.updates) == len(stream_paths.samples()) * 8 + others * 3 + 5
    # The template reader did read some of the lines, where reads allowed it.
    assert stream_paths.receive(STREAMS[-1][1], "a read per line").text_runs > 100


def recorded_agents() -> list[tuple[str, bytes, frozenset[str]]]:
    """Each recorded transcript's agent->client lines (real agents' bytes: the TypeScript and Python SDKs'),
    twice over (the second pass meets the templates the first taught), and the sessions they name."""
    found = []
    for path in sorted(TRANSCRIPTS.glob("*.txt")):
        lines = [
            text[3:].encode() + b"\n" for text in path.read_text().splitlines() if text.startswith("<< ")
        ]
        sessions = {
            match.decode() for line in lines for match in re.findall(rb'"sessionId":\s*"([^"]*)"', line)
        }
        found.append((path.name, b"".join(lines) * 2, frozenset(sessions)))
    return found


@pytest.mark.parametrize(
    ("data", "sessions"), [(d, s) for _, d, s in recorded_agents()], ids=[n for n, _, _ in recorded_agents()]
)
def test_real_agents_recorded_lines_are_read_the_same_by_every_path(
    data: bytes, sessions: frozenset[str]
) -> None:
    assert stream_paths.differences(data, sessions) == []

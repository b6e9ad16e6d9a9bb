"""The traffic log: bounded, cheap to record, secrets redacted when shown or saved."""

from __future__ import annotations

import json
import threading
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_nvim.client.agent.traffic import MAX_KEPT_PER_MESSAGE, REDACTED, TrafficLog, describe


def line(message: object) -> bytes:
    return json.dumps(message).encode()


def records_of(log: TrafficLog) -> list[dict[str, Any]]:
    """Each kept message as `:AcpLog` shows and saves it (`app/agent_log.py`): redacted, one record each."""
    return [describe(entry) for entry in log.entries()]


def shown(log: TrafficLog) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records_of(log))


def test_secrets_of_mcp_servers_terminals_and_auth_are_redacted() -> None:
    log = TrafficLog()
    log.record(
        "out",
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {
                    "cwd": "/p",
                    "mcpServers": [
                        {
                            "name": "github",
                            "command": "/bin/gh-mcp",
                            "args": [],
                            "env": [
                                {"name": "GITHUB_TOKEN", "value": "ghp_secret"},
                                {"name": "LANG", "value": "C"},
                            ],
                        }
                    ],
                },
            }
        ),
    )
    log.record(
        "in",
        line(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "terminal/create",
                "params": {
                    "sessionId": "s",
                    "command": "make",
                    "env": [{"name": "AWS_SECRET_ACCESS_KEY", "value": "abc"}],
                },
            }
        ),
    )
    log.record(
        "out",
        line(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "authenticate",
                "params": {"methodId": "key", "_meta": {"apiKey": "sk-123"}},
            }
        ),
    )
    text = shown(log)
    for secret in ("ghp_secret", "abc", "sk-123"):
        assert secret not in text
    records = [json.loads(row) for row in text.splitlines()]
    env = records[0]["message"]["params"]["mcpServers"][0]["env"]
    assert env == [{"name": "GITHUB_TOKEN", "value": REDACTED}, {"name": "LANG", "value": "C"}]
    assert [r["method"] for r in records] == ["session/new", "terminal/create", "authenticate"]
    assert [r["direction"] for r in records] == ["out", "in", "out"]


def test_memory_is_bounded_by_count_and_bytes() -> None:
    log = TrafficLog(max_messages=100, max_bytes=10_000)
    for number in range(1000):
        log.record("in", line({"jsonrpc": "2.0", "method": "session/update", "params": {"n": number}}))
    assert len(log) == 100
    assert log.dropped == 900
    assert json.loads(shown(log).splitlines()[-1])["message"]["params"]["n"] == 999
    log.record("in", b"x" * 50_000_000)  # one enormous line keeps only its beginning
    entries = log.entries()
    assert sum(len(e.line) for e in entries) <= 10_000 + 64 * 1024
    assert entries[-1].truncated and entries[-1].size == 50_000_000


def test_garbage_lines_are_kept_as_text() -> None:
    log = TrafficLog()
    log.record("in", b"\xff not json")
    (record,) = records_of(log)
    assert record["raw"] == "\ufffd not json"


def test_reading_while_another_thread_records() -> None:
    log = TrafficLog(max_messages=500)
    stop = threading.Event()

    def agent() -> None:
        number = 0
        while not stop.is_set():
            log.record("in", line({"jsonrpc": "2.0", "method": "session/update", "params": {"n": number}}))
            number += 1

    thread = threading.Thread(target=agent)
    thread.start()
    try:
        for _ in range(300):
            assert len(log.entries()) <= 500
    finally:
        stop.set()
        thread.join()


def test_a_message_too_deep_to_parse_is_a_placeholder_not_an_error() -> None:
    log = TrafficLog()
    deep = (
        b'{"jsonrpc":"2.0","method":"m","params":{"token":"s3cret","v":' + b"[" * 5000 + b"]" * 5000 + b"}}"
    )
    log.record("in", deep)
    (record,) = records_of(log)
    # Not shown as text: it could not be redacted.
    assert record["raw"] == f"(nested too deeply to show: {len(deep)} bytes)"
    assert "s3cret" not in shown(log)


def kept_one_by_one(lines: list[bytes], max_messages: int, max_bytes: int) -> list[tuple[bytes, int]]:
    """What a log bounded by count and bytes keeps of `lines` recorded one at a time: each line goes in (cut
    to its kept beginning) after the oldest went until it fits, or alone."""
    kept: list[tuple[bytes, int]] = []
    for line in lines:
        head = line[:MAX_KEPT_PER_MESSAGE]
        while kept and (len(kept) >= max_messages or sum(len(k) for k, _ in kept) + len(head) > max_bytes):
            kept.pop(0)
        kept.append((head, len(line)))
    return kept


@settings(max_examples=300, deadline=None)
@given(
    reads=st.lists(
        st.lists(st.integers(0, 3 * MAX_KEPT_PER_MESSAGE // 2).map(lambda n: b"x" * n), max_size=12),
        max_size=12,
    ),
    max_messages=st.integers(1, 10),
    max_bytes=st.integers(1, 4 * MAX_KEPT_PER_MESSAGE),
)
def test_recording_by_read_keeps_what_recording_line_by_line_keeps(
    reads: list[list[bytes]], max_messages: int, max_bytes: int
) -> None:
    log = TrafficLog(max_messages=max_messages, max_bytes=max_bytes)
    for number, lines in enumerate(reads):
        # Each line says which it is, so that the test sees which were kept, not only how many.
        log.record_lines("in", [b"%d.%d " % (number, index) + line for index, line in enumerate(lines)])
    every = [
        b"%d.%d " % (number, index) + line
        for number, lines in enumerate(reads)
        for index, line in enumerate(lines)
    ]
    expected = kept_one_by_one(every, max_messages, max_bytes)
    assert [(entry.line, entry.size) for entry in log.entries()] == expected
    assert len(log) == len(expected)
    assert log.dropped == len(every) - len(expected)


def test_a_read_keeps_its_time_and_direction_for_each_of_its_lines() -> None:
    log = TrafficLog()
    log.record_lines("in", [line({"n": 1}), line({"n": 2})])
    log.record("out", line({"n": 3}))
    entries = log.entries()
    assert [e.direction for e in entries] == ["in", "in", "out"]
    assert entries[0].timestamp == entries[1].timestamp <= entries[2].timestamp
    assert [json.loads(e.line)["n"] for e in entries] == [1, 2, 3]

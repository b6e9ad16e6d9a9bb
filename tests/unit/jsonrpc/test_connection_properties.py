"""Properties: whatever bytes the peer sends, the connection keeps going, and every valid request in the
input gets exactly one answer, however the input is cut into chunks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import msgspec
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE, Connection
from acp_nvim.jsonrpc.framing import HEAD_SIZE
from tests.unit.jsonrpc.test_connection import CANCEL_REQUEST_METHOD, DEADLINE, Wire, echo, ignore
from tests.unit.strategies import cut, json_trees, property_settings

PROPERTY_SETTINGS = property_settings(max_examples=60)


def run_session(
    chunks: list[bytes], probe_ids: list[str], max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> list[Any]:
    """Feed the chunks, wait for an answer to every probe id, end the input; return all the answers."""

    async def main() -> list[Any]:
        wire = Wire()
        conn = Connection(
            wire.conn_receive,
            wire.conn_send,
            on_request=echo,
            on_notification=ignore,
            on_protocol_error=lambda message: None,
            max_message_size=max_message_size,
            cancel_method=CANCEL_REQUEST_METHOD,
        )
        answers: list[Any] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.serve)
            for chunk in chunks:
                await wire.write(chunk)
            waiting = set(probe_ids)
            while waiting:
                answer = await wire.read()
                answers.append(answer)
                waiting.discard(answer.get("id"))
            await wire.input_send.aclose()
        # serve() returned on its own: end of input is the only way out of the task group.
        wire.conn_send.close()
        answers += await wire.read_rest()
        wire.close()
        return answers

    async def bounded() -> list[Any]:
        with anyio.fail_after(DEADLINE):
            return await main()

    return anyio.run(bounded)


def probe(index: int) -> bytes:
    return msgspec.json.encode(
        {"jsonrpc": "2.0", "id": f"probe-{index}", "method": "probe", "params": [index]}
    )


def assert_each_probe_answered_once(answers: list[Any], count: int) -> None:
    ids = Counter(a.get("id") for a in answers if isinstance(a.get("id"), str))
    for index in range(count):
        assert ids[f"probe-{index}"] == 1
    for answer in answers:
        if answer.get("id") in {f"probe-{i}" for i in range(count)}:
            assert answer["result"]["params"] == [int(answer["id"].split("-")[1])]


@PROPERTY_SETTINGS
@given(garbage=st.lists(st.binary(max_size=200), max_size=8))
def test_arbitrary_bytes_never_break_the_connection(garbage: list[bytes]) -> None:
    data = b"".join(g + b"\n" + probe(i) + b"\n" for i, g in enumerate(garbage))
    answers = run_session([data], [f"probe-{i}" for i in range(len(garbage))])
    assert_each_probe_answered_once(answers, len(garbage))


keys = st.sampled_from(["id", "method", "params", "result", "error", "jsonrpc", "x"])
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10)
json_values = json_trees(scalars, keys, width=5, max_leaves=12)


@PROPERTY_SETTINGS
@given(values=st.lists(json_values, max_size=8))
def test_arbitrary_json_values_never_break_the_connection(values: list[object]) -> None:
    lines = []
    for index, value in enumerate(values):
        lines.append(msgspec.json.encode(value))
        lines.append(probe(index))
    answers = run_session([b"\n".join(lines) + b"\n"], [f"probe-{i}" for i in range(len(values))])
    assert_each_probe_answered_once(answers, len(values))
    # No line is answered twice: at most one answer per garbage line plus the probes.
    assert len(answers) <= 2 * len(values)


@PROPERTY_SETTINGS
@given(
    count=st.integers(1, 30),
    notifications=st.integers(0, 30),
    points=st.lists(st.integers(0, 10_000), max_size=30),
    crlf=st.booleans(),
)
def test_valid_requests_split_anywhere_are_each_answered_once(
    count: int, notifications: int, points: list[int], crlf: bool
) -> None:
    ending = b"\r\n" if crlf else b"\n"
    messages = [probe(i) for i in range(count)]
    messages += [
        msgspec.json.encode({"jsonrpc": "2.0", "method": "n", "params": {"i": i}})
        for i in range(notifications)
    ]
    data = ending.join(messages) + ending
    answers = run_session(cut(data, points), [f"probe-{i}" for i in range(count)])
    assert len(answers) == count
    assert_each_probe_answered_once(answers, count)


# Requests of every shape the decoder may choke on. Each is (params, whether its params are over the cap).
SHAPE_CAP = 3 * HEAD_SIZE
shapes = st.one_of(
    st.integers(0, 3000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(0, 1500).map(lambda depth: b'{"a":' * depth + b"1" + b"}" * depth),
    st.integers(SHAPE_CAP // 2, 2 * SHAPE_CAP).map(lambda size: b'"' + b"x" * size + b'"'),
    st.binary(max_size=20).map(lambda raw: b'"' + raw.replace(b"\n", b"") + b'"'),  # bad UTF-8, bad JSON
    st.sampled_from([b"{}", b"null", b'"ok"', b"[1,2]"]),
)


@PROPERTY_SETTINGS
@given(
    requests=st.lists(st.tuples(shapes, st.booleans()), max_size=6), points=st.lists(st.integers(0, 1 << 15))
)
def test_every_request_of_any_shape_and_size_gets_exactly_one_answer(
    requests: list[tuple[bytes, bool]], points: list[int]
) -> None:
    """Deep nesting, over the cap, bad UTF-8, invalid JSON: one answer each, under the request's id when the
    id could be read (before the params in a line over the cap; anywhere in one within it), else under null;
    and the probe after each line is answered as usual."""
    lines = []
    under_null = 0
    readable_ids = []
    for index, (params, id_first) in enumerate(requests):
        request_id = b'"r-%d"' % index
        members = [b'"jsonrpc":"2.0"', b'"method":"m"', b'"params":' + params]
        members.insert(0 if id_first else 3, b'"id":' + request_id)
        line = b"{" + b",".join(members) + b"}"
        lines.append(line)
        readable = id_first if len(line) > SHAPE_CAP else _is_json(line)
        under_null += not readable
        readable_ids.append(readable)
        lines.append(probe(index))
    data = b"\n".join(lines) + b"\n"
    answers = run_session(cut(data, points), [f"probe-{i}" for i in range(len(requests))], SHAPE_CAP)
    assert_each_probe_answered_once(answers, len(requests))
    ids = Counter(a.get("id") for a in answers)
    assert ids[None] == under_null
    for index, readable in enumerate(readable_ids):
        assert ids[f"r-{index}"] == readable
    # One answer per request (under its id or null) and one per probe, nothing else.
    assert len(answers) == 2 * len(requests)


def _is_json(data: bytes) -> bool:
    """UTF-8 JSON, however deep: what is not is answered under null (-32700), its id unknowable."""
    try:
        data.decode("utf-8")
        msgspec.json.decode(data)
    except (UnicodeDecodeError, msgspec.DecodeError):
        return False
    except RecursionError:
        pass
    return True

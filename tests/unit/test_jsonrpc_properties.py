"""Properties: whatever bytes the peer sends, the connection keeps going, and every valid request in the
input gets exactly one answer, however the input is cut into chunks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import msgspec
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.jsonrpc import Connection

from .strategies import cut, json_trees, property_settings
from .test_jsonrpc_connection import DEADLINE, Wire, echo, ignore

PROPERTY_SETTINGS = property_settings(max_examples=60)


def run_session(chunks: list[bytes], probe_ids: list[str]) -> list[Any]:
    """Feed the chunks, wait for an answer to every probe id, end the input; return all the answers."""

    async def main() -> list[Any]:
        wire = Wire()
        conn = Connection(
            wire.conn_receive,
            wire.conn_send,
            on_request=echo,
            on_notification=ignore,
            on_protocol_error=lambda message: None,
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

"""The stream's bulk read by its bytes (`TextRunReader`): a line of a learned template is read as the typed
decode reads it, whatever its text, and a template is learned only where that holds."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_nvim.client.dispatch import SessionUpdateLine
from acp_nvim.client.session import text_run
from acp_nvim.client.session.text_run import TextRun, TextRunReader
from acp_nvim.jsonrpc.wire import route_leading
from acp_nvim.protocol import codec

DECODE = codec.decoder(SessionUpdateLine).decode


def reader() -> TextRunReader:
    return TextRunReader(lambda lines: route_leading(DECODE, lines), DECODE)


def line(
    session_id: str, text: str, style: dict[str, Any], kind: str = "agent_message_chunk", **more: Any
) -> bytes:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **more}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": update},
    }
    return json.dumps(message, **style).encode() + b"\n"


STYLES = st.sampled_from(
    [
        {"separators": (",", ":"), "ensure_ascii": False},
        {"separators": (", ", ": "), "ensure_ascii": True},
        {"indent": None},
        {"sort_keys": True, "ensure_ascii": False},
    ]
)


def typed(lines: list[bytes]) -> list[object]:
    return route_leading(DECODE, lines)


def expanded(params: list[object]) -> list[object]:
    return [n for p in params for n in (p.notifications() if isinstance(p, TextRun) else [p])]


@settings(max_examples=300, deadline=None)
@given(
    session_id=st.text(min_size=1, max_size=8),
    first=st.text(max_size=8),
    texts=st.lists(st.text(max_size=12), min_size=1, max_size=6),
    style=STYLES,
    kind=st.sampled_from(["agent_message_chunk", "agent_thought_chunk"]),
)
def test_a_read_of_template_lines_is_what_the_typed_decode_makes_of_it(
    session_id: str, first: str, texts: list[str], style: dict[str, Any], kind: str
) -> None:
    taker = reader()
    learned = [line(session_id, first, style, kind)]
    assert taker.leading(learned) == (typed(learned), 1)
    lines = [line(session_id, text, style, kind) for text in texts]
    params, count = taker.leading(lines)
    assert count == len(lines)
    assert expanded(params) == typed(lines)


def test_the_common_shape_is_learned_and_read_as_one_run() -> None:
    taker = reader()
    style = {"separators": (",", ":")}
    taker.leading([line("s1", "first ", style)])
    params, count = taker.leading([line("s1", text, style) for text in ("a ", "b ", 'é\n"')])
    assert count == 3 and len(params) == 1 and isinstance(params[0], TextRun)
    assert params[0].texts == ["a ", "b ", 'é\n"']


def test_no_template_from_a_chunk_with_more_than_its_text_or_a_text_found_twice() -> None:
    style = {"separators": (",", ":")}
    for learned in (
        line("s1", "x", style, messageId="m1"),
        line("s1", "x", style, _meta={"k": 1}),
        # The text's JSON is also the session's id: which of the two is the slot is not told by the bytes.
        line("s1", "s1", style),
    ):
        taker = reader()
        taker.leading([learned])
        params, _ = taker.leading([line("s1", "y", style)])
        assert not any(isinstance(p, TextRun) for p in params)


def test_a_read_with_a_line_of_another_shape_is_decoded_the_typed_way() -> None:
    taker = reader()
    style = {"separators": (",", ":")}
    taker.leading([line("s1", "first", style)])
    lines = [line("s1", "a", style), line("s1", "b", style, messageId="m"), line("s1", "c", style)]
    params, count = taker.leading(lines)
    assert count == 3 and params == typed(lines)


def test_a_failure_of_the_template_reader_costs_the_read_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    taker = reader()
    style = {"separators": (",", ":")}
    taker.leading([line("s1", "first", style)])

    def broken(*_args: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(text_run, "_run", broken)
    lines = [line("s1", "a", style), line("s1", "b", style)]
    assert taker.leading(lines) == (typed(lines), 2)

"""The agent's terminal output has one owner of its character boundary: the host (`Tail`). Neovim keeps the
last `limit` bytes of the stream as bytes, so what it hands over may start inside a character."""

from __future__ import annotations

from acp_nvim.app.editor.port import TerminalOutput
from acp_nvim.app.editor.terminal_rules import Tail

EURO = "\u20ac".encode()  # 3 bytes


def answer(stream: bytes, since: int, limit: int) -> TerminalOutput:
    """What terminal.lua answers for `stream` so far: its last `limit` bytes, from `since` when still kept."""
    kept_from = max(len(stream) - limit, 0)
    start = since if kept_from <= since <= len(stream) else kept_from
    text = stream[start:].decode("utf-8", "surrogateescape")
    return TerminalOutput(ok=True, output=text, from_=start, total=len(stream), limit=limit)


def test_a_character_neovim_cut_in_two_is_dropped_whole() -> None:
    stream = b"a" + EURO + EURO  # 7 bytes; Neovim keeps the last 4: one byte of the first euro, then one
    tail = Tail()
    assert tail.take(answer(stream, 0, 4)) == "\u20ac"
    assert tail.truncated
    # The next poll adds to what is kept: nothing more is dropped at the start.
    stream += b"x"
    assert tail.take(answer(stream, tail.total, 4)) == "\u20acx"


def test_a_stream_kept_whole_is_not_cut() -> None:
    stream = EURO + b"b"
    tail = Tail()
    assert tail.take(answer(stream, 0, 16)) == "\u20acb"
    assert not tail.truncated


def test_bytes_dropped_between_polls_restart_the_tail() -> None:
    tail = Tail()
    assert tail.take(answer(b"start", 0, 6)) == "start"
    stream = b"start" + b"-" * 10 + EURO + b"end"
    # Neovim dropped more than the host kept: it sends what it has, which starts inside the euro sign.
    got = answer(stream, tail.total, 5)
    assert got.from_ != 5
    assert tail.take(got) == "end"
    assert tail.truncated

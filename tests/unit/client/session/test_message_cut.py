"""The cut of a long message (acp_nvim/client/session/message_cut.py): whatever the chunks, the chat shows the
message's beginning and its end, the note counts exactly what is between, and the file holds it whole."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_nvim.client.session import message_cut, transcript
from acp_nvim.client.session.transcript import MessageItem


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab\n", max_size=40), max_size=30))
def test_beginning_cut_and_end_add_up_to_the_whole_message(chunks: list[str]) -> None:
    with (
        mock.patch.object(transcript, "HEAD_CHARS", 20),
        mock.patch.object(message_cut, "TAIL_CHARS", 16),
        mock.patch.object(message_cut, "_LINE_START_SEARCH", 4),
    ):
        item = MessageItem("1", "agent", None)
        for text in chunks:
            head, _, _ = item.clip(text)
            item.append(head)
        whole = "".join(chunks)
        if item.cut is None:
            assert item.text == whole
            return
        tail = item.cut.tail_text
        assert item.text == whole[:20]
        assert whole.endswith(tail) and len(tail) <= 2 * 16
        assert len(item.text) + item.hidden + len(tail) == len(whole)
        assert Path(item.cut.whole.path).read_text() == whole


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="ab\né", max_size=12), max_size=12), st.integers(0, 40))
def test_writes_held_then_released_give_the_file_of_writes_one_by_one(pieces: list[str], limit: int) -> None:
    """Up to the file's limit and its note, whatever the pieces."""
    with mock.patch.object(message_cut, "MAX_FILE_CHARS", limit):
        one_by_one, held = message_cut.WholeMessage(), message_cut.WholeMessage()
        held.hold()
        for piece in pieces:
            one_by_one.write(piece)
            held.write(piece)
        assert Path(held.path).read_text() == ""
        held.release()
        assert Path(held.path).read_text() == Path(one_by_one.path).read_text()
        assert held.chars == one_by_one.chars

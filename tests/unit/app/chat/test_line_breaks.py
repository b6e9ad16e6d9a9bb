"""Where the chat continues a very long line of a message (app/chat/line_breaks.py): prose only, the same
lines whether the message is streamed in pieces or drawn whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.app.chat.line_breaks import LONG_LINE_CHARS, LineBreaker, broken
from acp_nvim.client.session.state import SessionState
from tests.unit.client.session.test_state import chunk, item_view, ops_for

WORDS = " ".join(f"word{n}" for n in range(5_000))  # ~44,000 characters on one line


def test_a_long_paragraph_goes_on_on_new_lines_at_its_spaces() -> None:
    text, _ = broken(WORDS)
    lines = text.split("\n")
    assert len(lines) == len(WORDS) // LONG_LINE_CHARS + 1
    # Each line goes on before the first word past the limit (its space kept): no word cut, nothing lost.
    assert all(LONG_LINE_CHARS <= len(line) <= LONG_LINE_CHARS + len("word4999 ") for line in lines[:-1])
    assert all(line.endswith(" ") for line in lines[:-1])
    assert text.replace(" \n", " ") == WORDS


def test_code_keeps_its_lines() -> None:
    long_code = "x = 1; " * 2_000
    fenced = f"Before.\n```python\n{long_code}\n```\n{WORDS}"
    text, _ = broken(fenced)
    lines = text.split("\n")
    assert lines[:4] == ["Before.", "```python", long_code, "```"]
    assert len(lines) > 5  # the prose after the block is broken again
    # A ```` block is not closed by ```; ~~~ blocks; indented code; a table row; a line without a space.
    for kept in (
        f"````\n```\n{long_code}\n````",
        f"~~~\n{long_code}\n~~~",
        f"    {long_code}",
        f"| {long_code} |",
        "x" * 3 * LONG_LINE_CHARS,
    ):
        assert broken(kept)[0] == kept


@given(
    st.lists(st.sampled_from(["ab ", "c", " ", "\n", "```", "    ", "|", "word ", "~~~"]), max_size=80),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=10),
)
def test_streamed_in_any_pieces_it_breaks_as_drawn_whole(parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    whole, _ = broken(text, limit=6)
    breaker, streamed, start, index = LineBreaker(limit=6), [], 0, 0
    while start < len(text):
        end = start + cuts[index % len(cuts)]
        streamed.append(breaker.feed(text[start:end]))
        start, index = end, index + 1
    assert "".join(streamed) == whole
    # A break is a newline after a space: nothing else changes.
    assert whole.replace(" \n", " ") == text.replace(" \n", " ")


def test_a_streamed_message_reaches_the_chat_as_a_replay_draws_it() -> None:
    """With the chat's breaks kept from one flush to the next, and without them (each append finds its line's
    state again): the same lines as the message drawn whole."""
    words = [f"word{n} " for n in range(5_000)]
    for keep in (True, False):
        state = SessionState("s")
        breaks = {} if keep else None
        shown: list[str] = []
        for start in range(0, len(words), 97):
            for word in words[start : start + 97]:
                state.apply(chunk(word))
            for op in ops_for(state, state.take_changes(), "A", breaks):
                if op["op"] == "add":
                    shown.append("\n".join(line["s"][0][0] for line in op["item"]["lines"][1:]))
                elif op["op"] == "append":
                    shown.append(op["text"])
        replay = item_view(state.item("1"), "A")
        assert "".join(shown) == "\n".join(line["s"][0][0] for line in replay["lines"][1:])
        assert len(replay["lines"]) > 5

"""Message chunks read together are applied as runs (`SessionState.apply_chunks`): the transcript and the
changes a renderer sees are those of applying each chunk in turn, however the chunks fall into runs, and
whether plain text chunks come as themselves or as the stream's `TextRun`s."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest import mock

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_nvim.client.session import message_cut
from acp_nvim.client.session import state as session_module
from acp_nvim.client.session import transcript as transcript_module
from acp_nvim.client.session.state import ChunkUpdate, SessionState
from acp_nvim.client.session.text_run import TEXT_CHUNKS, TextRun
from acp_nvim.client.session.transcript import Changes, MessageItem
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s

KINDS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")


def chunk(kind: str, text: str, message_id: str | None, *, link: bool = False) -> ChunkUpdate:
    content: dict[str, Any] = (
        {"type": "resource_link", "name": text or "x", "uri": "file:///x"}
        if link
        else {"type": "text", "text": text}
    )
    raw: dict[str, Any] = {"sessionUpdate": kind, "content": content}
    if message_id is not None:
        raw["messageId"] = message_id
    notification = codec.decode_session_update(
        msgspec.Raw(msgspec.json.encode({"sessionId": "s", "update": raw}))
    )
    assert notification is not None
    update = notification.update
    assert isinstance(
        update,
        s.SessionUpdateAgentMessageChunk | s.SessionUpdateAgentThoughtChunk | s.SessionUpdateUserMessageChunk,
    )
    return update


texts = st.text(alphabet="ab \n`", max_size=12)
message_ids = st.sampled_from([None, None, "m1", "m2"])
mixed_chunks = st.builds(
    chunk,
    st.sampled_from(KINDS),
    texts,
    message_ids,
    link=st.sampled_from([False] * 7 + [True]),  # now and then a block that is not text
)
# Most runs are one message streamed (the same kind and id), where the message's bound is reached.
one_message = st.builds(
    lambda kind, message_id, pieces: [chunk(kind, piece, message_id) for piece in pieces],
    st.sampled_from(KINDS),
    message_ids,
    st.lists(texts, min_size=1, max_size=8),
)
# A step: a run of chunks read together, a prompt typed here, a turn's end, or a frame (the renderer takes the
# changes).
steps = st.lists(
    st.one_of(
        one_message,
        st.lists(mixed_chunks, min_size=1, max_size=8),
        st.just("prompt"),
        st.just("end"),
        st.just("frame"),
    ),
    max_size=25,
)


def seen(changes: Changes) -> tuple[object, ...]:
    """What a renderer draws from the changes: the text appended per item, however it was cut in pieces."""
    appended = {key: "".join(pieces) for key, pieces in changes.appended.items()}
    return (changes.added, appended, changes.replaced, changes.noted, changes.meta)


def as_text_runs(step: list[ChunkUpdate]) -> list[ChunkUpdate | TextRun]:
    """The step as the stream's template reader hands it on: each stretch of plain text chunks of one kind
    without a message id (agent message or thought) a `TextRun`, the others as they are."""
    out: list[ChunkUpdate | TextRun] = []
    for update in step:
        plain = (
            type(update) in TEXT_CHUNKS
            and type(update.content) is s.ContentBlockText
            and update.message_id is None
        )
        if not plain:
            out.append(update)
            continue
        text = update.content.text  # type: ignore[union-attr]
        last = out[-1] if out else None
        if isinstance(last, TextRun) and last.kind is type(update):
            last.texts.append(text)
        else:
            out.append(TextRun("s", type(update), [text]))  # type: ignore[arg-type]
    return out


def play(steps: list[Any], *, in_runs: bool, text_runs: bool = False) -> tuple[list[object], list[object]]:
    state = SessionState("s")
    frames: list[object] = []
    for step in steps:
        if step == "prompt":
            state.add_user_prompt("my prompt")
        elif step == "end":
            state.end_turn("end_turn")
        elif step == "frame":
            frames.append(seen(state.take_changes()))
        elif text_runs:
            state.apply_chunks(as_text_runs(step))
        elif in_runs:
            state.apply_chunks(step)
        else:
            for update in step:
                state.apply(update)
    frames.append(seen(state.take_changes()))
    items = [
        (
            item.key,
            item.role,
            item.message_id,
            item.text,
            item.hidden,
            item.cut and item.cut.tail_text,
            # The whole message's file, written once per run.
            item.cut and Path(item.cut.whole.path).read_text(),
        )
        if isinstance(item, MessageItem)
        else item
        for item in state.items
    ]
    return items, frames


@settings(max_examples=300, deadline=None)
@given(steps)
def test_chunks_applied_in_runs_give_the_transcript_and_changes_of_one_by_one(steps: list[Any]) -> None:
    # Small bounds, so that the cut of a message (and its moves, what is hidden past it) is reached.
    with (
        mock.patch.object(session_module, "HEAD_CHARS", 30),
        mock.patch.object(transcript_module, "HEAD_CHARS", 30),
        mock.patch.object(message_cut, "TAIL_CHARS", 8),
    ):
        one_by_one = play(steps, in_runs=False)
        assert play(steps, in_runs=True) == one_by_one
        assert play(steps, in_runs=True, text_runs=True) == one_by_one


def test_a_run_that_goes_on_with_the_streamed_message_is_one_append() -> None:
    state = SessionState("s")
    state.apply(chunk("agent_message_chunk", "Hel", None))
    state.take_changes()
    state.apply_chunks([chunk("agent_message_chunk", text, None) for text in ("lo", " wor", "ld")])
    changes = state.take_changes()
    assert changes.appended == {"1": ["lo world"]} and not changes.added
    assert [item.text for item in state.items if isinstance(item, MessageItem)] == ["Hello world"]


def test_a_run_past_the_message_s_cut_is_one_write_to_its_file() -> None:
    state = SessionState("s")
    with (
        mock.patch.object(session_module, "HEAD_CHARS", 4),
        mock.patch.object(transcript_module, "HEAD_CHARS", 4),
    ):
        state.apply(chunk("agent_message_chunk", "Hello", None))
        item = next(item for item in state.items if isinstance(item, MessageItem))
        assert item.cut is not None
        with mock.patch.object(message_cut.os, "write", wraps=message_cut.os.write) as write:
            state.apply_chunks([chunk("agent_message_chunk", text, None) for text in (" wor", "ld", "!")])
        assert write.call_count == 1
        assert Path(item.cut.whole.path).read_text() == "Hello world!"

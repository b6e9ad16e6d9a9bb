"""The updates of one read reach their chats in order, a run of chunks at a time (`on_session_updates`)."""

from __future__ import annotations

import logging

import pytest

from acp_nvim.app.runs import ChatSession
from acp_nvim.client.session.text_run import TextRun
from acp_nvim.client.session.transcript import MessageItem, NoticeItem, ToolCallItem
from acp_nvim.protocol import schema as s

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


def said(session_id: str, text: str) -> s.SessionNotification:
    return s.SessionNotification(
        session_id=session_id,
        update=s.SessionUpdateAgentMessageChunk(content=s.ContentBlockText(text=text)),
    )


def tool_call(session_id: str) -> s.SessionNotification:
    return s.SessionNotification(
        session_id=session_id, update=s.SessionUpdateToolCall(tool_call_id="t1", title="Read a file")
    )


def shown(items: list[object]) -> list[str]:
    return [
        item.text if isinstance(item, MessageItem) else f"tool: {item.title}"
        for item in items
        if isinstance(item, MessageItem | ToolCallItem)
    ]


async def test_a_read_of_updates_for_two_chats_lands_in_each_in_its_order() -> None:
    app = App()
    run, first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None
    one, two = first.session_id, second.session_id
    app.incoming.on_session_updates(
        [
            said(one, "Hel"),
            said(one, "lo"),
            said(two, "Bon"),
            said(one, " you"),
            tool_call(one),
            said(one, "after"),
            said(two, "jour"),
        ]
    )
    assert shown(first.state.items) == ["Hello you", "tool: Read a file", "after"]
    assert shown(second.state.items) == ["Bonjour"]


async def test_an_update_that_fails_to_apply_is_logged_and_the_rest_of_the_read_still_lands(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = App()
    run, first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None

    def broken(*args: object) -> None:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(first.state, "apply_chunks", broken)
    monkeypatch.setattr(first.state, "apply", broken)
    with caplog.at_level(logging.ERROR, "acp_nvim.incoming"):
        app.incoming.on_session_updates(
            [said(first.session_id, "lost"), said(second.session_id, "kept"), tool_call(first.session_id)]
        )
        app.incoming.on_session_updates([said(second.session_id, " too")])
    assert shown(second.state.items) == ["kept too"]
    assert "message chunks of session" in caplog.text
    assert "update SessionUpdateToolCall of session" in caplog.text


class RecordingChat:
    """A chat that records the first message's text at each `changed()`, and shows at once when told to."""

    def __init__(self, session: ChatSession, at_once: bool) -> None:
        self.session, self.at_once, self.seen = session, at_once, list[str]()

    def changed(self) -> None:
        self.seen.append(shown(self.session.state.items)[0])

    def shows_at_once(self) -> bool:
        return self.at_once

    def flush(self) -> None:
        pass

    def discard(self) -> None:
        pass


@pytest.mark.parametrize("at_once", [True, False])
async def test_the_first_words_of_a_read_are_shown_alone_when_the_chat_shows_them_at_once(
    at_once: bool,
) -> None:
    """An agent that sends fast has hundreds of chunks in one read: its first words go at once, alone (drawing
    all of them first held them back), the rest with the next frame; within a frame, all in one go."""
    app = App()
    _, session = await app.start("a", FakeAgent())
    chat = RecordingChat(session, at_once)
    session.chat = chat
    app.incoming.on_session_updates([said(session.session_id, word) for word in ("The ", "first ", "words")])
    assert chat.seen == (["The ", "The first words"] if at_once else ["The first words"])


@pytest.mark.parametrize("at_once", [True, False])
async def test_a_read_of_text_runs_lands_as_its_chunks_would(at_once: bool) -> None:
    """The stream's bulk read by its bytes (`TextRun`): the same chat, its first words alone as above, and a
    run for a session that is not a chat (a subagent's, one not open yet) goes its way chunk by chunk."""
    app = App()
    run, session = await app.start("a", FakeAgent())
    other = await app.sessions.new(run)
    assert other is not None
    chat = RecordingChat(session, at_once)
    session.chat = chat
    sid, kind = session.session_id, s.SessionUpdateAgentMessageChunk
    with app.runs.expecting_session():
        app.incoming.on_session_updates(
            [
                TextRun(sid, kind, ["The ", "first "]),
                said(sid, "words"),
                TextRun(other.session_id, kind, ["Bon", "jour"]),
                TextRun("not-open-yet", kind, ["early"]),
                tool_call(sid),
                TextRun(sid, s.SessionUpdateAgentThoughtChunk, ["hm"]),
            ]
        )
    assert chat.seen[0] == ("The " if at_once else "The first words")
    assert shown(session.state.items) == ["The first words", "tool: Read a file", "hm"]
    assert shown(other.state.items) == ["Bonjour"]
    # Kept for the session being opened, as its chunk would have been.
    assert app.runs._early["not-open-yet"] == [said("not-open-yet", "early").update]


def notice(session_id: str, severity: str, title: str) -> s.SessionNotification:
    return s.SessionNotification(
        session_id=session_id, update=s.SessionUpdateNotice(severity=severity, title=title)
    )


async def test_a_warning_or_an_error_of_the_agent_is_told_once_and_never_from_a_replayed_history() -> None:
    """Issue 29: every notice is a line of the chat; a warning or an error is also a notification, once for
    the same text (agents repeat theirs every turn), and none for the notices of a history replayed."""
    app = App()
    _, session = await app.start("a", FakeAgent())
    sid = session.session_id
    app.incoming.on_session_updates(
        [
            notice(sid, "warning", "Low disk"),
            notice(sid, "info", "Model rerouted"),
            notice(sid, "warning", "Low disk"),
            notice(sid, "error", "Quota\nexceeded"),
        ]
    )
    assert app.port.notes[-2:] == [("a: Low disk", 3), ("a: Quota exceeded", 4)]
    assert len([note for note in app.port.notes if "Low disk" in note[0]]) == 1
    session.replaying = True
    app.incoming.on_session_updates([notice(sid, "error", "Old trouble")])
    assert not [note for note in app.port.notes if "Old trouble" in note[0]]
    assert [item.text for item in session.state.items if isinstance(item, NoticeItem)][-5:] == [
        "Low disk",
        "Model rerouted",
        "Low disk",
        "Quota\nexceeded",
        "Old trouble",
    ]

"""The updates of one read reach their chats in order, a run of chunks at a time (`on_session_updates`)."""

from __future__ import annotations

import logging

import pytest

from acp_nvim.client.transcript import MessageItem, ToolCallItem
from acp_nvim.protocol import schema as s

from .fakes import App, FakeAgent

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

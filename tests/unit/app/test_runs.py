"""The current session: one owner, one answer for every command."""

from __future__ import annotations

import pytest

from acp_nvim.app.runs import NO_SESSION, SESSION_CLOSED
from acp_nvim.protocol import schema as s

from .fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


async def test_a_command_is_for_the_chat_it_comes_from_else_the_one_used_last() -> None:
    app = App()
    run, first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None
    assert app.runs.current().session is second
    assert app.runs.current(first.session_id).session is first
    assert app.runs.current(first.session_id).run is run


async def test_while_a_new_session_is_asked_for_a_command_from_no_chat_is_told_it_is_opening() -> None:
    app = App()
    _, first = await app.start("a", FakeAgent())
    with app.runs.asking("a", "/p") as opening, app.runs.asking("a", "/p") as last:
        # The session asked for last; the one in use stays for what does not wait (a cancel, a mode).
        assert app.runs.current().opening is last and app.runs.current().session is first
        # A chat's own command is for its chat.
        assert app.runs.current(first.session_id).opening is None
    assert opening is not last and app.runs.current().opening is None


async def test_a_stored_session_being_opened_is_its_own_chats_opening_too() -> None:
    app = App()
    _, first = await app.start("a", FakeAgent())
    with app.runs.asking("a", "/p", "old-1") as opening:
        assert app.runs.current("old-1").opening is opening and app.runs.current().opening is opening
        # Another chat's command is for its chat.
        assert app.runs.current(first.session_id).opening is None
    assert app.runs.current("old-1").opening is None


async def test_a_closed_chat_and_no_chat_at_all_say_different_things() -> None:
    app = App()
    assert app.runs.current().missing == NO_SESSION
    await app.start("a", FakeAgent())
    assert app.runs.current("gone").session is None
    assert app.runs.current("gone").missing == SESSION_CLOSED


async def test_closing_the_current_chat_makes_the_one_used_before_current() -> None:
    app = App()
    run, first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None
    await app.commands.close_session(second.session_id)
    assert app.runs.current().session is first
    assert app.port.ended == [second.session_id]
    assert app.port.status.session_id == first.session_id


async def test_an_agent_started_shows_until_its_first_session_opens() -> None:
    app = App()
    await app.start("a", FakeAgent())
    app.runs.clear_current()
    app.runner.launch(app.runs.agents["a"].spec.__class__(name="b", cmd="b"))
    app.status.push()
    assert (app.port.status.agent_name, app.port.status.state) == ("b", "starting")


async def test_updates_read_before_session_new_answered_land_in_its_chat() -> None:
    app = App()
    run = app.connect("a", FakeAgent())
    update = s.SessionUpdateSessionInfoUpdate(title="early title")
    with app.runs.expecting_session():
        app.incoming.on_session_updates([s.SessionNotification(session_id="sess-1", update=update)])
    # Outside an opening, an update for an unknown session is dropped.
    app.incoming.on_session_updates([s.SessionNotification(session_id="other", update=update)])
    session = await app.sessions.new(run, first=True)
    assert session is not None and session.state.title == "early title"
    later = await app.sessions.new(run)
    assert later is not None and later.state.title is None
    assert app.chats.open(run, "other", "/", []).state.title is None

"""What the user is told of while looking elsewhere (issue 30): a turn's end, a question waiting, an agent's
failure, each decided where it happens and handed to Neovim as one fact; and the statusline's word for a
permission waiting in another session."""

from __future__ import annotations

import pytest

from acp_nvim.app import attention
from acp_nvim.app.status import build_status
from acp_nvim.protocol import schema as s

from .fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


def test_the_words_of_each_fact() -> None:
    assert attention.turn_ended("codex", "s1", "end_turn").message == "codex: turn ended"
    ended = attention.turn_ended("codex", "s1", "max_tokens")
    assert (ended.message, ended.stop_reason, ended.session_ids, ended.notify) == (
        "codex: turn ended (max tokens)",
        "max_tokens",
        ["s1"],
        True,
    )
    # The user ended it: an event, no notification.
    assert not attention.turn_ended("codex", "s1", "cancelled").notify
    asked = attention.waiting("codex", "s1", "permission", "Edit main.py\n  and more")
    assert (asked.event, asked.kind, asked.message) == (
        "Waiting",
        "permission",
        "codex asks permission: Edit main.py and more",
    )
    form = attention.waiting("gemini", None, "elicitation", "x" * 500)
    assert form.session_ids == [] and form.message == "gemini asks: " + "x" * attention.ABOUT_CHARS + "…"
    failed = attention.failed("codex", "codex stopped: exit 1", ["s1", "s2"])
    assert (failed.event, failed.message, failed.session_ids) == (
        "Error",
        "codex stopped: exit 1",
        ["s1", "s2"],
    )


async def test_a_turn_end_is_told_after_the_chat_shows_it() -> None:
    app = App()
    _, session = await app.start("a", FakeAgent())
    await app.turns.prompt("hello")
    (fact,) = app.port.attentions
    assert (fact.event, fact.agent, fact.session_id, fact.stop_reason) == (
        "TurnEnd",
        "a",
        session.session_id,
        "end_turn",
    )


async def test_a_permission_waiting_is_told_and_named_in_the_status_of_another_session() -> None:
    app = App()
    _, first = await app.start("a", FakeAgent())
    _, second = await app.start("b", FakeAgent(session_prefix="other"))
    request = s.RequestPermissionRequest(
        session_id=first.session_id,
        tool_call=s.ToolCallUpdate(tool_call_id="t1", title="Edit main.py", kind="edit"),
        options=[s.PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
    )
    first.permissions = 1
    status = build_status(app.runs)
    assert (status.session_id, status.state, status.waiting) == (
        second.session_id,
        "ready",
        "a awaits permission",
    )
    first.permissions = 0
    assert build_status(app.runs).waiting is None
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id="ok")
    await app.incoming.ask_permission(request)
    (fact,) = app.port.attentions
    assert (fact.event, fact.kind, fact.about, fact.session_ids) == (
        "Waiting",
        "permission",
        "Edit main.py",
        [first.session_id],
    )


async def test_an_agent_failure_is_told_with_its_chats() -> None:
    app = App()
    run, session = await app.start("a", FakeAgent())
    app.status.fail(run, "a stopped: exit 1")
    (fact,) = app.port.attentions
    assert (fact.event, fact.agent, fact.message, fact.session_ids) == (
        "Error",
        "a",
        "a stopped: exit 1",
        [session.session_id],
    )

"""What status() says, decided in Python from the current session and its agent."""

from __future__ import annotations

import typing

import msgspec
import pytest

from acp_nvim.app.client_capabilities import advertise
from acp_nvim.app.lifecycle import Phase
from acp_nvim.app.status import build_status
from acp_nvim.app.status_facts import FACTS
from acp_nvim.app.views import State
from acp_nvim.protocol import schema as s

from .fakes import App, FakeAgent

METHODS = [
    s.AuthMethodAgent(id="key", name="API key"),
    s.AuthMethodTerminal(id="tty", name="Terminal login"),
]

pytestmark = pytest.mark.anyio


async def test_nothing_started_is_stopped() -> None:
    status = build_status(App().runs)
    assert (status.state, status.agent, status.session_id, status.sessions) == ("stopped", None, None, 0)


async def test_the_state_follows_the_agent_then_the_session_turn_and_permission() -> None:
    app = App()
    run = app.connect("a", FakeAgent())
    assert build_status(app.runs).state == "starting"
    run, session = await app.start("b", FakeAgent())
    assert build_status(app.runs).state == "ready"
    session.in_turn = True
    assert build_status(app.runs).state == "running"
    session.permissions = 1
    assert build_status(app.runs).state == "awaiting_permission"
    app.status.fail(run, "b stopped: exit 1")
    assert (app.port.status.state, app.port.status.error) == ("error", "b stopped: exit 1")
    # The message is shown before the status changes.
    assert app.port.notes[-1][0] == "b stopped: exit 1"


async def test_terminal_login_is_offered_per_agent_not_by_the_agent_launched_last() -> None:
    app = App()
    _, with_tty = await app.start("a", FakeAgent(auth_methods=METHODS), terminal_auth=True)
    await app.start("b", FakeAgent(auth_methods=METHODS, session_prefix="b"), terminal_auth=False)
    assert build_status(app.runs).auth_methods == ["key"]
    app.status.use(with_tty.session_id)
    assert build_status(app.runs).auth_methods == ["key", "tty"]


async def test_the_advertised_capabilities_carry_the_agents_own_terminal_login() -> None:
    caps = s.ClientCapabilities()
    assert advertise(caps, True).auth.terminal is True
    assert advertise(caps, False).auth.terminal is False
    assert advertise(caps, False).session is not None


def test_the_advertised_capabilities_ask_for_notices_and_compactions() -> None:
    """Issue 29: agents send `notice` and `compaction_update` only to a client that advertises them."""
    wire = msgspec.json.decode(msgspec.json.encode(advertise(s.ClientCapabilities(), False)))
    assert wire["session"]["notices"] == {} and wire["session"]["compaction"] == {}, wire


async def test_what_lua_shows_before_the_host_answers_is_what_python_decides_then() -> None:
    """`status_facts.json` is Python's: each state it declares for a fact Lua records is the one the host
    pushes once it has handled that fact, so the host's answer changes nothing the user sees."""
    facts = FACTS.facts
    app = App()
    assert FACTS.no_host == build_status(app.runs).state == facts["stopped_without_host"].state
    run = app.connect("a", FakeAgent())
    for start in ("agent_start_requested", "current_agent_start_requested", "restart_requested"):
        assert facts[start].state == build_status(app.runs).state
    assert FACTS.chat_coming_in == [build_status(app.runs).state]
    # A prompt sent while the agent starts goes to the host, which knows whether a session it can wait for is
    # being reopened (app/sessions/asked.py), else refuses it saying the agent is starting.
    assert build_status(app.runs).state not in facts["prompt_submitted"].refused
    # A start of the running agent opens a session: only a stopped or failed one starts again.
    assert facts["current_agent_start_requested"].applies_in == [Phase.STOPPED.shown, Phase.FAILED.shown]
    run, session = await app.start("b", FakeAgent())
    ready = build_status(app.runs).state
    assert facts["prompt_submitted"].applies_in == [ready]
    session.in_turn = True
    busy = build_status(app.runs).state
    assert facts["prompt_submitted"].state == busy
    # A prompt sent while the agent works goes to the host, which queues it: Lua refuses it in no busy state.
    assert busy not in facts["prompt_submitted"].refused
    session.permissions = 1
    assert build_status(app.runs).state not in facts["prompt_submitted"].refused
    app.status.fail(run, "b stopped: exit 1")
    for failure in ("host_failed", "host_exited"):
        assert facts[failure].state == app.port.status.state
    # The host's death is said unless the agent was stopped already.
    assert set(facts["host_exited"].applies_in or []) == set(typing.get_args(State)) - {FACTS.no_host}

"""`:AcpFork` (`app/sessions/forking.py`): the session forked into a new chat where the agent advertises
`session/fork`; what the agent replays before its answer lands in the new chat; elsewhere nothing is sent."""

from __future__ import annotations

import anyio
import pytest

from acp_nvim.app.port import WARN
from acp_nvim.app.sessions.prompt_queue import NOT_OPENED, WAITING
from acp_nvim.client.session.transcript import MessageItem, NoticeItem
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


def _texts(session_items: list[object]) -> list[str]:
    return [item.text for item in session_items if isinstance(item, (MessageItem, NoticeItem))]


async def test_a_fork_opens_a_new_chat_with_what_the_agent_replayed_and_makes_it_current() -> None:
    app = App()
    agent = FakeAgent()
    agent.features = {"fork"}
    agent.replay = app.incoming.on_session_updates
    agent.fork_updates = [
        s.SessionUpdateUserMessageChunk(content=s.ContentBlockText(text="earlier question")),
        s.SessionUpdateAgentMessageChunk(content=s.ContentBlockText(text="earlier answer")),
    ]
    _, source = await app.start("a", agent)
    source.state.apply(s.SessionUpdateSessionInfoUpdate(title="The source"))
    # The fork answers with the modes it has.
    agent.modes = s.SessionModeState(
        current_mode_id="ask", available_modes=[s.SessionMode(id="ask", name="Ask")]
    )

    await app.forks.fork(source.session_id)

    assert ("fork_session", source.session_id) in agent.calls
    forked = app.runs.current().session
    assert forked is not None and forked.session_id != source.session_id
    assert forked.session_id in app.port.chats
    assert _texts(forked.state.items) == [
        "earlier question",
        "earlier answer",
        "Forked from The source: its history above is what the agent replayed of it;"
        " the agent keeps its context",
    ]
    assert app.port.statuses[-1].session_id == forked.session_id
    assert app.port.statuses[-1].mode_name == "Ask"
    # The source is untouched.
    assert source.session_id in app.runs.sessions and not _texts(source.state.items)


async def test_a_fork_the_agent_does_not_replay_says_so() -> None:
    app = App()
    agent = FakeAgent()
    agent.features = {"fork"}
    _, source = await app.start("a", agent)
    await app.forks.fork(None)
    forked = app.runs.current().session
    assert forked is not None and forked is not source
    (notice,) = _texts(forked.state.items)
    assert notice.startswith(f"Forked from {source.session_id}: its history is not replayed")


async def test_an_agent_without_fork_is_sent_nothing_and_the_user_is_told() -> None:
    app = App()
    agent = FakeAgent(name="Plain")
    _, source = await app.start("a", agent)
    await app.forks.fork(source.session_id)
    assert not [call for call in agent.calls if call[0] == "fork_session"]
    assert list(app.runs.sessions) == [source.session_id]
    assert ("a cannot fork sessions (it does not offer session/fork)", WARN) in app.port.notes
    assert app.port.statuses[-1].session_features == []


async def _fork_held(app: App, agent: FakeAgent) -> anyio.Event:
    """The fork waits for the event returned."""
    return agent.held_until("fork_session")


async def test_a_prompt_from_no_chat_while_a_session_forks_waits_and_goes_to_the_fork() -> None:
    app = App()
    agent = FakeAgent()
    agent.features = {"fork"}
    _, source = await app.start("a", agent)
    forked = await _fork_held(app, agent)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.forks.fork, source.session_id)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("first")
        await app.turns.prompt("second")
        # Not to the source, which stays the session in use until the fork is open.
        assert agent.prompts == [] and app.runs.current().session is source
        assert app.port.texts() == [WAITING, WAITING]
        # The source's own chat still sends to it.
        await app.turns.prompt("mine", session_id=source.session_id)
        forked.set()
    fork = app.runs.current().session
    assert fork is not None and fork is not source
    assert [call for call in agent.calls if call[0] == "prompt"] == [
        ("prompt", source.session_id),
        ("prompt", fork.session_id),
        ("prompt", fork.session_id),
    ]
    assert agent.prompts == ["mine", "first", "second"]


async def test_a_prompt_waiting_for_a_fork_the_agent_refuses_is_given_back() -> None:
    app = App()
    agent = FakeAgent()
    agent.features = {"fork"}
    _, source = await app.start("a", agent)
    forked = await _fork_held(app, agent)
    agent.refuse["fork_session"] = RpcError(-32603, "no forks")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.forks.fork, None)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("kept")
        forked.set()
    assert app.port.refused == [NOT_OPENED] and agent.prompts == []
    assert list(app.runs.sessions) == [source.session_id]

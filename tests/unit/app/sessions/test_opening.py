"""Opening a stored session (`app/sessions/opening.py`) the user picked in `:AcpSessions`: while the agent
loads it, a prompt from no chat waits for it and goes to it once it is loaded (`asked.py`), or back to the
user."""

from __future__ import annotations

import anyio
import pytest

from acp_nvim.app.runs import AgentSpec
from acp_nvim.app.sessions.prompt_queue import NOT_OPENED, WAITING
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio

LOADING = s.AgentCapabilities(
    load_session=True, session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities())
)


async def _loading_held(app: App) -> tuple[FakeAgent, anyio.Event]:
    """The agent up (its session in use), a stored session "old-1" listed and picked; its load waits for the
    event returned."""
    agent = FakeAgent(capabilities=LOADING)
    await app.start("a", agent, cwd="/p")
    agent.listed = [s.SessionInfo(session_id="old-1", cwd="/stored")]
    app.port.answers.append("old-1")
    return agent, agent.held_until("load_session")


async def _sessions_command(app: App) -> None:
    await app.commands.sessions_command(AgentSpec(name="a", cmd="fake"), "open", False, None)


async def test_a_prompt_from_no_chat_while_a_stored_session_loads_waits_and_goes_to_it() -> None:
    app = App()
    agent, loaded = await _loading_held(app)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_sessions_command, app)
        await anyio.wait_all_tasks_blocked()
        # Its chat is open already (the replay lands there), the load on its way.
        assert "old-1" in app.port.chats
        await app.turns.prompt("first")
        await app.turns.prompt("second")
        assert agent.prompts == [] and app.port.texts() == [WAITING, WAITING]
        # A waiting prompt's @diff is taken in the stored session's folder.
        opening = app.runs.current().opening
        assert opening is not None and opening.cwd == "/stored"
        loaded.set()
    assert [call for call in agent.calls if call[0] == "prompt"] == [("prompt", "old-1")] * 2
    assert agent.prompts == ["first", "second"]
    assert app.runs.current().session is app.runs.sessions["old-1"] and app.runs.current().opening is None


async def test_a_prompt_waiting_for_a_stored_session_the_agent_cannot_load_is_given_back() -> None:
    app = App()
    agent, loaded = await _loading_held(app)
    agent.refuse["load_session"] = RpcError(-32603, "corrupt")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_sessions_command, app)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("kept")
        loaded.set()
    assert app.port.refused == [NOT_OPENED] and agent.prompts == []
    assert "old-1" in app.port.destroyed and "old-1" not in app.runs.sessions
    # Once it failed, a prompt goes to the session in use again.
    await app.turns.prompt("again")
    assert [call for call in agent.calls if call[0] == "prompt"] == [("prompt", "sess-1")]


async def test_a_prompt_from_the_chat_of_a_stored_session_still_loading_waits_for_the_load() -> None:
    app = App()
    agent, loaded = await _loading_held(app)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_sessions_command, app)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("mine", session_id="old-1")
        assert agent.prompts == [] and app.port.texts() == [WAITING]
        loaded.set()
    assert [call for call in agent.calls if call[0] in ("load_session", "prompt")] == [
        ("load_session", "old-1"),
        ("prompt", "old-1"),
    ]

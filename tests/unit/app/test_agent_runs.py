"""The agent-run loop (`app/agent_runs.py`) without Neovim or a process: its first session, the agent's exit,
a reconnect a login asks for, a stop, and each run's own task group (a failure in one run leaves the others
running; a stop ends the run's tasks).

Each connection is a scripted peer: a `FakeAgent` that answers the application's calls and closes when the
test says so; the port is `FakePort`, which sets an event on every status pushed so a test waits for a state
with a deadline, never a sleep.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from acp_nvim.app.agent_runs import AgentRuns
from acp_nvim.app.application import Application
from acp_nvim.app.runs import AgentRun, AgentSpec, ChatSession, Runs
from acp_nvim.app.views import Status
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.process import AgentCommand
from acp_nvim.client.editor import Editor
from acp_nvim.protocol import schema as s
from tests.unit.app.fakes import FakeAgent, FakePort

pytestmark = pytest.mark.anyio
DEADLINE = 5


class PeerAgent(FakeAgent):
    """One connection of a scripted peer: it answers until `exit` (its reason) and records that the run
    left its connection (the process would be stopped there)."""

    def __init__(self, number: int) -> None:
        super().__init__(session_prefix=f"conn{number}")
        self.agent_info = s.Implementation(name="peer", version=str(number))
        self._exited = anyio.Event()
        self._reason = ""
        self.released = anyio.Event()

    def exit(self, reason: str) -> None:
        self._reason = reason
        self._exited.set()

    async def wait_closed(self) -> str:
        await self._exited.wait()
        return self._reason


class Peer:
    """What `AgentRuns` connects to: a new `PeerAgent` for each connection it opens."""

    def __init__(self) -> None:
        self.connections: list[PeerAgent] = []
        self.commands: list[AgentCommand] = []
        self._connected = anyio.Event()

    @asynccontextmanager
    async def connect(
        self, command: AgentCommand, editor: Editor, **_hooks: Any
    ) -> AsyncIterator[AgentConnection]:
        agent = PeerAgent(len(self.connections) + 1)
        self.commands.append(command)
        self.connections.append(agent)
        self._connected.set()
        self._connected = anyio.Event()
        try:
            yield agent  # type: ignore[misc]
        finally:
            agent.released.set()

    async def wait_connections(self, count: int) -> None:
        with anyio.fail_after(DEADLINE):
            while len(self.connections) < count:
                await self._connected.wait()


class Port(FakePort):
    def __init__(self) -> None:
        super().__init__()
        self._pushed = anyio.Event()

    def show_status(self, status: Status) -> None:
        super().show_status(status)
        self._pushed.set()
        self._pushed = anyio.Event()

    async def wait_status(self, check: Callable[[Status], bool]) -> Status:
        with anyio.fail_after(DEADLINE):
            while not (self.statuses and check(self.statuses[-1])):
                await self._pushed.wait()
        return self.statuses[-1]


class Host:
    """The `RunHost` of the tests: no Neovim editor is needed by the scripted peer."""

    leaving = False

    def editor(self, advertise: Callable[[s.ClientCapabilities], s.ClientCapabilities]) -> Editor:
        return None  # type: ignore[return-value]

    async def registry_spec(self, spec: AgentSpec) -> AgentSpec:
        return spec


class LateRunner:
    """The application's runner, handed over once the runs are built on the application."""

    runs: AgentRuns

    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        return self.runs.launch(spec, reopen)

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        await self.runs.stop_run(run, notice)


class Loop:
    def __init__(self, root: TaskGroup) -> None:
        self.port = Port()
        self.peer = Peer()
        self.host = Host()
        runner = LateRunner()
        self.app = Application(Runs(), self.port, runner)
        self.runs = runner.runs = AgentRuns(self.app, self.host, root.start_soon, self.peer.connect)

    def launch(self, name: str, **spec: Any) -> AgentRun:
        return self.runs.launch(AgentSpec(name=name, cmd=sys.executable, **spec))

    async def ready(self, name: str) -> Status:
        return await self.port.wait_status(lambda st: st.agent_name == name and st.state == "ready")


def notices(session: ChatSession) -> list[str]:
    return [item.text for item in session.state.items if hasattr(item, "level")]


async def in_loop(test: Callable[[Loop], Awaitable[None]]) -> None:
    async with anyio.create_task_group() as root:
        await test(Loop(root))
        root.cancel_scope.cancel()


async def test_a_run_connects_and_opens_its_first_session() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a")
        status = await loop.ready("a")
        assert status.session_id == "conn1-1"
        assert run.connection is loop.peer.connections[0] and run.info is not None
        assert loop.peer.commands[0].command == sys.executable
        assert loop.app.runs.current().session is not None
        assert run.tasks is not None  # the run's own group, while it runs
        await loop.runs.stop_run(run)

    await in_loop(test)


async def test_a_run_without_a_first_session_is_ready_at_once() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a", session=False)
        status = await loop.ready("a")
        assert status.session_id is None
        assert loop.peer.connections[0].calls == []
        await loop.runs.stop_run(run)

    await in_loop(test)


async def test_the_agent_exiting_fails_the_run_and_each_chat_says_it() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a")
        await loop.ready("a")
        session = loop.app.runs.current().session
        assert session is not None
        loop.peer.connections[0].exit("agent python exited with code 3")
        status = await loop.port.wait_status(lambda st: st.state == "error")
        assert status.error == "a stopped: agent python exited with code 3"
        with anyio.fail_after(DEADLINE):
            await run.lifecycle.wait_done()
        assert "a stopped: agent python exited with code 3 — :AcpRestart starts it again" in notices(session)
        assert run.connection is None and run.tasks is None
        assert run.ended == [session]  # :AcpRestart reopens it

    await in_loop(test)


async def test_a_reconnect_opens_a_new_connection_and_ends_the_old_ones_chats() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a")
        await loop.ready("a")
        session = loop.app.runs.current().session
        assert session is not None
        attempt = run.lifecycle.ask_reconnect()
        await loop.peer.wait_connections(2)
        with anyio.fail_after(DEADLINE):
            await attempt.wait()
            await loop.peer.connections[0].released.wait()
        assert run.connection is loop.peer.connections[1]
        assert "The agent restarted after logging in." in notices(session)
        assert run.ended == []  # not remembered for :AcpRestart: the reconnect reopens them itself
        assert not run.lifecycle.done
        await loop.runs.stop_run(run)

    await in_loop(test)


async def test_a_stop_ends_the_connection_and_the_runs_tasks() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a")
        await loop.ready("a")
        session = loop.app.runs.current().session
        assert session is not None and run.tasks is not None
        ended = anyio.Event()

        async def background() -> None:
            try:
                await anyio.sleep_forever()
            finally:
                ended.set()

        run.tasks.start_soon(background)
        with anyio.fail_after(DEADLINE):
            await loop.runs.stop_run(run, "a was stopped")
            await ended.wait()
        assert loop.peer.connections[0].released.is_set()
        assert run.lifecycle.done and run.tasks is None
        assert "a was stopped" in notices(session)
        assert loop.port.statuses[-1].state == "stopped"

    await in_loop(test)


async def test_a_failing_task_ends_its_run_and_no_other() -> None:
    async def test(loop: Loop) -> None:
        first, second = loop.launch("a"), loop.launch("b")
        await loop.peer.wait_connections(2)
        await loop.ready("b")
        assert first.tasks is not None

        async def broken() -> None:
            raise RuntimeError("boom")

        first.tasks.start_soon(broken)
        with anyio.fail_after(DEADLINE):
            await first.lifecycle.wait_done()
        assert first.lifecycle.error == "a: unexpected error: boom"
        assert first.connection is None
        # The other run and the root group go on: b still answers on its connection.
        assert not second.lifecycle.done and second.connection is loop.peer.connections[1]
        assert not loop.peer.connections[1].released.is_set()
        assert second.tasks is not None
        await loop.runs.shutdown()
        assert second.lifecycle.done

    await in_loop(test)


async def test_quitting_neovim_ends_a_run_without_an_error() -> None:
    async def test(loop: Loop) -> None:
        run = loop.launch("a")
        await loop.ready("a")
        loop.host.leaving = True
        loop.peer.connections[0].exit("agent python was killed by SIGTERM")
        with anyio.fail_after(DEADLINE):
            await run.lifecycle.wait_done()
        assert run.lifecycle.error is None and run.lifecycle.stop_notice == "Neovim is quitting"

    await in_loop(test)

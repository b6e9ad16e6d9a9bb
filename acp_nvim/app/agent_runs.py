"""The life of each agent's run: its process served, its first session, its reconnect after a login, its stop.

A run is started in the host's root task group and owns a task group of its own for as long as it lives
(`AgentRun.tasks`): what it starts there (its first session, the sessions reopened after a login, the
connection's own tasks) ends with it, and a failure in one run ends that run alone. What the loop needs of the
host around it (the editor the agent's requests run on, the ACP Registry's command for a registry agent,
whether Neovim is quitting) is `RunHost`; everything else it reaches through the application.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

import anyio

from acp_nvim.app import agent_log
from acp_nvim.app.application import Application
from acp_nvim.app.client_capabilities import advertise
from acp_nvim.app.lifecycle import Lifecycle
from acp_nvim.app.port import ERROR, WARN, Spawn
from acp_nvim.app.runs import AgentRun, AgentSpec, ChatSession
from acp_nvim.client.agent import command as agent_command
from acp_nvim.client.agent.connection import AgentConnection, TrafficLinesHook
from acp_nvim.client.agent.diagnostics import TroubleSink
from acp_nvim.client.agent.process import AgentCommand, AgentNotFound, StartError
from acp_nvim.client.editor import Editor
from acp_nvim.jsonrpc import ConnectionClosed
from acp_nvim.protocol import schema as s

# The logger the run loop had in nvim/controller.py: its lines in acp_nvim.log read as they did.
log = logging.getLogger("acp_nvim.controller")


class Connect(Protocol):
    """How a run reaches its agent: `AgentConnection.launch` (the unit tests connect in memory)."""

    def __call__(
        self,
        command: AgentCommand,
        editor: Editor,
        *,
        handshake_timeout: float,
        on_messages: TrafficLinesHook | None,
        on_trouble: TroubleSink | None,
    ) -> AbstractAsyncContextManager[AgentConnection]: ...


class RunHost(Protocol):
    """What a run needs of the host that composes the application."""

    @property
    def leaving(self) -> bool:
        """Neovim is quitting: an agent ending now was ended on purpose."""

    def editor(self, advertise: Callable[[s.ClientCapabilities], s.ClientCapabilities]) -> Editor:
        """The editor an agent's requests run on; `advertise` adds what the application offers this agent."""

    async def registry_spec(self, spec: AgentSpec) -> AgentSpec:
        """An ACP Registry agent's spec with the command it runs (read from the registry, installed)."""


class AgentRuns:
    """Starts and stops the agents' runs (the application's `AgentRunner`)."""

    def __init__(
        self, app: Application, host: RunHost, spawn: Spawn, connect: Connect = AgentConnection.launch
    ) -> None:
        self._app = app
        self._host = host
        self._spawn = spawn
        self._connect = connect

    # ---- launch --------------------------------------------------------------------------------------

    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        runs = self._app.runs
        run = AgentRun(spec, reopen)
        runs.agents[spec.name] = run
        runs.use_agent(spec.name)
        if runs.current().session is not None:
            # The new agent's status shows until its first session opens.
            runs.clear_current()
        self._app.status.push()
        self._spawn(lambda: self._guarded(run))
        return run

    async def _guarded(self, run: AgentRun) -> None:
        try:
            with run.lifecycle.scope:
                await self._run(run)
        finally:
            run.lifecycle.finish()

    async def _run(self, run: AgentRun) -> None:
        spec = run.spec
        status, chats = self._app.status, self._app.chats
        try:
            try:
                async with anyio.create_task_group() as tasks:
                    run.tasks = tasks
                    await self._serve(run)
                    tasks.cancel_scope.cancel()
            except BaseExceptionGroup as group:
                # The one real error, so a missing command is told from a handshake timeout.
                raise _sole_error(group) from None
        except AgentNotFound as err:
            hint = f" — install: {spec.install_hint}" if spec.install_hint else ""
            status.fail(run, f"{spec.name}: {err}{hint}")
        except StartError as err:
            status.fail(run, f"{spec.name}: {err}")
        except ConnectionClosed as err:
            status.fail(run, f"{spec.name} stopped: {err}")
        except Exception as err:
            log.exception("agent run failed")
            status.fail(run, f"{spec.name}: unexpected error: {err}")
        finally:
            # Sessions still open here: a stop (its notice), or a failure reported just above.
            if run.lifecycle.stop_asked:
                chats.end_all(run, run.lifecycle.stop_notice)
            else:
                chats.end_all(run, run.lifecycle.error, "error")
            run.connection = None
            run.tasks = None

    # ---- serve ---------------------------------------------------------------------------------------

    async def _serve(self, run: AgentRun) -> None:
        """The agent's connection until it exits; again after each reconnect a login asked for. The first
        session opens in a task of the run's own: a login on the way may need this loop to reconnect."""
        if run.spec.registry is not None:
            # An ACP Registry agent: its command is known once the registry is read (and a binary installed).
            run.spec = await self._host.registry_spec(run.spec)
        spec = run.spec
        command = await agent_command.resolve(
            AgentCommand(command=spec.cmd, args=spec.args, env=spec.env, cwd=spec.cwd or None),
            spec.fallbacks,
            spec.older_args,
        )
        # Advertised to this agent only: another one may be configured without terminal login.
        runs = self._app.runs
        editor = self._host.editor(
            lambda caps: advertise(
                caps, spec.terminal_auth, spec.subagents or spec.name in runs.offered_subagents
            )
        )
        status, chats = self._app.status, self._app.chats
        first_session = spec.session
        lifecycle = run.lifecycle
        assert run.tasks is not None
        while True:
            async with self._connect(
                command,
                editor,
                handshake_timeout=spec.handshake_timeout,
                on_messages=agent_log.record_hook(spec.name),
                # Aggregated: one message per kind of trouble, never one per bad line.
                on_trouble=lambda message: self._app.port.notify(message, WARN),
            ) as agent:
                run.connection, run.info = agent, agent.agent_info
                if agent.unstable_session.subagents:
                    runs.offered_subagents.add(spec.name)
                lifecycle.connected(open_first_session=first_session)
                status.push()
                if first_session:
                    first_session = False
                    run.tasks.start_soon(self._first_session, run)
                elif run.reopen:
                    run.tasks.start_soon(self._reopen_after_login, run, run.take_reopen())
                reason = await _closed_or_reconnect(agent, lifecycle)
                if reason is not None and self._host.leaving:
                    log.info("%s ended: Neovim is quitting (%s)", spec.name, reason)
                    lifecycle.stopping("Neovim is quitting")
                    run.connection = None
                    return
                if reason is not None:
                    message = f"{spec.name} stopped: {reason}"
                    # Each chat says it too: the notification goes by, the chat stays.
                    chats.end_all(run, message + " — :AcpRestart starts it again", "error")
                    run.connection = None
                    status.fail(run, message)
                    return
                # They belonged to the old process: opened again on the new one once it is up.
                run.reopen = chats.end_all(run, "The agent restarted after logging in.", remember=False)
                run.connection = None
                lifecycle.reconnecting()
                status.push()

    async def _first_session(self, run: AgentRun) -> None:
        session: ChatSession | None = None
        try:
            if run.reopen:
                session = await self._app.sessions.reopen(run, run.take_reopen())
            else:
                session = await self._app.sessions.new(run, first=True)
        except Exception as err:
            log.exception("first session failed")
            self._app.port.notify(f"{run.name}: unexpected error: {err}", ERROR)
        run.lifecycle.first_session_done(ready=session is not None and run.connection is not None)
        self._app.status.push()
        if session is not None:
            self._app.turns.preload()

    async def _reopen_after_login(self, run: AgentRun, sessions: list[ChatSession]) -> None:
        try:
            await self._app.sessions.reopen(run, sessions, fallback_new=False)
        except Exception as err:
            log.exception("reopening the sessions after a login failed")
            self._app.port.notify(f"{run.name}: unexpected error: {err}", ERROR)

    # ---- stop ----------------------------------------------------------------------------------------

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        lifecycle = run.lifecycle
        if not lifecycle.done:
            lifecycle.stopping(notice)
            lifecycle.scope.cancel()
            await lifecycle.wait_done()
        lifecycle.stopped()
        runs = self._app.runs
        if runs.current_id is None:
            last = runs.last_used()
            if last is not None:
                self._app.status.use(last)

    async def shutdown(self) -> None:
        with anyio.move_on_after(5):
            for run in list(self._app.runs.agents.values()):
                await self.stop_run(run)


async def _closed_or_reconnect(agent: AgentConnection, lifecycle: Lifecycle) -> str | None:
    """Waits until the agent exits (its reason) or a reconnect is asked for (None)."""
    reason: list[str] = []
    async with anyio.create_task_group() as race:

        async def closed() -> None:
            reason.append(await agent.wait_closed())
            race.cancel_scope.cancel()

        async def asked() -> None:
            await lifecycle.wait_reconnect_asked()
            race.cancel_scope.cancel()

        race.start_soon(closed)
        race.start_soon(asked)
    return reason[0] if reason else None


def _sole_error(group: BaseExceptionGroup[BaseException]) -> BaseException:
    errors = group.exceptions
    while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
        errors = errors[0].exceptions
    return errors[0] if len(errors) == 1 else group

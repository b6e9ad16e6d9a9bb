"""The :Acp* commands: what each decides, for the session (or agent) it is for.

Starting and stopping processes is the runner's (`AgentRunner`, the controller in `acp_nvim/nvim/`); every
other decision — which session, whether to launch, what to say — is made here.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

import msgspec

from acp_nvim.app.auth import AuthFlow
from acp_nvim.app.chat.chats import Chats
from acp_nvim.app.memory import release_memory
from acp_nvim.app.port import INFO, WARN, NeovimPort
from acp_nvim.app.runs import NO_AGENT_RUNNING, AgentRun, AgentSpec, ChatSession, Runs
from acp_nvim.app.sessions.asked import open_asked
from acp_nvim.app.sessions.extras import ACTIONS, Action
from acp_nvim.app.sessions.modes import ModeCommands
from acp_nvim.app.sessions.opening import SessionCommands
from acp_nvim.app.sessions.turns import Turns
from acp_nvim.app.status import StatusBoard
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.jsonrpc import ConnectionClosed, RpcError

log = logging.getLogger("acp_nvim.commands")


class AgentRunner(Protocol):
    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        """Registers a new run of the agent and starts its process."""

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        """Stops the run (when it runs); its chats say `notice`."""


class Commands:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        status: StatusBoard,
        runner: AgentRunner,
        *,
        chats: Chats,
        auth: AuthFlow,
        modes: ModeCommands,
        sessions: SessionCommands,
        turns: Turns,
    ) -> None:
        self._runs = runs
        self._port = port
        self._status = status
        self._runner = runner
        self._chats = chats
        self._auth = auth
        self._modes = modes
        self._sessions = sessions
        self._turns = turns

    # ---- agents ------------------------------------------------------------------------------------

    async def start(self, spec: AgentSpec) -> None:
        """Starts the agent, or opens another session on it when it already runs."""
        run = self._runs.agents.get(spec.name)
        if run is not None and run.alive:
            # What its process was started with stays: its command, and the login it was offered.
            old = run.spec
            run.spec = msgspec.structs.replace(
                spec, cmd=old.cmd, args=old.args, env=old.env, terminal_auth=old.terminal_auth
            )
            self._runs.use_agent(spec.name)
            if spec.session:
                await self._new_session(run)
            return
        self._runner.launch(spec)

    async def _new_session(self, run: AgentRun) -> None:
        """Another session on the running agent: one the user asked for (`sessions/asked.py`)."""

        async def opening() -> ChatSession | None:
            await run.lifecycle.wait_connected()
            return await self._sessions.new(run) if run.connection is not None else None

        cwd = run.spec.cwd or os.getcwd()
        await open_asked(
            self._runs, self._turns, run.name, cwd, opening, directories=self._sessions.planned(run)
        )

    async def restart(self, spec: AgentSpec) -> None:
        """Stops the agent (when it runs) and starts it again. The sessions that were open when it stopped or
        died are reopened when it can load or resume them (`SessionCommands.reopen`), else it opens a new
        one."""
        run = self._runs.agents.get(spec.name)
        reopen: list[ChatSession] = []
        if run is not None:
            await self._runner.stop_run(run)
            reopen = run.ended
        self._runner.launch(spec, reopen)

    async def stop(self, session_id: str | None = None) -> None:
        """Stops the current agent (the one of the chat the cursor is in)."""
        run = self._runs.current(session_id).run
        if run is not None:
            await self._runner.stop_run(run, f"{run.display_name} was stopped: this session ended")
        self._status.push()

    # ---- sessions ----------------------------------------------------------------------------------

    async def sessions_command(
        self, spec: AgentSpec, action: str, everywhere: bool, session_id: str | None
    ) -> None:
        """:AcpSessions: on the agent of the target chat, else `spec`'s (started without a session when it is
        not running)."""
        session = self._runs.current(session_id).session
        run = self._runs.agents.get(session.agent) if session is not None else None
        if run is None:
            run = self._runs.agents.get(spec.name)
            if run is None or not run.alive:
                run = self._runner.launch(msgspec.structs.replace(spec, session=False))
        await run.lifecycle.wait_connected()
        if run.connection is None:
            return
        await self._sessions.command(run, _session_action(action), everywhere)

    async def close_session(self, session_id: str) -> None:
        """The chat was closed (its buffer wiped or deleted): session/close when the agent supports it."""
        await self._close_session(session_id)
        # Once the session's last reference here is gone: a long chat's memory goes back to the system.
        release_memory()

    async def _close_session(self, session_id: str) -> None:
        session = self._runs.sessions.get(session_id)
        if session is None:
            # A chat whose agent had stopped or died: it is not to be reopened by :AcpRestart any more.
            for other in self._runs.agents.values():
                other.forget_ended(session_id)
            return
        if session.in_turn:
            await self._turns.cancel(session_id)
        self._port.cancel_permissions(session_id)
        self._chats.forget(session_id)
        self._status.push()
        agent = self._runs.connection_of(session)
        if agent is None:
            return
        try:
            await agent.close_session(session_id)
        except Unsupported:
            log.info("%s cannot close sessions: %s forgotten locally", agent.display_name, session_id)
        except (RpcError, ConnectionClosed) as err:
            log.warning("session/close %s failed: %s", session_id, err)

    async def focus(self, session_id: str) -> None:
        if session_id in self._runs.sessions and session_id != self._runs.current_id:
            self._status.use(session_id)

    async def add_dir(self, session_id: str | None, directory: str) -> None:
        """:AcpAddDir: the one list of added directories is `SessionCommands.extra_directories`."""
        path = os.path.abspath(os.path.expanduser(directory))
        if not os.path.isdir(path):
            self._port.notify(f"not a directory: {path}", WARN)
            return
        extra = self._sessions.extra_directories
        if path not in extra:
            extra.append(path)
        current = self._runs.current(session_id)
        agent = current.connection
        caps = agent.capabilities.session_capabilities if agent is not None else None
        if agent is not None and (caps is None or caps.additional_directories is None):
            name = current.run.display_name if current.run is not None else agent.display_name
            self._port.notify(f"{name} does not support additional directories: {path} is not sent", WARN)
            return
        self._port.notify(f"{path} is added to the sessions opened from now on", INFO)

    # ---- modes, options, login -----------------------------------------------------------------------

    def _session(self, session_id: str | None) -> ChatSession | None:
        """The session a command is for; says why when there is none."""
        current = self._runs.current(session_id)
        if current.session is None:
            self._port.notify(current.missing or "", WARN)
        return current.session

    def _running(self, session_id: str | None) -> AgentRun | None:
        """The agent a command is for, when it is running; says why when there is none."""
        run = self._runs.current(session_id).run
        if run is None or run.connection is None:
            self._port.notify(NO_AGENT_RUNNING, WARN)
            return None
        return run

    async def mode(self, session_id: str | None, mode_id: str | None) -> None:
        session = self._session(session_id)
        if session is not None:
            await self._modes.mode(session, mode_id or None)

    async def config(self, session_id: str | None, option_id: str | None, value: str | None) -> None:
        session = self._session(session_id)
        if session is not None:
            await self._modes.config(session, option_id or None, value)

    async def auth(self, session_id: str | None, method_id: str | None) -> None:
        run = self._running(session_id)
        if run is None:
            return
        first_failed = run.lifecycle.phase.shown == "error" and not self._runs.sessions_of(run)
        if await self._auth.login(run, method_id or None) and first_failed and run.connection is not None:
            # The start failed for want of a login: now it can open its session.
            run.lifecycle.opening()
            self._status.push()
            try:
                await self._sessions.new(run, first=True)
            finally:
                run.lifecycle.first_session_done(ready=run.connection is not None)
                self._status.push()

    async def logout(self, session_id: str | None) -> None:
        run = self._running(session_id)
        if run is not None:
            await self._auth.logout(run)


def _session_action(word: str) -> Action:
    for action in ACTIONS:
        if action == word:
            return action
    return "open"

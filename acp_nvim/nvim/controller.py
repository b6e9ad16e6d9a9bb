"""The running agents and their sessions as the user drives them: start, stop, prompt turns, cancel, status.

Agents are keyed by their configured name (several may run at once), sessions by their id (several per agent,
one chat each). Commands act on the *current* session: the chat the cursor is in (Lua sends its id), else the
one used last. Opening and listing sessions live in `sessions.py`, authentication in `auth.py`, modes and
configuration options in `modes.py`; this module owns the registry, the agents' lifetimes and the routing of
what the agents send.

Everything here runs on the anyio thread. Neovim is reached only through the `Bridge`; `status()` lives in Lua
and is pushed on every change, so no Neovim call ever waits for this side.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc
import msgspec

from acp_nvim.client.agent import AgentCommand, AgentConnection, AgentNotFound, StartError, Unsupported
from acp_nvim.client.agent_edits import AgentEdits
from acp_nvim.client.editor import unknown_session
from acp_nvim.client.session import NoticeLevel, SessionState
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.nvim import agent_log
from acp_nvim.nvim.auth import AuthFlow
from acp_nvim.nvim.bridge import ERROR, INFO, WARN, Bridge
from acp_nvim.nvim.editor import NvimEditor
from acp_nvim.nvim.lua_api import AgentIdentity, ChatInfo, LuaApi, Status, Usage, UsageCost
from acp_nvim.nvim.modes import ModeCommands
from acp_nvim.nvim.permission import PermissionBroker
from acp_nvim.nvim.render import ChatRenderer
from acp_nvim.nvim.sessions import McpServerConfig, SessionCommands
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s

if TYPE_CHECKING:
    from acp_nvim.nvim.prompt import Selection

log = logging.getLogger("acp_nvim.controller")

State = Literal["stopped", "starting", "ready", "running", "awaiting_permission", "error"]
AgentState = Literal["stopped", "starting", "ready", "error"]
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]

# Updates for a session whose session/new answer is still on its way (at most this many are kept).
EARLY_UPDATES_MAX = 1000

# Update kinds that change what status() reports.
STATUS_UPDATES = (
    s.SessionUpdateCurrentModeUpdate,
    s.SessionUpdateConfigOptionUpdate,
    s.SessionUpdateSessionInfoUpdate,
    s.SessionUpdateUsageUpdate,
)


class AgentSpec(msgspec.Struct, kw_only=True):
    """An agent as configured in Lua (`opts.agents[name]` after presets and validation), plus the options
    of the sessions it opens."""

    name: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str = ""
    install_hint: str = ""
    handshake_timeout: float = 30.0
    # Defaults applied to every new session: a mode id, and config option id -> value.
    mode: str | None = None
    config: dict[str, str | bool] = {}
    mcp_servers: list[McpServerConfig] = []
    additional_directories: list[str] = []
    prefer_resume: bool = False
    # Advertise `auth.terminal`: terminal login methods are then offered.
    terminal_auth: bool = True
    # Open a session as soon as the agent is up (false: :AcpSessions starts an agent only to list).
    session: bool = True


class AgentRun(msgspec.Struct):
    """One configured agent: its process while it runs, and how it ended after."""

    spec: AgentSpec
    state: AgentState = "starting"
    error: str | None = None
    connection: AgentConnection | None = None
    info: s.Implementation | None = None
    scope: anyio.CancelScope = msgspec.field(default_factory=anyio.CancelScope)
    done: anyio.Event = msgspec.field(default_factory=anyio.Event)
    # Set when a connection attempt ended (check `connection`); replaced before each reconnect.
    connected: anyio.Event = msgspec.field(default_factory=anyio.Event)
    reconnect: anyio.Event = msgspec.field(default_factory=anyio.Event)
    # The first session is being opened (possibly through a login and reconnect): state stays "starting".
    first_pending: bool = False
    # Stopped on purpose (:AcpStop, :AcpRestart), and what its chats then say.
    stopping: bool = False
    end_notice: str | None = None
    # The sessions open when the run ended (stopped or dead), oldest first: :AcpRestart reopens them.
    ended: list[ChatSession] = msgspec.field(default_factory=list)
    # Sessions to reopen instead of opening a new one (a restart).
    reopen: list[ChatSession] = msgspec.field(default_factory=list)

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def alive(self) -> bool:
        return self.state in ("starting", "ready") or self.connection is not None

    @property
    def display_name(self) -> str:
        info = self.info
        # Without agentInfo the configured name says more than the executable's ("node", "uvx").
        return (info.title or info.name) if info is not None else self.spec.name


class ChatSession(msgspec.Struct):
    session_id: str
    agent: str
    cwd: str
    directories: list[str]
    state: SessionState
    renderer: ChatRenderer
    in_turn: bool = False
    cancelling: bool = False
    permissions: int = 0
    selections: list[Selection] = msgspec.field(default_factory=list)


class Controller:
    def __init__(self, bridge: Bridge, spawn: Spawn) -> None:
        self.bridge = bridge
        self._spawn = spawn
        self.agents: dict[str, AgentRun] = {}
        self.sessions: dict[str, ChatSession] = {}
        self._current: str | None = None
        self._current_agent: str | None = None
        # Sessions by last use, most recent last: where "current" goes when a chat closes.
        self._recent: list[str] = []
        self._early: dict[str, list[s.SessionUpdate]] = {}
        self.opening = 0
        self.terminal_auth = True
        self.lua = LuaApi(bridge)
        self.ui = Ui(bridge.lua)
        self.broker = PermissionBroker(self.ui, self._permission_busy)
        self.auth = AuthFlow(self)
        self.session_commands = SessionCommands(self)
        self.modes = ModeCommands(self)
        self.editor = NvimEditor(self)
        self.agent_edits = AgentEdits(
            self.lua,
            self.session_roots,
            lambda: self.editor.options.max_buffer_bytes,
            lambda: self.editor.options.follow,
        )

    # ---- the current session and agent -------------------------------------------------------------

    @property
    def session(self) -> ChatSession | None:
        return self.sessions.get(self._current) if self._current is not None else None

    def current_run(self) -> AgentRun | None:
        session = self.session
        name = session.agent if session is not None else self._current_agent
        return self.agents.get(name) if name is not None else None

    def target(self, session_id: str | None) -> ChatSession | None:
        """The session a command is for: the chat the cursor is in (`session_id` from Lua), else the current
        one. Says why when there is none."""
        if session_id:
            session = self.sessions.get(session_id)
            if session is None:
                self.notify("this chat's session is closed: open a new one with :AcpNew", WARN)
            return session
        session = self.session
        if session is None:
            self.notify("no session: start an agent with :AcpStart", WARN)
        return session

    def session_for(self, session_id: str | None) -> ChatSession | None:
        """The session of the chat a command comes from (`session_id`), else the current one; silently."""
        return self.sessions.get(session_id) if session_id else self.session

    def run_for(self, session_id: str | None) -> AgentRun | None:
        """The agent of the chat a command comes from (`session_id`), else the current one; running or not."""
        session = self.session_for(session_id)
        return self.agents.get(session.agent) if session is not None else self.current_run()

    def target_run(self, session_id: str | None) -> AgentRun | None:
        """The agent a command is for (see `run_for`), when it is running. Says why when there is none."""
        run = self.run_for(session_id)
        if run is None or run.connection is None:
            self.notify("no agent is running: start one with :AcpStart", WARN)
            return None
        return run

    def use(self, session_id: str) -> None:
        self._current = session_id
        session = self.sessions.get(session_id)
        if session is not None:
            self._current_agent = session.agent
        with contextlib.suppress(ValueError):
            self._recent.remove(session_id)
        self._recent.append(session_id)
        self.push_status()

    def _forget(self, session_id: str) -> None:
        """The session ended (closed, failed to open, its agent gone): what belonged to it ends too."""
        self.sessions.pop(session_id, None)
        self.agent_edits.forget(session_id)
        # Its terminals, not the ones of other sessions: another agent may still be using its own.
        self.editor.terminals.end_session(session_id)
        self.editor.guard.forget(session_id)
        with contextlib.suppress(ValueError):
            self._recent.remove(session_id)
        if self._current == session_id:
            self._current = self._recent[-1] if self._recent else None
            if self._current is not None:
                self._current_agent = self.sessions[self._current].agent

    # ---- status ------------------------------------------------------------------------------------

    def status(self) -> Status:
        session = self.session
        run = self.current_run()
        agent: AgentIdentity | None = None
        state: State = "stopped"
        if run is not None:
            agent = AgentIdentity(name=run.name)
            if run.info is not None:
                agent = AgentIdentity(name=run.info.name, title=run.info.title, version=run.info.version)
            state = run.state
            if state == "ready" and session is not None:
                if session.permissions:
                    state = "awaiting_permission"
                elif session.in_turn:
                    state = "running"
        connection = run.connection if run is not None else None
        return Status(
            agent=agent,
            agent_name=run.name if run is not None else None,
            state=state,
            session_id=session.session_id if session else None,
            mode=session.state.current_mode if session else None,
            model=_model(session.state) if session else None,
            title=session.state.title if session else None,
            usage=_usage(session.state) if session else None,
            sessions=len(self.sessions),
            auth_methods=[method.id for method in self.auth.methods(connection)] if connection else [],
            protocol_version=connection.protocol_version if connection else None,
            error=run.error if run is not None else None,
        )

    def push_status(self) -> None:
        self.lua.status_set(self.status())

    def notify(self, message: str, level: int = ERROR) -> None:
        self.lua.notify("acp.nvim: " + message, level)

    def _set_run_state(self, run: AgentRun, state: AgentState, error: str | None = None) -> None:
        run.state, run.error = state, error
        self.push_status()

    def fail(self, run: AgentRun, message: str) -> None:
        log.warning("%s", message)
        # The message first: whoever reacts to the status change finds it already shown.
        self.notify(message)
        self._set_run_state(run, "error", message)

    def advertise(self, caps: s.ClientCapabilities) -> s.ClientCapabilities:
        """What the session layer adds to the editor's capabilities: boolean config options (always
        understood here) and terminal login when enabled."""
        session = caps.session or s.ClientSessionCapabilities()
        session = msgspec.structs.replace(
            session,
            config_options=s.SessionConfigOptionsCapabilities(boolean=s.BooleanConfigOptionCapabilities()),
        )
        auth = msgspec.structs.replace(caps.auth, terminal=self.terminal_auth)
        return msgspec.structs.replace(caps, session=session, auth=auth)

    # ---- agents ------------------------------------------------------------------------------------

    async def start(self, raw_spec: Any) -> None:
        """Starts the agent, or opens another session on it when it already runs."""
        spec = self._spec(raw_spec)
        if spec is None:
            return
        run = self.agents.get(spec.name)
        if run is not None and run.alive:
            run.spec = msgspec.structs.replace(spec, cmd=run.spec.cmd, args=run.spec.args, env=run.spec.env)
            self._current_agent = spec.name
            if spec.session:
                await self.wait_connected(run)
                if run.connection is not None:
                    await self.session_commands.new(run)
            return
        self._launch(spec)

    async def restart(self, raw_spec: Any) -> None:
        """Stops the agent (when it runs) and starts it again. The sessions that were open when it stopped or
        died are reopened when it can load or resume them (`SessionCommands.reopen`), else it opens a new
        one."""
        spec = self._spec(raw_spec)
        if spec is None:
            return
        run = self.agents.get(spec.name)
        reopen: list[ChatSession] = []
        if run is not None:
            await self._stop_run(run)
            reopen = run.ended
        self._launch(spec, reopen)

    def _spec(self, raw_spec: Any) -> AgentSpec | None:
        try:
            return msgspec.convert(raw_spec, AgentSpec)
        except msgspec.ValidationError as err:
            self.notify(f"invalid agent configuration: {err}")
            return None

    def _launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> None:
        run = AgentRun(spec, reopen=list(reopen or []))
        self.agents[spec.name] = run
        self._current_agent = spec.name
        self.terminal_auth = spec.terminal_auth
        if self.session is not None:
            # The new agent's status shows until its first session opens.
            self._current = None
        self.push_status()

        async def guarded() -> None:
            try:
                with run.scope:
                    await self._run(run)
            finally:
                run.done.set()

        self._spawn(guarded)

    async def wait_connected(self, run: AgentRun) -> None:
        await run.connected.wait()

    async def reconnect(self, run: AgentRun) -> bool:
        """Restarts the agent's process and initializes again (after a terminal login). Its open sessions
        end: they belonged to the old process."""
        run.connected = anyio.Event()
        connected = run.connected
        run.reconnect.set()
        await connected.wait()
        return run.connection is not None

    async def _run(self, run: AgentRun) -> None:
        spec = run.spec
        try:
            await self._serve(run)
        except AgentNotFound as err:
            hint = f" — install: {spec.install_hint}" if spec.install_hint else ""
            self.fail(run, f"{spec.name}: {err}{hint}")
        except StartError as err:
            self.fail(run, f"{spec.name}: {err}")
        except ConnectionClosed as err:
            self.fail(run, f"{spec.name} stopped: {err}")
        except Exception as err:
            log.exception("agent run failed")
            self.fail(run, f"{spec.name}: unexpected error: {err}")
        finally:
            # Sessions still open here: a stop (its notice), or a failure reported just above.
            if run.stopping:
                self._end_sessions(run, run.end_notice)
            else:
                self._end_sessions(run, run.error, "error")
            run.connection = None
            run.connected.set()

    async def _serve(self, run: AgentRun) -> None:
        """The agent's connection until it exits; again after each reconnect a login asked for. The first
        session opens in a task of its own: a login on the way may need this loop to reconnect."""
        spec = run.spec
        command = AgentCommand(command=spec.cmd, args=spec.args, env=spec.env, cwd=spec.cwd or None)
        first_session = spec.session
        try:
            async with anyio.create_task_group() as tasks:
                while True:
                    async with AgentConnection.launch(
                        command,
                        self.editor,
                        handshake_timeout=spec.handshake_timeout,
                        on_message=agent_log.record_hook(spec.name),
                        # Aggregated: one message per kind of trouble, never one per bad line.
                        on_trouble=lambda message: self.notify(message, WARN),
                    ) as agent:
                        run.connection, run.info = agent, agent.agent_info
                        run.reconnect = anyio.Event()
                        run.connected.set()
                        if first_session:
                            first_session, run.first_pending = False, True
                            tasks.start_soon(self._first_session, run)
                        else:
                            if not run.first_pending:
                                self._set_run_state(run, "ready")
                            if run.reopen:
                                reopen, run.reopen = run.reopen, []
                                tasks.start_soon(self._reopen_after_login, run, reopen)
                        reason = await _closed_or_reconnect(agent, run.reconnect)
                        if reason is not None:
                            message = f"{spec.name} stopped: {reason}"
                            # Each chat says it too: the notification goes by, the chat stays.
                            self._end_sessions(run, message + " — :AcpRestart starts it again", "error")
                            run.connection = None
                            self.fail(run, message)
                            break
                        # They belonged to the old process: opened again on the new one once it is up.
                        run.reopen = self._end_sessions(
                            run, "The agent restarted after logging in.", remember=False
                        )
                        run.connection = None
                        self._set_run_state(run, "starting")
                tasks.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The one real error, so `_run` can tell a missing command from a handshake timeout.
            errors = group.exceptions
            while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
                errors = errors[0].exceptions
            if len(errors) == 1:
                raise errors[0] from None
            raise

    async def _first_session(self, run: AgentRun) -> None:
        try:
            if run.reopen:
                reopen, run.reopen = run.reopen, []
                session = await self.session_commands.reopen(run, reopen)
            else:
                session = await self.session_commands.new(run, first=True)
        except Exception as err:
            log.exception("first session failed")
            session = None
            self.notify(f"{run.name}: unexpected error: {err}")
        run.first_pending = False
        if run.connection is not None and run.state == "starting" and session is not None:
            self._set_run_state(run, "ready")

    async def _reopen_after_login(self, run: AgentRun, sessions: list[ChatSession]) -> None:
        try:
            await self.session_commands.reopen(run, sessions, fallback_new=False)
        except Exception as err:
            log.exception("reopening the sessions after a login failed")
            self.notify(f"{run.name}: unexpected error: {err}")

    def session_failed(self, run: AgentRun, message: str, first: bool) -> None:
        """Opening a session failed: the first one of a start puts the agent in "error" (it stays up, so
        :AcpAuth or :AcpNew can follow); later ones are only reported."""
        if first and run.state == "starting":
            self.fail(run, message)
        else:
            self.notify(message)

    def _end_sessions(
        self,
        run: AgentRun,
        notice: str | None = None,
        level: NoticeLevel = "warning",
        *,
        remember: bool = True,
    ) -> list[ChatSession]:
        """Whatever ends the agent: no permission request stays open, unfinished tool calls are marked, each
        chat says why (`notice`), its terminals are killed, nothing is left unrendered. The sessions are kept
        in `run.ended` (unless `remember` is false) for :AcpRestart to reopen; returns them."""
        ended = [session for session in self.sessions.values() if session.agent == run.name]
        for session in ended:
            self.broker.cancel_session(session.session_id)
            session.state.cancel_unfinished()
            if notice:
                session.state.add_notice(notice, level)
            session.renderer.flush()
            session.in_turn = session.cancelling = False
            self._forget(session.session_id)
            if remember:
                run.ended.append(session)
        self.push_status()
        return ended

    async def stop(self, session_id: str | None = None) -> None:
        """Stops the current agent (the one of the chat the cursor is in)."""
        run = self.run_for(session_id)
        if run is not None:
            await self._stop_run(run, f"{run.display_name} was stopped: this session ended")
        self.push_status()

    async def _stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        if not run.done.is_set():
            run.stopping, run.end_notice = True, notice
            run.scope.cancel()
            await run.done.wait()
        run.state, run.error = "stopped", None
        if self._current is None and self._recent:
            self.use(self._recent[-1])

    async def shutdown(self) -> None:
        with anyio.move_on_after(5):
            for run in list(self.agents.values()):
                await self._stop_run(run)

    # ---- sessions ----------------------------------------------------------------------------------

    def open_chat(
        self,
        run: AgentRun,
        session_id: str,
        cwd: str,
        directories: list[str],
        title: str | None = None,
        *,
        clear_chat: bool = False,
    ) -> ChatSession:
        """Registers a session and creates its chat; before session/load is sent, so the replay lands here.
        `clear_chat`: the session's chat, if it still has one (a reload after a restart), is emptied and
        reused instead."""
        state = SessionState(session_id)
        if title:
            state.apply(s.SessionUpdateSessionInfoUpdate(title=title))
        renderer = ChatRenderer(self.bridge, state, run.display_name, self._spawn)
        session = ChatSession(session_id, run.name, cwd, directories, state, renderer)
        self.sessions[session_id] = session
        info = ChatInfo(agent=run.name, display_name=run.display_name, cwd=cwd)
        if clear_chat:
            self.lua.chat_reset(session_id, info)
        else:
            self.lua.chat_create(session_id, info)
        for update in self._early.pop(session_id, []):
            state.apply(update)
        renderer.flush()
        self.use(session_id)
        return session

    def reattach(self, run: AgentRun, session: ChatSession) -> None:
        """Registers again a session that ended with its agent, chat and transcript as they are (a resume
        after a restart): new items continue its transcript."""
        session.agent = run.name
        session.in_turn = session.cancelling = False
        session.permissions = 0
        self.sessions[session.session_id] = session
        for update in self._early.pop(session.session_id, []):
            session.state.apply(update)
        session.renderer.flush()
        self.use(session.session_id)

    def drop_session(self, session_id: str, *, destroy_chat: bool) -> None:
        """A session that failed to open (or closed): forgotten, its chat removed when asked."""
        self._forget(session_id)
        if destroy_chat:
            self.lua.chat_destroy(session_id)
        self.push_status()

    async def close_session(self, session_id: str) -> None:
        """The chat was closed (its buffer wiped or deleted): session/close when the agent supports it."""
        session = self.sessions.get(session_id)
        if session is None:
            # A chat whose agent had stopped or died: it is not to be reopened by :AcpRestart any more.
            for other in self.agents.values():
                other.ended = [ended for ended in other.ended if ended.session_id != session_id]
                other.reopen = [ended for ended in other.reopen if ended.session_id != session_id]
            return
        if session.in_turn:
            await self.cancel(session_id)
        self.broker.cancel_session(session_id)
        self._forget(session_id)
        self.push_status()
        run = self.agents.get(session.agent)
        agent = run.connection if run is not None else None
        if agent is None:
            return
        try:
            await agent.close_session(session_id)
        except Unsupported:
            log.info("%s cannot close sessions: %s forgotten locally", agent.display_name, session_id)
        except (RpcError, ConnectionClosed) as err:
            log.warning("session/close %s failed: %s", session_id, err)

    def session_roots(self, session_id: str) -> list[str] | None:
        """The roots of a session — its cwd and the additional directories sent for it — or None for a
        session this controller does not run. NvimEditor's sandbox asks on every fs/terminal request."""
        session = self.sessions.get(session_id)
        if session is None:
            return None
        return [session.cwd, *session.directories]

    # ---- commands ----------------------------------------------------------------------------------

    async def sessions_command(
        self, raw_spec: Any, action: str, everywhere: bool, session_id: str | None
    ) -> None:
        """:AcpSessions: on the agent of the target chat, else the agent `raw_spec` names (started without a
        session when it is not running)."""
        session = self.session_for(session_id)
        run = self.agents.get(session.agent) if session is not None else None
        if run is None:
            spec = self._spec(raw_spec)
            if spec is None:
                return
            run = self.agents.get(spec.name)
            if run is None or not run.alive:
                self._launch(msgspec.structs.replace(spec, session=False))
                run = self.agents[spec.name]
        await self.wait_connected(run)
        if run.connection is None:
            return
        await self.session_commands.command(run, "delete" if action == "delete" else "open", everywhere)

    async def mode_command(self, session_id: str | None, mode_id: str | None) -> None:
        session = self.target(session_id)
        if session is not None:
            await self.modes.mode(session, mode_id or None)

    async def config_command(self, session_id: str | None, option_id: str | None, value: str | None) -> None:
        session = self.target(session_id)
        if session is not None:
            await self.modes.config(session, option_id or None, value)

    async def auth_command(self, session_id: str | None, method_id: str | None) -> None:
        run = self.target_run(session_id)
        if run is None:
            return
        first_failed = run.state == "error" and not any(
            session.agent == run.name for session in self.sessions.values()
        )
        if await self.auth.login(run, method_id or None) and first_failed and run.connection is not None:
            # The start failed for want of a login: now it can open its session.
            self._set_run_state(run, "starting")
            run.first_pending = True
            try:
                await self.session_commands.new(run, first=True)
            finally:
                run.first_pending = False
            if run.state == "starting" and run.connection is not None:
                self._set_run_state(run, "ready")

    async def logout_command(self, session_id: str | None) -> None:
        run = self.target_run(session_id)
        if run is not None:
            await self.auth.logout(run)

    async def add_dir_command(self, session_id: str | None, directory: str) -> None:
        path = os.path.abspath(os.path.expanduser(directory))
        if not os.path.isdir(path):
            self.notify(f"not a directory: {path}", WARN)
            return
        extra = self.session_commands.extra_directories
        if path not in extra:
            extra.append(path)
        run = self.run_for(session_id)
        agent = run.connection if run is not None else None
        caps = agent.capabilities.session_capabilities if agent is not None else None
        if agent is not None and (caps is None or caps.additional_directories is None):
            name = run.display_name if run is not None else agent.display_name
            self.notify(f"{name} does not support additional directories: {path} is not sent", WARN)
            return
        self.notify(f"{path} is added to the sessions opened from now on", INFO)

    async def focus_command(self, session_id: str) -> None:
        if session_id in self.sessions and session_id != self._current:
            self.use(session_id)

    # ---- turns -------------------------------------------------------------------------------------

    async def prompt(self, text: str, raw_selections: Any = None, session_id: str | None = None) -> None:
        try:
            await self._prompt(text, raw_selections, session_id)
        finally:
            # Lua showed "running" optimistically; a refused prompt must put the real state back.
            self.push_status()

    async def _prompt(self, text: str, raw_selections: Any, session_id: str | None) -> None:
        session = self.target(session_id)
        run = self.agents.get(session.agent) if session is not None else None
        agent = run.connection if run is not None else None
        if agent is None or session is None:
            if session is not None:
                self.notify("no agent is running: start one with :AcpStart", WARN)
            return
        if session.in_turn:
            self.notify("the agent is still working: wait, or :AcpCancel", WARN)
            return
        from acp_nvim.nvim.prompt import build_prompt  # a prompt's needs (mimetypes, base64) wait for one

        built = build_prompt(text, raw_selections, agent, self.lua.prompt_refused)
        if built is None:
            return
        blocks = built.blocks
        state = session.state
        state.begin_turn()
        state.add_user_prompt(built.shown)
        # Within a frame, in the same Lua call as the agent's first updates: a call of its own would cost
        # Neovim one more RPC per turn.
        session.renderer.changed()
        session.in_turn, session.cancelling = True, False
        # Pushes the status too: only now, so "running" (which Lua showed already) is what it says.
        self.use(session.session_id)
        stop_reason: str | None = None
        try:
            await self.agent_edits.turn_started(session.session_id)
            result = await agent.prompt(session.session_id, blocks)
            stop_reason = result.stop_reason
        except ConnectionClosed:
            # The agent died: the run task reports it, once.
            pass
        except Unsupported as err:
            state.add_notice(str(err), "error")
            self.notify(str(err))
        except RpcError as err:
            state.add_notice(f"Error: {err.message}", "error")
        finally:
            session.in_turn = False
            self.agent_edits.turn_ended(session.session_id)
            if session.cancelling and stop_reason in (None, "end_turn"):
                # The user cancelled: an agent that wraps up with end_turn still ended a cancelled turn.
                stop_reason = "cancelled"
            if stop_reason is not None:
                state.end_turn(stop_reason)
            session.renderer.flush()

    async def cancel(self, session_id: str | None = None) -> None:
        session = self.session_for(session_id)
        if session is None or not session.in_turn:
            return
        run = self.agents.get(session.agent)
        session.cancelling = True
        self.broker.cancel_session(session.session_id)
        session.state.cancel_unfinished()
        session.renderer.flush()
        if run is not None and run.connection is not None:
            with contextlib.suppress(ConnectionClosed):
                await run.connection.cancel(session.session_id)

    # ---- from the agents ---------------------------------------------------------------------------

    def on_session_update(self, notification: s.SessionNotification) -> None:
        session = self.sessions.get(notification.session_id)
        if session is None:
            if self.opening:
                # Read before the session/new answer reached us: kept for the chat about to open.
                early = self._early.setdefault(notification.session_id, [])
                if len(early) < EARLY_UPDATES_MAX:
                    early.append(notification.update)
            else:
                log.debug("update for unknown session %s dropped", notification.session_id)
            return
        session.state.apply(notification.update)
        self.agent_edits.on_update(session.session_id, notification.update)
        session.renderer.changed()
        if isinstance(notification.update, STATUS_UPDATES) and session.session_id == self._current:
            self.push_status()

    async def ask_permission(self, request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        session = self.sessions.get(request.session_id)
        if session is None:
            # A session this controller does not run (never opened, or closed since): the agent's mistake,
            # answered as every client method answers it, not hidden behind `cancelled`.
            raise unknown_session(request.session_id)
        if session.cancelling:
            return s.RequestPermissionOutcomeCancelled()
        state = session.state
        item = state.set_awaiting_permission(request.tool_call, True)
        # The chat shows the tool call (and its diff) before the picker opens.
        session.renderer.flush()
        view = {
            "session_id": session.session_id,
            "item_id": item.key,
            "title": item.title,
            "kind": item.kind,
            "options": [
                {"id": option.option_id, "name": option.name, "kind": option.kind}
                for option in request.options
            ],
        }
        session.permissions += 1
        self.push_status()
        try:
            outcome = await self.broker.ask(request, view)
        finally:
            session.permissions -= 1
            if self.sessions.get(session.session_id) is session:
                item.awaiting_permission = False
                state.update_tool_call(s.ToolCallUpdate(tool_call_id=item.tool_call_id))
                session.renderer.changed()
            self.push_status()
        return outcome

    def _permission_busy(self, busy: bool) -> None:
        self.push_status()


async def _closed_or_reconnect(agent: AgentConnection, reconnect: anyio.Event) -> str | None:
    """Waits until the agent exits (its reason) or a reconnect is asked for (None)."""
    reason: list[str] = []
    async with anyio.create_task_group() as race:

        async def closed() -> None:
            reason.append(await agent.wait_closed())
            race.cancel_scope.cancel()

        async def asked() -> None:
            await reconnect.wait()
            race.cancel_scope.cancel()

        race.start_soon(closed)
        race.start_soon(asked)
    return reason[0] if reason else None


def _model(state: SessionState) -> str | None:
    """The current model: the select option of category "model" (or id "model")."""
    for option in state.config_options:
        if isinstance(option, s.SessionConfigOptionSelect) and (
            option.category == "model" or option.id == "model"
        ):
            return option.current_value
    return None


def _usage(state: SessionState) -> Usage | None:
    usage = state.usage
    if usage is None:
        return None
    cost = (
        UsageCost(amount=usage.cost_amount, currency=usage.cost_currency)
        if usage.cost_amount is not None
        else None
    )
    return Usage(used=usage.used, size=usage.size, cost=cost)

"""The composition of the application (`acp_nvim/app/`) with Neovim, and the life of each agent's process.

The application decides (which session a command is for, what the status says, what each command does);
this module starts and serves the agents' processes, stops them, and routes what they send to the
application. Neovim is reached only through the `Bridge`: `status()` lives in Lua and is pushed on every
change, so no Neovim call ever waits for this side. Everything here runs on the anyio thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import anyio

from acp_nvim.app import agent_log
from acp_nvim.app.application import Application
from acp_nvim.app.capabilities import advertise
from acp_nvim.app.editor.permission import PermissionBroker
from acp_nvim.app.editor.services import AgentEditor, EditorServices
from acp_nvim.app.lifecycle import Lifecycle
from acp_nvim.app.port import ERROR, WARN
from acp_nvim.app.registry import AgentRun, AgentSpec, ChatSession, Registry
from acp_nvim.client import command as agent_command
from acp_nvim.client.agent import AgentConnection
from acp_nvim.client.agent_edits import AgentEdits
from acp_nvim.client.process import AgentCommand, AgentNotFound, StartError
from acp_nvim.jsonrpc import ConnectionClosed
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.editor import NvimEditorPort
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.port import CatalogPort, NvimPort
from acp_nvim.nvim.ui import Ui

if TYPE_CHECKING:
    from acp_nvim.app.catalog import Catalog
    from acp_nvim.app.registry_agents import RegistryAgents

log = logging.getLogger("acp_nvim.controller")

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]


class Controller:
    def __init__(self, bridge: Bridge, spawn: Spawn) -> None:
        self._spawn = spawn
        self.registry = Registry()
        self.lua = LuaApi(bridge)
        self.ui = Ui(bridge.lua)
        self.editor_port = NvimEditorPort(self.lua, self.ui)
        self.broker = PermissionBroker(self.editor_port, lambda busy: self.app.status.push())
        self.services = EditorServices(self.editor_port, self.registry.roots, self.registry.agent_info)
        self.port = NvimPort(bridge, spawn, self.ui, self.broker, self.services.session_ended)
        # The agent's own edits on disk, followed into buffers and the review (client/agent_edits.py).
        self.agent_edits = AgentEdits(
            self.lua,
            self.registry.roots,
            lambda: self.services.options.max_buffer_bytes,
            lambda: self.services.options.follow,
        )
        self.app = Application(self.registry, self.port, self, self.agent_edits)
        self.status, self.chats, self.sessions = self.app.status, self.app.chats, self.app.sessions
        # Neovim is quitting (set from pynvim's thread): an agent ending now was ended on purpose.
        self.leaving = False
        self._registry_parts: tuple[Catalog, RegistryAgents] | None = None

    def _registry(self) -> tuple[Catalog, RegistryAgents]:
        """The ACP Registry's list and agents (app/catalog.py, app/registry_agents.py), built when first
        used: their modules (urllib, ssl, tarfile, zipfile: ~30 ms) stay out of the host's start."""
        if self._registry_parts is None:
            from acp_nvim.app.catalog import Catalog
            from acp_nvim.app.registry_agents import RegistryAgents

            port = CatalogPort(self.port, self.lua)
            catalog = Catalog(port, self._spawn)
            self._registry_parts = (catalog, RegistryAgents(catalog, port))
        return self._registry_parts

    @property
    def catalog(self) -> Catalog:
        return self._registry()[0]

    @property
    def registry_agents(self) -> RegistryAgents:
        return self._registry()[1]

    def notify(self, message: str, level: int = ERROR) -> None:
        self.port.notify(message, level)

    # ---- launch --------------------------------------------------------------------------------------

    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        run = AgentRun(spec, reopen)
        self.registry.agents[spec.name] = run
        self.registry.use_agent(spec.name)
        if self.registry.current().session is not None:
            # The new agent's status shows until its first session opens.
            self.registry.clear_current()
        self.status.push()

        async def guarded() -> None:
            try:
                with run.lifecycle.scope:
                    await self._run(run)
            finally:
                run.lifecycle.finish()

        self._spawn(guarded)
        return run

    async def _run(self, run: AgentRun) -> None:
        spec = run.spec
        try:
            await self._serve(run)
        except AgentNotFound as err:
            hint = f" — install: {spec.install_hint}" if spec.install_hint else ""
            self.status.fail(run, f"{spec.name}: {err}{hint}")
        except StartError as err:
            self.status.fail(run, f"{spec.name}: {err}")
        except ConnectionClosed as err:
            self.status.fail(run, f"{spec.name} stopped: {err}")
        except Exception as err:
            log.exception("agent run failed")
            self.status.fail(run, f"{spec.name}: unexpected error: {err}")
        finally:
            # Sessions still open here: a stop (its notice), or a failure reported just above.
            if run.lifecycle.stop_asked:
                self.chats.end_all(run, run.lifecycle.stop_notice)
            else:
                self.chats.end_all(run, run.lifecycle.error, "error")
            run.connection = None

    # ---- serve ---------------------------------------------------------------------------------------

    async def _serve(self, run: AgentRun) -> None:
        """The agent's connection until it exits; again after each reconnect a login asked for. The first
        session opens in a task of its own: a login on the way may need this loop to reconnect."""
        if run.spec.registry is not None:
            # An ACP Registry agent: its command is known once the registry is read (and a binary installed).
            run.spec = await self.registry_agents.resolve(run.spec)
        spec = run.spec
        command = await agent_command.resolve(
            AgentCommand(command=spec.cmd, args=spec.args, env=spec.env, cwd=spec.cwd or None),
            spec.fallbacks,
            spec.older_args,
        )
        # Advertised to this agent only: another one may be configured without terminal login.
        # What the agent sends about a session goes straight to the application (`app/incoming.py`): the
        # stream's bulk passes through no extra call.
        editor = AgentEditor(
            self.services, self.app.incoming, lambda caps: advertise(caps, spec.terminal_auth)
        )
        first_session = spec.session
        lifecycle = run.lifecycle
        try:
            async with anyio.create_task_group() as tasks:
                while True:
                    async with AgentConnection.launch(
                        command,
                        editor,
                        handshake_timeout=spec.handshake_timeout,
                        on_messages=agent_log.record_hook(spec.name),
                        # Aggregated: one message per kind of trouble, never one per bad line.
                        on_trouble=lambda message: self.notify(message, WARN),
                    ) as agent:
                        run.connection, run.info = agent, agent.agent_info
                        lifecycle.connected(open_first_session=first_session)
                        self.status.push()
                        if first_session:
                            first_session = False
                            tasks.start_soon(self._first_session, run)
                        elif run.reopen:
                            tasks.start_soon(self._reopen_after_login, run, run.take_reopen())
                        reason = await _closed_or_reconnect(agent, lifecycle)
                        if reason is not None and self.leaving:
                            log.info("%s ended: Neovim is quitting (%s)", spec.name, reason)
                            lifecycle.stopping("Neovim is quitting")
                            run.connection = None
                            break
                        if reason is not None:
                            message = f"{spec.name} stopped: {reason}"
                            # Each chat says it too: the notification goes by, the chat stays.
                            self.chats.end_all(run, message + " — :AcpRestart starts it again", "error")
                            run.connection = None
                            self.status.fail(run, message)
                            break
                        # They belonged to the old process: opened again on the new one once it is up.
                        run.reopen = self.chats.end_all(
                            run, "The agent restarted after logging in.", remember=False
                        )
                        run.connection = None
                        lifecycle.reconnecting()
                        self.status.push()
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
        session: ChatSession | None = None
        try:
            if run.reopen:
                session = await self.sessions.reopen(run, run.take_reopen())
            else:
                session = await self.sessions.new(run, first=True)
        except Exception as err:
            log.exception("first session failed")
            self.notify(f"{run.name}: unexpected error: {err}")
        run.lifecycle.first_session_done(ready=session is not None and run.connection is not None)
        self.status.push()
        if session is not None:
            self.app.turns.preload()

    async def _reopen_after_login(self, run: AgentRun, sessions: list[ChatSession]) -> None:
        try:
            await self.sessions.reopen(run, sessions, fallback_new=False)
        except Exception as err:
            log.exception("reopening the sessions after a login failed")
            self.notify(f"{run.name}: unexpected error: {err}")

    # ---- stop ----------------------------------------------------------------------------------------

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        lifecycle = run.lifecycle
        if not lifecycle.done:
            lifecycle.stopping(notice)
            lifecycle.scope.cancel()
            await lifecycle.wait_done()
        lifecycle.stopped()
        if self.registry.current_id is None:
            last = self.registry.last_used()
            if last is not None:
                self.status.use(last)

    async def shutdown(self) -> None:
        with anyio.move_on_after(5):
            for run in list(self.registry.agents.values()):
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

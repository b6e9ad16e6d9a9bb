"""The running agent as the user drives it: start, session, prompt turns, cancel, stop, and the status.

Everything here runs on the anyio thread. Neovim is reached only through the `Bridge`; `status()` lives in Lua
and is pushed on every change, so no Neovim call ever waits for this side.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import msgspec

from acp_nvim.client.agent import AgentCommand, AgentConnection, AgentNotFound, StartError, Unsupported
from acp_nvim.client.session import SessionState
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.editor import NvimEditor
from acp_nvim.nvim.permission import PermissionBroker
from acp_nvim.nvim.prompt import Selection, prompt_blocks, shown_prompt
from acp_nvim.nvim.render import ChatRenderer
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.controller")

State = Literal["stopped", "starting", "ready", "running", "awaiting_permission", "error"]
Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]

ERROR, WARN, INFO = 4, 3, 2
SESSION_TIMEOUT = 60.0


class AgentSpec(msgspec.Struct, kw_only=True):
    """An agent as configured in Lua (`opts.agents[name]` after presets and validation)."""

    name: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str = ""
    install_hint: str = ""
    handshake_timeout: float = 30.0


@dataclass
class ChatSession:
    session_id: str
    state: SessionState
    renderer: ChatRenderer
    in_turn: bool = False
    cancelling: bool = False
    selections: list[Selection] = field(default_factory=list)


class Controller:
    def __init__(self, bridge: Bridge, spawn: Spawn) -> None:
        self._bridge = bridge
        self._spawn = spawn
        self.editor = NvimEditor(self)
        self.broker = PermissionBroker(bridge.lua, self._permission_busy)
        self.agent: AgentConnection | None = None
        self.session: ChatSession | None = None
        self.spec: AgentSpec | None = None
        self._state: State = "stopped"
        self._error: str | None = None
        self._run_scope: anyio.CancelScope | None = None
        self._run_done: anyio.Event | None = None
        # Kept after the agent stops: the statusline still says which agent it was.
        self._agent_info: s.Implementation | None = None

    # ---- status ----------------------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        agent: dict[str, Any] | None = None
        if self.spec is not None:
            agent = {"name": self.spec.name}
            info = self._agent_info
            if info is not None:
                agent = {"name": info.name, "title": info.title, "version": info.version}
        return {
            "agent": agent,
            "state": self._state,
            "session_id": self.session.session_id if self.session else None,
            "mode": self.session.state.current_mode if self.session else None,
            "protocol_version": self.agent.protocol_version if self.agent else None,
            "error": self._error,
        }

    def _set_state(self, state: State, error: str | None = None) -> None:
        self._state = state
        self._error = error
        self.push_status()

    def push_status(self) -> None:
        self._bridge.lua("require('acp_nvim.status').set(...)", self.status())

    def notify(self, message: str, level: int = ERROR) -> None:
        self._bridge.lua("vim.notify(...)", "acp.nvim: " + message, level, {"title": "acp.nvim"})

    def _fail(self, message: str) -> None:
        log.warning("%s", message)
        # The message first: whoever reacts to the status change finds it already shown.
        self.notify(message)
        self._set_state("error", message)

    # ---- lifecycle -------------------------------------------------------------------------------

    async def start(self, raw_spec: Any) -> None:
        try:
            spec = msgspec.convert(raw_spec, AgentSpec)
        except msgspec.ValidationError as err:
            self._fail(f"invalid agent configuration: {err}")
            return
        await self.stop(quiet=True)
        self.spec = spec
        self._agent_info = None
        self._set_state("starting")
        done = anyio.Event()
        scope = anyio.CancelScope()
        self._run_done, self._run_scope = done, scope

        async def run() -> None:
            try:
                with scope:
                    await self._run(spec)
            finally:
                done.set()

        self._spawn(run)

    async def _run(self, spec: AgentSpec) -> None:
        command = AgentCommand(command=spec.cmd, args=spec.args, env=spec.env, cwd=spec.cwd or None)
        try:
            async with AgentConnection.launch(
                command, self.editor, handshake_timeout=spec.handshake_timeout
            ) as agent:
                self.agent = agent
                self._agent_info = agent.agent_info
                self.push_status()
                with anyio.fail_after(SESSION_TIMEOUT):
                    response = await agent.new_session(spec.cwd or os.getcwd())
                self._open_session(spec, agent, response)
                self._set_state("ready")
                reason = await agent.wait_closed()
                self._end_session()
                self._fail(f"{spec.name} stopped: {reason}")
        except AgentNotFound as err:
            hint = f" — install: {spec.install_hint}" if spec.install_hint else ""
            self._fail(f"{spec.name}: {err}{hint}")
        except StartError as err:
            self._fail(f"{spec.name}: {err}")
        except TimeoutError:
            self._fail(f"{spec.name} did not create a session within {SESSION_TIMEOUT:g} s")
        except ConnectionClosed as err:
            self._fail(f"{spec.name} stopped: {err}")
        except RpcError as err:
            self._fail(f"{spec.name} refused to create a session: {err.message}")
        except Exception as err:
            log.exception("agent run failed")
            self._fail(f"{spec.name}: unexpected error: {err}")
        finally:
            self._end_session()
            self.agent = None

    def _open_session(self, spec: AgentSpec, agent: AgentConnection, response: s.NewSessionResponse) -> None:
        state = SessionState(response.session_id)
        state.set_modes(response.modes)
        state.set_config_options(response.config_options)
        info = agent.agent_info
        # Without agentInfo the configured name says more than the executable's ("node", "uvx").
        display_name = (info.title or info.name) if info is not None else spec.name
        renderer = ChatRenderer(self._bridge, state, display_name, self._spawn)
        self.session = ChatSession(response.session_id, state, renderer)
        self._bridge.lua(
            "require('acp_nvim.chat').create(...)",
            response.session_id,
            {"agent": spec.name, "display_name": display_name, "cwd": spec.cwd},
        )
        renderer.flush()

    def _end_session(self) -> None:
        # Whatever ends the agent, no permission request stays open and nothing is left unrendered.
        self.broker.cancel_all()
        if self.session is not None:
            self.session.state.cancel_unfinished()
            self.session.renderer.flush()
            self.session = None

    async def stop(self, *, quiet: bool = False) -> None:
        scope, done = self._run_scope, self._run_done
        self._run_scope = self._run_done = None
        if scope is not None and done is not None:
            self.broker.cancel_all()
            scope.cancel()
            await done.wait()
        if not quiet or scope is not None:
            self._set_state("stopped")

    async def shutdown(self) -> None:
        with anyio.move_on_after(5):
            await self.stop(quiet=True)

    # ---- turns -----------------------------------------------------------------------------------

    async def prompt(self, text: str, raw_selections: Any = None) -> None:
        try:
            await self._prompt(text, raw_selections)
        finally:
            # Lua showed "running" optimistically; a refused prompt must put the real state back.
            self.push_status()

    async def _prompt(self, text: str, raw_selections: Any) -> None:
        agent, session = self.agent, self.session
        if agent is None or session is None:
            self.notify("no agent is running: start one with :AcpStart", WARN)
            return
        if session.in_turn:
            self.notify("the agent is still working: wait, or :AcpCancel", WARN)
            return
        try:
            selections = msgspec.convert(raw_selections or [], list[Selection])
        except msgspec.ValidationError as err:
            self.notify(f"invalid selection: {err}")
            return
        caps = agent.capabilities.prompt_capabilities or s.PromptCapabilities()
        blocks = prompt_blocks(text, selections, bool(caps.embedded_context))
        if not blocks:
            return
        state = session.state
        state.begin_turn()
        state.add_user_prompt(shown_prompt(text, selections))
        session.renderer.flush()
        session.in_turn, session.cancelling = True, False
        self._set_state("running")
        stop_reason: str | None = None
        agent_gone = False
        try:
            result = await agent.prompt(session.session_id, blocks)
            stop_reason = result.stop_reason
        except ConnectionClosed:
            # The agent died: the run task reports it, once.
            agent_gone = True
        except Unsupported as err:
            state.add_notice(str(err), "error")
            self.notify(str(err))
        except RpcError as err:
            state.add_notice(f"Error: {err.message}", "error")
        finally:
            session.in_turn = False
            if session.cancelling and stop_reason in (None, "end_turn"):
                # The user cancelled: an agent that wraps up with end_turn still ended a cancelled turn.
                stop_reason = "cancelled"
            if stop_reason is not None:
                state.end_turn(stop_reason)
            session.renderer.flush()
            if self.session is session and not agent_gone:
                self._set_state("ready")

    async def cancel(self) -> None:
        agent, session = self.agent, self.session
        if agent is None or session is None or not session.in_turn:
            return
        session.cancelling = True
        self.broker.cancel_all()
        session.state.cancel_unfinished()
        session.renderer.flush()
        with contextlib.suppress(ConnectionClosed):
            await agent.cancel(session.session_id)

    # ---- from the agent --------------------------------------------------------------------------

    def on_session_update(self, notification: s.SessionNotification) -> None:
        session = self.session
        if session is None or notification.session_id != session.session_id:
            log.debug("update for unknown session %s dropped", notification.session_id)
            return
        mode = session.state.current_mode
        session.state.apply(notification.update)
        session.renderer.changed()
        if session.state.current_mode != mode:
            self.push_status()

    async def ask_permission(self, request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        session = self.session
        if session is None or request.session_id != session.session_id or session.cancelling:
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
        try:
            outcome = await self.broker.ask(request, view)
        finally:
            if self.session is session:
                item.awaiting_permission = False
                state.update_tool_call(s.ToolCallUpdate(tool_call_id=item.tool_call_id))
                session.renderer.changed()
        return outcome

    def answer_permission(self, request_id: int, option_id: str | None) -> None:
        self.broker.answer(request_id, option_id)

    def _permission_busy(self, busy: bool) -> None:
        session = self.session
        if busy:
            self._set_state("awaiting_permission")
        elif session is not None and self._state == "awaiting_permission":
            self._set_state("running" if session.in_turn else "ready")

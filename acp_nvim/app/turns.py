"""Prompt turns: sending what the user typed (with its attachments) and cancelling a turn."""

from __future__ import annotations

import contextlib
from typing import Any

from acp_nvim.app.edits import EditFollower
from acp_nvim.app.port import ERROR, WARN, NeovimPort
from acp_nvim.app.registry import NO_AGENT, Registry
from acp_nvim.app.status import StatusBoard
from acp_nvim.app.status_facts import BUSY
from acp_nvim.client import failure
from acp_nvim.client.agent_capabilities import Unsupported
from acp_nvim.jsonrpc import ConnectionClosed, RpcError


class Turns:
    def __init__(
        self, registry: Registry, port: NeovimPort, status: StatusBoard, edits: EditFollower
    ) -> None:
        self._registry = registry
        self._port = port
        self._status = status
        self._edits = edits

    async def prompt(self, text: str, raw_attachments: Any = None, session_id: str | None = None) -> None:
        try:
            await self._prompt(text, raw_attachments, session_id)
        finally:
            # Lua showed what status_facts.json declares before this answer: a refused prompt puts the real
            # state back.
            self._status.push()

    async def _prompt(self, text: str, raw_attachments: Any, session_id: str | None) -> None:
        current = self._registry.current(session_id)
        session = current.session
        if session is None:
            self._port.notify(current.missing or "", WARN)
            return
        run = self._registry.agents.get(session.agent)
        agent = run.connection if run is not None else None
        if agent is None:
            self._port.notify(NO_AGENT, WARN)
            return
        if session.in_turn:
            self._port.notify(BUSY, WARN)
            return
        # A prompt's needs (mimetypes, base64) are imported when there is one.
        from acp_nvim.app.prompt_content import build_prompt

        built = build_prompt(text, raw_attachments, agent, self._port.prompt_refused)
        if built is None:
            return
        state = session.state
        state.begin_turn()
        state.add_user_prompt(built.shown)
        # Within a frame, in the same Lua call as the agent's first updates: a call of its own would cost
        # Neovim one more RPC per turn.
        session.chat.changed()
        session.in_turn, session.cancelling = True, False
        # Pushes the status too: only now, so "running" (which Lua showed already) is what it says.
        self._status.use(session.session_id)
        stop_reason: str | None = None
        try:
            # The files loaded in buffers are watched before the agent can touch them.
            await self._edits.turn_started(session.session_id)
            result = await agent.prompt(session.session_id, built.blocks)
            stop_reason = result.stop_reason
        except ConnectionClosed:
            # The agent died: its run reports it, once.
            pass
        except Unsupported as err:
            state.add_notice(str(err), "error")
            self._port.notify(str(err), ERROR)
        except RpcError as err:
            state.add_notice(f"Error: {failure.describe(err)}", "error")
        finally:
            session.in_turn = False
            self._edits.turn_ended(session.session_id)
            if session.cancelling and stop_reason in (None, "end_turn"):
                # The user cancelled: an agent that wraps up with end_turn still ended a cancelled turn.
                stop_reason = "cancelled"
            if stop_reason is not None:
                state.end_turn(stop_reason)
            session.chat.flush()

    async def cancel(self, session_id: str | None = None) -> None:
        session = self._registry.current(session_id).session
        if session is None or not session.in_turn:
            return
        run = self._registry.agents.get(session.agent)
        session.cancelling = True
        self._port.cancel_permissions(session.session_id)
        session.state.cancel_unfinished()
        session.chat.flush()
        if run is not None and run.connection is not None:
            with contextlib.suppress(ConnectionClosed):
                await run.connection.cancel(session.session_id)

"""Prompt turns: sending what the user typed (with its attachments) and cancelling a turn."""

from __future__ import annotations

import contextlib

import anyio

from acp_nvim.app.checkpoints.service import Checkpoints
from acp_nvim.app.edits import EditFollower
from acp_nvim.app.port import ERROR, WARN, NeovimPort
from acp_nvim.app.runs import NO_AGENT_RUNNING, ChatSession, Runs
from acp_nvim.app.status import StatusBoard
from acp_nvim.app.status_facts import BUSY
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s

# How long a prompt waits for the call that shows it to leave for Neovim (a hop: ~0.3 ms) before it goes to
# the agent all the same.
SENT_WAIT_S = 0.05


class Turns:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        status: StatusBoard,
        edits: EditFollower,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self._runs = runs
        self._port = port
        self._status = status
        self._edits = edits
        self._checkpoints = checkpoints

    def preload(self) -> None:
        """What a prompt imports on its first use, imported now (an agent is ready, nothing waits): the user's
        first prompt is shown as fast as the next ones (~1 ms sooner)."""
        import acp_nvim.app.sessions.prompt_content  # noqa: F401

    async def prompt(self, text: str, raw_attachments: object = None, session_id: str | None = None) -> None:
        begun: tuple[ChatSession, AgentConnection, list[s.ContentBlock]] | None = None
        try:
            begun = self._begin(text, raw_attachments, session_id)
        finally:
            if begun is None:
                # Lua showed what status_facts.json declares before this answer: a refused prompt puts the
                # real state back.
                self._status.push()
        if begun is not None:
            await self._turn(*begun)

    def _begin(
        self, text: str, raw_attachments: object, session_id: str | None
    ) -> tuple[ChatSession, AgentConnection, list[s.ContentBlock]] | None:
        """The prompt shown and the turn begun, or None (refused, and the user told why)."""
        current = self._runs.current(session_id)
        session = current.session
        if session is None:
            self._port.notify(current.missing or "", WARN)
            return None
        run = self._runs.agents.get(session.agent)
        agent = run.connection if run is not None else None
        if agent is None:
            self._port.notify(NO_AGENT_RUNNING, WARN)
            return None
        if session.in_turn:
            self._port.notify(BUSY, WARN)
            return None
        # A prompt's needs (mimetypes, base64) are imported when there is one.
        from acp_nvim.app.sessions.prompt_content import build_prompt

        built = build_prompt(text, raw_attachments, agent, self._port.prompt_refused)
        if built is None:
            return None
        state = session.state
        state.begin_turn()
        state.add_user_prompt(built.shown)
        session.in_turn, session.cancelling = True, False
        # Pushes the status too: only now, so "running" (which Lua showed already) is what it says.
        self._status.use(session.session_id)
        # The files loaded in buffers are watched before the agent can touch them.
        self._edits.turn_started(session.session_id)
        # At once, not within a frame: the user sees the prompt as it is sent. The status and the watch, which
        # wait for company, go in this same call, before the prompt goes out.
        session.chat.flush()
        return session, agent, built.blocks

    async def _turn(self, session: ChatSession, agent: AgentConnection, blocks: list[s.ContentBlock]) -> None:
        state = session.state
        stop_reason: str | None = None
        try:
            # The prompt goes to the agent once the call that shows it (with the watch of the files) has left
            # for Neovim, a hop of ~0.3 ms: an agent that woke busy took the core pynvim's thread needed to
            # send it, and the prompt reached the chat 2-3 ms later (the watch after the agent could edit).
            with anyio.move_on_after(SENT_WAIT_S):
                await self._port.sent()
            if self._checkpoints is not None:
                # Complete before the agent has the prompt: nothing it does escapes the checkpoint.
                await self._checkpoints.take(session)
            if session.cancelling:
                # Cancelled in the meantime: the agent never gets it.
                return
            result = await agent.prompt(session.session_id, blocks)
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
            # Before the flush, so that the status, the end of the watch and the turn's last changes go in
            # one call.
            self._status.push()
            session.chat.flush()

    async def cancel(self, session_id: str | None = None) -> None:
        session = self._runs.current(session_id).session
        if session is None or not session.in_turn:
            return
        run = self._runs.agents.get(session.agent)
        session.cancelling = True
        self._port.cancel_permissions(session.session_id)
        session.state.cancel_unfinished()
        session.chat.flush()
        if run is not None and run.connection is not None:
            with contextlib.suppress(ConnectionClosed):
                await run.connection.cancel(session.session_id)

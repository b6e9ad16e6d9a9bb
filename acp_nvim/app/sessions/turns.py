"""Prompt turns: sending what the user typed (with its attachments) and cancelling a turn."""

from __future__ import annotations

import contextlib
from typing import NamedTuple, TypeAlias

import anyio

from acp_nvim.app import attention
from acp_nvim.app.checkpoints.service import Checkpoints
from acp_nvim.app.edits import EditFollower
from acp_nvim.app.port import ERROR, WARN, NeovimPort
from acp_nvim.app.runs import NO_AGENT_RUNNING, ChatSession, Opening, QueuedPrompt, Runs
from acp_nvim.app.sessions import subagents
from acp_nvim.app.sessions.prompt_queue import ACTIONS, AGENT_STARTING, PromptQueue
from acp_nvim.app.sessions.usage import usage_line
from acp_nvim.app.status import StatusBoard
from acp_nvim.app.status_facts import BUSY
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.steering import SteeringResponse
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s


class Built(NamedTuple):
    """A prompt as it goes (`prompt_content.py`'s `BuiltPrompt`, which is imported when a prompt comes)."""

    blocks: list[s.ContentBlock]
    shown: str


STEERED = "Sent into the running turn:"

#: A turn about to run: its session, its agent, the prompt's blocks.
Begun: TypeAlias = "tuple[ChatSession, AgentConnection, list[s.ContentBlock]]"

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
        self._queue = PromptQueue(port)
        self._in_order: anyio.Lock | None = None

    def preload(self) -> None:
        """What a prompt imports on its first use, imported now (an agent is ready, nothing waits): the user's
        first prompt is shown as fast as the next ones (~1 ms sooner)."""
        import acp_nvim.app.sessions.prompt_content  # noqa: F401

    async def prompt(self, text: str, raw_attachments: object = None, session_id: str | None = None) -> None:
        begun: Begun | None = None
        if self._in_order is None:
            self._in_order = anyio.Lock()
        try:
            # In the order sent: a prompt whose `@diff` git is still taking is not overtaken by the next one.
            async with self._in_order:
                raw_attachments = await self._with_diffs(raw_attachments, session_id)
                begun = self._begin(text, raw_attachments, session_id)
        finally:
            if begun is None:
                # Lua showed what status_facts.json declares before this answer: a refused (or queued) prompt
                # puts the real state back.
                self._status.push()
        await self.run(begun)

    async def _with_diffs(self, raw_attachments: object, session_id: str | None) -> object:
        """`@diff` taken now, in the session's folders (git runs here, off Neovim's loop, before the prompt is
        built or queued: a queued prompt sends the diff of when it was written)."""
        if not isinstance(raw_attachments, list) or not any(
            isinstance(item, dict) and item.get("kind") == "diff" for item in raw_attachments
        ):
            return raw_attachments
        from acp_nvim.app.sessions.git_diff import with_diffs

        current = self._runs.current(session_id)
        session, opening = current.session, current.opening
        if opening is not None:
            return await with_diffs(raw_attachments, [opening.cwd, *opening.directories])
        return await with_diffs(raw_attachments, self._runs.roots(session.session_id) if session else None)

    async def run(self, begun: Begun | None) -> None:
        """The turn begun, then each prompt queued meanwhile, in order, as long as turns end normally."""
        while begun is not None:
            session = begun[0]
            stop_reason = await self._turn(*begun)
            begun = self._next_queued(session, stop_reason)

    def _begin(self, text: str, raw_attachments: object, session_id: str | None) -> Begun | None:
        """The prompt shown and the turn begun, or None (refused, and the user told why, or queued)."""
        # A prompt's needs (mimetypes, base64) are imported when there is one.
        from acp_nvim.app.sessions.prompt_content import given_back

        current = self._runs.current(session_id)
        session = current.session
        if current.opening is not None:
            self._queue.wait(current.opening, text, given_back(raw_attachments))
            return None
        agent = self._runs.connection_of(session) if session is not None else None
        if session is None or agent is None:
            if current.run is not None and current.run.lifecycle.starting:
                # Lua lets a prompt through while its agent starts: the host knows whether it can wait.
                self._port.prompt_refused(AGENT_STARTING, text, given_back(raw_attachments))
            else:
                self._port.notify(NO_AGENT_RUNNING if session is not None else current.missing or "", WARN)
            return None
        built = self._build(text, raw_attachments, agent, session)
        if built is None:
            return None
        if session.in_turn:
            self._queue.add(session, text, given_back(raw_attachments), built.shown)
            self._queue.show(session, agent.steerable)
            return None
        return self._start(session, agent, built)

    def _build(
        self, text: str, raw_attachments: object, agent: AgentConnection, session: ChatSession
    ) -> Built | None:
        # A prompt's needs (mimetypes, base64) are imported when there is one.
        from acp_nvim.app.sessions.prompt_content import build_prompt

        roots = [session.cwd, *session.directories]
        built = build_prompt(text, raw_attachments, agent, self._port.prompt_refused, roots)
        return None if built is None else Built(built.blocks, built.shown)

    def _start(self, session: ChatSession, agent: AgentConnection, built: Built) -> Begun:
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

    def opened(self, opening: Opening, session: ChatSession | None) -> Begun | None:
        """The session `opening` asked for opened (`session`) or did not (None): the prompts that waited for
        it go first in its queue, the first one begun (`run` runs it), or back to the user."""
        if not opening.waiting:
            return None
        agent = self._runs.connection_of(session) if session is not None else None
        if session is None or agent is None:
            self._queue.give_back(opening)
            return None
        ready: list[QueuedPrompt] = []
        for queued in opening.waiting:
            # Checked and shown as any queued prompt, as it goes in this session (a refused one: given back).
            built = self._build(queued.text, queued.attachments, agent, session)
            if built is not None:
                queued.shown = built.shown
                ready.append(queued)
        session.queue[:0] = ready
        if session.in_turn or not ready:
            self._queue.show(session, agent.steerable)
            return None
        return self._start_queued(session, ready[0])

    def _next_queued(self, session: ChatSession, stop_reason: str | None) -> Begun | None:
        """The next queued prompt's turn begun when the turn before ended normally (not cancelled, not an
        error, not the agent gone): a cancel or an error keeps the queue held until the user says."""
        if stop_reason in (None, "cancelled") or not session.queue or session.in_turn:
            return None
        return self._start_queued(session, session.queue[0])

    def _start_queued(self, session: ChatSession, queued: QueuedPrompt) -> Begun | None:
        agent = self._runs.connection_of(session)
        if agent is None or self._runs.sessions.get(session.session_id) is not session:
            return None
        session.queue.remove(queued)
        built = self._build(queued.text, queued.attachments, agent, session)
        begun = self._start(session, agent, built) if built is not None else None
        self._queue.show(session, agent.steerable)
        return begun

    async def _turn(
        self, session: ChatSession, agent: AgentConnection, blocks: list[s.ContentBlock]
    ) -> str | None:
        """The turn run to its end; its stop reason (None: an error, or the agent gone)."""
        state = session.state
        stop_reason: str | None = None
        # The agent answered the prompt with an error: said (User AcpNvimError) once the chat shows it.
        failed: str | None = None
        try:
            # The prompt goes to the agent once the call that shows it (with the watch of the files) has left
            # for Neovim, a hop of ~0.3 ms: an agent that woke busy took the core pynvim's thread needed to
            # send it, and the prompt reached the chat 2-3 ms later (the watch after the agent could edit).
            with anyio.move_on_after(SENT_WAIT_S):
                await self._port.sent()
            if self._checkpoints is not None:
                # Its content fixed (every folder's tree written) before the agent has the prompt: nothing it
                # does escapes the checkpoint. Its commits and record follow while the prompt goes.
                await self._checkpoints.take(session)
            if session.cancelling:
                # Cancelled in the meantime: the agent never gets it.
                return "cancelled"
            result = await agent.prompt(session.session_id, blocks)
            stop_reason = result.stop_reason
            state.turn_usage = result.usage
        except ConnectionClosed:
            # The agent died: its run reports it, once.
            pass
        except Unsupported as err:
            state.add_notice(str(err), "error")
            self._port.notify(str(err), ERROR)
        except RpcError as err:
            state.add_notice(f"Error: {failure.describe(err)}", "error")
            failed = f"{session.agent}: {failure.describe(err)}"
        finally:
            session.in_turn = False
            self._edits.turn_ended(session.session_id)
            if session.cancelling and stop_reason in (None, "end_turn"):
                # The user cancelled: an agent that wraps up with end_turn still ended a cancelled turn.
                stop_reason = "cancelled"
            if stop_reason is not None:
                state.end_turn(stop_reason)
                line = usage_line(state.turn_usage, state.usage)
                if line is not None:
                    state.add_notice(line)
            # Before the flush, so that the status, the end of the watch and the turn's last changes go in
            # one call.
            self._status.push()
            session.chat.flush()
            if session.queue:
                self._queue.show(session, agent.steerable)
            if stop_reason is not None:
                self._port.attention(attention.turn_ended(session.agent, session.session_id, stop_reason))
            elif failed is not None:
                ids = [session.session_id]
                self._port.attention(attention.failed(session.agent, failed, ids, session.session_id))
        return stop_reason

    async def cancel(self, session_id: str | None = None, what: str | None = None) -> None:
        """`:AcpCancel`: the session's turn, and its subagents with it; `what` "subagent": one of its
        subagents alone."""
        current = self._runs.current(session_id)
        session = current.session
        agent = current.connection
        if what == "subagent":
            if session is not None:
                await subagents.cancel_one(session, self._port, agent)
            return
        if what is not None:
            self._port.notify(f"nothing to cancel named {what!r}: :AcpCancel [subagent]", WARN)
            return
        if session is None:
            return
        if not session.in_turn:
            # The turn is over, its subagents may not be (codex-acp's go on after it): they are the work.
            await subagents.cancel_children(session, self._port, agent)
            return
        session.cancelling = True
        self._port.cancel_permissions(session.session_id)
        session.state.cancel_unfinished()
        session.chat.flush()
        if agent is not None:
            with contextlib.suppress(ConnectionClosed):
                await agent.cancel(session.session_id)
        await subagents.cancel_children(session, self._port, agent)

    # ---- the queue (sessions/prompt_queue.py) and steering -------------------------------------------------

    async def queue_action(
        self,
        session_id: str | None,
        action: str,
        prompt_id: int | None = None,
        text: str | None = None,
        mentions: object = None,
    ) -> None:
        """`:AcpQueue ACTION`: on the queued prompt `prompt_id` (None: the next to go); `edit` with its new
        `text` and what that text mentions (files, media, what Neovim knows)."""
        current = self._runs.current(session_id)
        session = current.session
        if session is None:
            self._port.notify(current.missing or "", WARN)
            return
        agent = current.connection
        steerable = agent is not None and agent.steerable
        queue = self._queue
        if action not in ACTIONS:
            self._port.notify(f"no :AcpQueue {action}: use {', '.join(ACTIONS)}", WARN)
            return
        if action == "list":
            queue.list(session)
            return
        if action == "clear":
            queue.clear(session)
            queue.show(session, steerable)
            return
        queued = queue.find(session, prompt_id)
        if queued is None:
            return
        if action == "send":
            if session.in_turn:
                self._port.notify(f"{BUSY}: the queue goes on when the turn ends", WARN)
                return
            await self.run(self._start_queued(session, queued))
        elif action == "steer":
            await self._steer(session, queued)
        elif action == "edit":
            if agent is None:
                self._port.notify(NO_AGENT_RUNNING, WARN)
                return
            taken = await self._with_diffs(mentions if isinstance(mentions, list) else [], session.session_id)
            queue.edit(session, queued, text or "", taken if isinstance(taken, list) else [])
            # Checked and shown again as it would go now: a refused edit gives the text back to the prompt.
            built = self._build(queued.text, queued.attachments, agent, session)
            if built is None:
                queue.drop(session, queued)
            else:
                queued.shown = built.shown
        elif action == "drop":
            queue.drop(session, queued)
        else:
            queue.move(session, queued, -1 if action == "up" else 1)
        queue.show(session, steerable)

    async def steer(self, text: str, raw_attachments: object = None, session_id: str | None = None) -> None:
        """The prompt typed sent into the running turn: queued as any prompt sent meanwhile, then steered.
        With no turn running it is a prompt like any other."""
        session = self._runs.current(session_id).session
        if session is None or not session.in_turn:
            await self.prompt(text, raw_attachments, session_id)
            return
        count = len(session.queue)
        await self.prompt(text, raw_attachments, session_id)
        if len(session.queue) > count:
            await self._steer(session, session.queue[-1])

    async def _steer(self, session: ChatSession, queued: QueuedPrompt) -> None:
        agent = self._runs.connection_of(session)
        if agent is None:
            self._port.notify(NO_AGENT_RUNNING, WARN)
            return
        if not agent.steerable:
            self._port.notify(
                f"{agent.display_name} cannot be steered: the prompt goes when the turn ends", WARN
            )
            return
        if not session.in_turn:
            await self.run(self._start_queued(session, queued))
            return
        built = self._build(queued.text, queued.attachments, agent, session)
        if built is None:
            self._queue.drop(session, queued)
            self._queue.show(session, True)
            return
        # Shown where it goes in, before it is sent: the agent goes on with its turn at once, and what it says
        # next may come before its answer.
        session.queue.remove(queued)
        session.state.add_notice(STEERED)
        session.state.add_user_prompt(built.shown)
        session.chat.flush()
        self._queue.show(session, True)
        try:
            answer = await agent.steer(session.session_id, built.blocks)
        except ConnectionClosed:
            return
        except RpcError as err:
            answer = SteeringResponse(outcome="failed", reason=failure.describe(err))
        if answer.outcome in ("injected", "startedNewTurn"):
            return
        if answer.outcome == "promptRequired":
            # The turn ended before it went in: it goes as the next prompt.
            session.state.add_notice("The turn had ended: it goes as the next prompt")
            session.queue.insert(0, queued)
            if not session.in_turn:
                await self.run(self._start_queued(session, queued))
                return
        else:
            reason = f" ({answer.reason})" if answer.reason else ""
            session.state.add_notice(f"Not steered{reason}: it stays queued", "warning")
            session.queue.insert(0, queued)
        session.chat.flush()
        self._queue.show(session, True)

"""What the agents send that concerns a session: its updates, and its permission requests."""

from __future__ import annotations

import logging

import msgspec

from acp_nvim.app import attention
from acp_nvim.app.edits import EditFollower
from acp_nvim.app.permissions import plan_review
from acp_nvim.app.permissions.service import Permissions, one_line
from acp_nvim.app.port import ERROR, WARN, NeovimPort
from acp_nvim.app.runs import MAX_SUBAGENT_DEPTH, ChatSession, Runs
from acp_nvim.app.status import StatusBoard
from acp_nvim.app.views import PermissionChoice, PermissionView
from acp_nvim.client.editor import unknown_session
from acp_nvim.client.files.agent_edits import TOOL_CALL_UPDATES
from acp_nvim.client.session.state import ChunkUpdate, SessionState
from acp_nvim.client.session.subagents import Subagent
from acp_nvim.client.session.text_run import TextRun
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

log = logging.getLogger("acp_nvim.incoming")

# Update kinds that change what status() reports.
STATUS_UPDATES = (
    s.SessionUpdateCurrentModeUpdate,
    s.SessionUpdateConfigOptionUpdate,
    s.SessionUpdateSessionInfoUpdate,
    s.SessionUpdateUsageUpdate,
)
# The stream's bulk, which concerns neither the status nor the edit follower: one set lookup decides that,
# instead of six type checks per streamed chunk. Its types are `ChunkUpdate`'s (what the ignores below say).
CHUNKS = frozenset(
    (
        s.SessionUpdateAgentMessageChunk,
        s.SessionUpdateAgentThoughtChunk,
        s.SessionUpdateUserMessageChunk,
    )
)
# Of a notice told through a notification, the characters shown.
NOTIFIED_CHARS = 300


class Incoming:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        status: StatusBoard,
        edits: EditFollower,
        permissions: Permissions,
    ) -> None:
        self._permissions = permissions
        self._runs = runs
        self._port = port
        self._status = status
        self._edits = edits

    def on_session_updates(self, notifications: list[u.SessionNotification | TextRun]) -> None:
        """The updates of one read, in order: a run of one session's message chunks (the stream's bulk) is
        applied in one call, and its chat told once. A `TextRun` (the stream's bulk read by its bytes:
        `client/session/text_run.py`) is such chunks, kept together."""
        sessions = self._runs.sessions
        session: ChatSession | None = None
        chunks: list[ChunkUpdate | TextRun] = []
        for notification in notifications:
            if isinstance(notification, TextRun):
                if session is None or notification.session_id != session.session_id:
                    if session is not None and chunks:
                        self._stream(session, chunks)
                        chunks = []
                    session = sessions.get(notification.session_id)
                    if session is None:
                        # A subagent's, or a session not open yet: their way, update by update.
                        self.on_session_updates(list(notification.notifications()))
                        continue
                chunks.append(notification)
                continue
            update = notification.update
            if (
                type(update) in CHUNKS
                and session is not None
                and notification.session_id == session.session_id
            ):
                chunks.append(update)  # type: ignore[arg-type]
                continue
            if session is not None and chunks:
                self._stream(session, chunks)
                chunks = []
            session = sessions.get(notification.session_id)
            if session is None:
                child = self._runs.children.get(notification.session_id)
                if child is not None:
                    self._child_update(child, update)
                else:
                    # Possibly read before the session/new answer reached us: kept for the chat about to open.
                    self._runs.keep_early(notification)
            elif type(update) in CHUNKS:
                chunks.append(update)  # type: ignore[arg-type]
            else:
                self._update(session, update)
        if session is not None and chunks:
            self._stream(session, chunks)

    def _stream(self, session: ChatSession, chunks: list[ChunkUpdate | TextRun]) -> None:
        chat = session.chat
        first = chunks[0]
        many = len(chunks) > 1 or (type(first) is TextRun and len(first.texts) > 1)
        if many and chat.shows_at_once():
            # The turn's first words (or the first after a pause) are shown alone, at once: drawing the whole
            # read (hundreds of chunks when an agent sends fast) held them back by the parse of all of it;
            # the rest of the read shares the next frame.
            if type(first) is TextRun and len(first.texts) > 1:
                head, rest = first.texts[:1], first.texts[1:]
                chunks = [msgspec.structs.replace(first, texts=rest), *chunks[1:]]
                first = msgspec.structs.replace(first, texts=head)
            else:
                chunks = chunks[1:]
            self._apply_chunks(session, [first])
            chat.changed()
        self._apply_chunks(session, chunks)
        chat.changed()

    def _apply_chunks(self, session: ChatSession, chunks: list[ChunkUpdate | TextRun]) -> None:
        try:
            session.state.apply_chunks(chunks)
        except Exception:
            # A bug of ours, contained: the updates read after these still reach the chat.
            log.exception("message chunks of session %s not applied", session.session_id)

    def _child_update(self, child: Subagent, update: u.SessionUpdate) -> None:
        """An update of a subagent's own session: its transcript, drawn under its parent's tool call."""
        root = self._runs.owner(child.session_id)
        state = child.state
        if root is None or not isinstance(state, SessionState):
            return
        try:
            state.apply(update)
            # What changed is drawn with the parent's tool call, whole: the child's own record is not used.
            state.take_changes()
            if isinstance(update, u.SessionUpdateSubagentUpdate):
                self._runs.adopt(state.children[update.session_id])
            if isinstance(update, TOOL_CALL_UPDATES) and not root.replaying:
                # A subagent's edits are its session's, in the root session's folders and review.
                self._edits.on_update(root.session_id, update)
        except Exception:
            log.exception("update %s of subagent %s not applied", type(update).__name__, child.session_id)
        self.child_changed(child)

    def child_changed(self, child: Subagent) -> None:
        """The tool calls a subagent is drawn under, up to its chat session's, are drawn again."""
        depth = 0
        while depth < MAX_SUBAGENT_DEPTH:
            depth += 1
            parent = self._runs.sessions.get(child.parent_id)
            if parent is not None:
                parent.state.child_changed(child)
                parent.chat.changed()
                return
            above = self._runs.children.get(child.parent_id)
            if above is None or not isinstance(above.state, SessionState):
                return
            above.state.child_changed(child)
            above.state.take_changes()
            child = above

    def _update(self, session: ChatSession, update: u.SessionUpdate) -> None:
        try:
            session.state.apply(update)
            if isinstance(update, u.SessionUpdateSubagentUpdate):
                self._runs.adopt(session.state.children[update.session_id])
            # Only tool calls name files the agent may edit; a replayed history's were made long ago, and
            # following them would put edits of that time in the review as the agent's of now.
            if isinstance(update, TOOL_CALL_UPDATES) and not session.replaying:
                self._edits.on_update(session.session_id, update)
        except Exception:
            log.exception("update %s of session %s not applied", type(update).__name__, session.session_id)
        if isinstance(update, s.SessionUpdateNotice) and not session.replaying:
            self._notify(session, update)
        session.chat.changed()
        if isinstance(update, STATUS_UPDATES) and session.session_id == self._runs.current_id:
            self._status.push()

    def _notify(self, session: ChatSession, notice: s.Notice) -> None:
        """A warning or an error of the agent is told once beside the chat, which may not be in view."""
        level = {"warning": WARN, "error": ERROR}.get(notice.severity)
        text = notice.title + (f": {notice.description}" if notice.description else "")
        if level is None or text in session.notified:
            return
        session.notified.add(text)
        # One line, bounded: the chat has the whole text.
        shown = " ".join(text.split())
        if len(shown) > NOTIFIED_CHARS:
            shown = shown[:NOTIFIED_CHARS] + "…"
        self._port.notify(f"{session.agent}: {shown}", level)

    async def ask_permission(self, request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome:
        # A subagent's request is its chat session's, about the subagent's own tool call.
        session = self._runs.owner(request.session_id)
        if session is None:
            # A session not open here (never opened, or closed since): the agent's mistake, answered as
            # every client method answers it, not hidden behind `cancelled`.
            raise unknown_session(request.session_id)
        child = (
            self._runs.children.get(request.session_id) if session.session_id != request.session_id else None
        )
        if session.cancelling or (child is not None and child.cancel_sent):
            return s.RequestPermissionOutcomeCancelled()
        state = child.state if child is not None and isinstance(child.state, SessionState) else session.state

        def changed() -> None:
            if child is not None:
                self.child_changed(child)
            else:
                session.chat.changed()

        # The request is about its tool call as it states it now (rawInput, title, content merged over the
        # announcement): that is what a rule judges and what the picker and the chat show.
        stated = state.update_tool_call(request.tool_call)
        facts = self._permissions.facts(session, stated, request.tool_call)
        # A plan to approve is read by the user, every time: no rule answers it, none is offered.
        plan = plan_review.plan_of(stated)
        auto = (
            None if plan is not None else await self._permissions.auto_answer(session, request.options, facts)
        )
        if auto is not None:
            option_id, note = auto
            item = state.update_tool_call(s.ToolCallUpdate(tool_call_id=request.tool_call.tool_call_id))
            item.auto_allowed = note
            changed()
            return s.RequestPermissionOutcomeSelected(option_id=option_id)
        item = state.set_awaiting_permission(request.tool_call, True)
        if plan is not None:
            item.plan = plan
        if child is not None:
            child.asking += 1
            changed()
        # The chat shows the tool call (and its diff) before the picker opens.
        session.chat.flush()
        view = PermissionView(
            session_id=session.session_id,
            # A subagent's tool call is drawn under its parent's: the chat shows that one.
            item_id=(child.tool_call_key or item.key) if child is not None else item.key,
            title=one_line(item.title) or "",
            kind=facts.kind,
            command=one_line(facts.command),
            options=(
                plan_review.choices(request.options)
                if plan is not None
                else [
                    *(
                        PermissionChoice(id=option.option_id, name=option.name, kind=option.kind)
                        for option in request.options
                    ),
                    *self._permissions.choices(session, request.options, facts),
                ]
            ),
            subagent=one_line(child.name) if child is not None else None,
            question=plan_review.question(one_line(item.title) or "") if plan is not None else None,
        )
        session.permissions += 1
        self._status.push()
        about = view.title or view.command or ""
        self._port.attention(attention.waiting(session.agent, session.session_id, "permission", about))
        try:
            outcome = await self._port.ask_permission(request, view)
            if plan is not None:
                outcome = plan_review.settle(request.options, outcome)
            else:
                # An "always allow" chosen becomes a rule, and the agent's own allow option.
                outcome = await self._permissions.settle(session, request.options, facts, outcome)
        finally:
            session.permissions -= 1
            if child is not None:
                child.asking -= 1
            if self._runs.sessions.get(session.session_id) is session:
                item.awaiting_permission = False
                state.update_tool_call(s.ToolCallUpdate(tool_call_id=item.tool_call_id))
                changed()
            self._status.push()
        return outcome

    def elicitation_waits(self, request: s.CreateElicitationRequest) -> None:
        """A form or URL the agent asks the user to fill in or open is about to be shown."""
        session = self._runs.sessions.get(request.session_id) if request.session_id else None
        # A request-scoped elicitation (a login, before any session) names no session: the agent started last.
        run = self._runs.current().run
        agent = session.agent if session is not None else run.name if run is not None else "agent"
        session_id = session.session_id if session is not None else None
        self._port.attention(attention.waiting(agent, session_id, "elicitation", request.message))

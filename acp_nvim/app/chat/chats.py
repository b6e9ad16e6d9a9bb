"""A session's chat from the moment it is registered to the moment it ends, with its agent or alone.

Registering comes before session/new's answer is used (or session/load is sent), so what the agent sends
first (a replay) lands in the chat. Ending cancels what the session still waits for and tells the chat why.
"""

from __future__ import annotations

from acp_nvim.app.edits import EditFollower
from acp_nvim.app.port import NeovimPort
from acp_nvim.app.review.notes import forget_notes
from acp_nvim.app.runs import AgentRun, ChatSession, Runs
from acp_nvim.app.status import StatusBoard
from acp_nvim.app.views import ChatInfo
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.transcript import NoticeLevel
from acp_nvim.protocol import schema as s


class Chats:
    def __init__(self, runs: Runs, port: NeovimPort, status: StatusBoard, edits: EditFollower) -> None:
        self._runs = runs
        self._port = port
        self._status = status
        self._edits = edits

    def open(
        self,
        run: AgentRun,
        session_id: str,
        cwd: str,
        directories: list[str],
        title: str | None = None,
        *,
        clear_chat: bool = False,
    ) -> ChatSession:
        """Registers a session and creates its chat. `clear_chat`: the session's chat, if it still has one
        (a reload after a restart), is emptied and reused instead."""
        state = SessionState(session_id)
        if title:
            state.apply(s.SessionUpdateSessionInfoUpdate(title=title))
        chat = self._port.chat_view(state, run.display_name)
        session = ChatSession(session_id, run.name, cwd, directories, state, chat)
        early = self._runs.add(session)
        info = ChatInfo(agent=run.name, display_name=run.display_name, cwd=cwd)
        self._port.chat_create(session_id, info, reset=clear_chat)
        for update in early:
            state.apply(update)
        self._runs.adopt_children(session)
        chat.flush()
        self._status.use(session_id)
        return session

    def reattach(self, run: AgentRun, session: ChatSession) -> None:
        """Registers again a session that ended with its agent, chat and transcript as they are (a resume
        after a restart): new items continue its transcript."""
        session.agent = run.name
        session.in_turn = session.cancelling = False
        session.permissions = 0
        for update in self._runs.add(session):
            session.state.apply(update)
        self._runs.adopt_children(session)
        session.chat.flush()
        self._status.use(session.session_id)

    def forget(self, session_id: str) -> None:
        """The session ended (closed, failed to open, its agent gone): what belonged to it ends too, and to
        its subagents."""
        session = self._runs.sessions.get(session_id)
        children = [child.session_id for child in session.state.all_children()] if session is not None else []
        if session is not None:
            forget_notes(self._port, session)
        self._runs.forget(session_id)
        self._edits.forget(session_id)
        # Its terminals, not the ones of other sessions: another agent may still be using its own.
        for ended in (session_id, *children):
            self._port.session_ended(ended)

    def drop(self, session_id: str, *, destroy_chat: bool) -> None:
        """A session that failed to open (or closed): forgotten, its chat removed when asked."""
        self.forget(session_id)
        if destroy_chat:
            self._port.chat_destroy(session_id)
        self._status.push()

    def tell(self, session: ChatSession, text: str, level: NoticeLevel = "warning") -> None:
        session.state.add_notice(text, level)
        session.chat.flush()

    def end_all(
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
        ended = self._runs.sessions_of(run)
        for session in ended:
            self._port.cancel_permissions(session.session_id)
            for child in session.state.all_children():
                self._port.cancel_permissions(child.session_id)
            session.state.cancel_unfinished()
            if notice:
                session.state.add_notice(notice, level)
            session.chat.flush()
            session.in_turn = session.cancelling = False
            self.forget(session.session_id)
            if remember:
                run.ended.append(session)
        self._status.push()
        return ended

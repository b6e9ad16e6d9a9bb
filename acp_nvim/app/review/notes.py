"""The review's notes of each session: added when the user comments on the agent's change or rejects a hunk
(Lua reports the fact), shown as virtual text, edited, removed, listed in the quickfix list, and composed into
the next prompt (`:AcpReview send`). They last as long as their session (`forget`).

Lua keeps the marks (they follow the buffer's edits) and sends where they are now with a list or a send; this
module keeps what each note says and decides what is shown, listed and sent.
"""

from __future__ import annotations

import itertools
import os

import msgspec

from acp_nvim.app.port import INFO, WARN, NeovimPort
from acp_nvim.app.review.compose import GONE, compose, said, where
from acp_nvim.app.review.note import MarkSpan, NoteFact, NoteItem, NoteMark, ReviewNote, ReviewRequest
from acp_nvim.app.runs import ChatSession, Runs

NO_NOTES = "no review notes: comment on the agent's change (:AcpReview comment) or reject a hunk first"
EMPTY_COMMENT = "a comment needs words: nothing was added"
NO_FILE = "this buffer has no file for the agent to find: nothing was added"
NO_SESSION = "no session to review with: start an agent with :AcpStart"


def mark_of(note: ReviewNote) -> NoteMark:
    return NoteMark(
        id=note.id,
        bufnr=note.fact.bufnr,
        path=note.path,
        start=note.start,
        end=note.end,
        kind=note.fact.kind,
        text=note.text,
        shown=_shown(note),
    )


def _shown(note: ReviewNote) -> str:
    """The virtual text: short, beside the line."""
    words = " ".join(note.text.split())
    if note.fact.kind == "rejection":
        words = f"rejected: {words}" if words else "rejected"
    return words + (" (in a prompt)" if note.sent else "")


class ReviewNotes:
    def __init__(self, runs: Runs, port: NeovimPort) -> None:
        self._runs = runs
        self._port = port
        self._ids = itertools.count(1)

    async def command(self, request: ReviewRequest) -> None:
        """One request of `:AcpReview` or the review's keys (`note.py`'s `ReviewRequest`)."""
        if request.action == "add" and request.note is not None:
            self.add(request.note)
        elif request.action in ("edit", "remove") and request.note_id is not None:
            self.change(request.note_id, None if request.action == "remove" else (request.text or ""))
        elif request.action == "moved":
            for each in self._runs.sessions.values():
                self._moved(each, request.spans)
        elif request.action == "renamed" and request.path:
            for each in self._runs.sessions.values():
                self._moved(each, request.spans, request.path)
        elif request.action == "show" and request.path:
            notes = [note for each in self._runs.sessions.values() for note in each.review_notes]
            self._port.review_marks([mark_of(note) for note in notes if note.path == request.path])
        elif request.action in ("list", "send"):
            session = self._session(request.session_id)
            if session is None:
                return
            self._moved(session, request.spans)
            if request.action == "list":
                self.show_list(session)
            else:
                self.send(session)

    def _session(self, session_id: str | None, *, quiet: bool = False) -> ChatSession | None:
        session = self._runs.sessions.get(session_id) if session_id else None
        current = session or self._runs.current().session
        if current is None and not quiet:
            self._port.notify(NO_SESSION, WARN)
        return current

    def add(self, fact: NoteFact) -> None:
        """A comment (its words needed) or a rejection (a reason or none) kept for the session of its hunk,
        else the current one, and shown."""
        text = fact.text.strip()
        if fact.kind == "comment" and not text:
            self._port.notify(EMPTY_COMMENT, WARN)
            return
        if not os.path.isabs(fact.path):
            # The agent is pointed at a file's lines: a buffer without one (a scratch, the chat) has none.
            if fact.kind == "comment":
                self._port.notify(NO_FILE, WARN)
            return
        # A reject without a reason is a reject first: with no session to tell, it says nothing more.
        session = self._session(fact.session_id, quiet=fact.kind == "rejection" and not text)
        if session is None:
            return
        note = ReviewNote(id=next(self._ids), fact=fact, start=fact.start, end=fact.end, text=text)
        session.review_notes.append(note)
        self._port.review_marks([mark_of(note)])

    def _find(self, note_id: int) -> tuple[ChatSession, ReviewNote] | None:
        for session in self._runs.sessions.values():
            for note in session.review_notes:
                if note.id == note_id:
                    return session, note
        return None

    def change(self, note_id: int, text: str | None) -> None:
        """A note's new words; None, or a comment left without words: the note goes. A rejection without a
        reason stays a rejection."""
        found = self._find(note_id)
        if found is None:
            # Its session ended: the mark Lua still had goes too.
            self._port.review_drop([note_id])
            return
        session, note = found
        text = text.strip() if text is not None else None
        if text is None or (not text and note.fact.kind == "comment"):
            session.review_notes.remove(note)
            self._port.review_drop([note_id])
            return
        note.text, note.sent = text, False
        self._port.review_marks([mark_of(note)])

    def _moved(self, session: ChatSession, spans: list[MarkSpan], path: str | None = None) -> None:
        """The notes' marks are where `spans` say; with `path`, on that file now: its buffer was renamed (the
        user's `:saveas`, `:file`, a file manager's rename), and the agent is pointed at the new name."""
        where_now = {span.id: span for span in spans}
        for note in session.review_notes:
            span = where_now.get(note.id)
            if span is not None:
                note.start, note.end = span.start, span.end
                if path is not None and path != note.path:
                    note.fact = msgspec.structs.replace(note.fact, path=path)

    def show_list(self, session: ChatSession) -> None:
        """The session's notes in the quickfix list, a line each (sent ones marked)."""
        if not session.review_notes:
            self._port.notify(NO_NOTES, INFO)
            return
        gone = _gone(session.review_notes)
        items = [
            NoteItem(
                filename=note.path,
                lnum=max(1, note.start),
                end_lnum=max(1, note.start, note.end),
                text=("[sent] " if note.sent else "")
                + f"{note.fact.kind}: {said(note)}"
                + (f" ({GONE})" if note.path in gone else ""),
            )
            for note in self._ordered(session)
        ]
        self._port.review_list(f"ACP review notes ({len(items)})", items)

    def _ordered(self, session: ChatSession) -> list[ReviewNote]:
        return sorted(session.review_notes, key=lambda n: (n.path, n.start, n.id))

    def send(self, session: ChatSession) -> None:
        """The next prompt made of the notes no prompt took yet (all of them again when every one was): into
        the session's prompt window, for the user to edit and send."""
        notes = [note for note in session.review_notes if not note.sent] or list(session.review_notes)
        if not notes:
            self._port.notify(NO_NOTES, INFO)
            return
        text, references = compose(notes, session.cwd, _gone(notes))
        for note in notes:
            note.sent = True
        self._port.prompt_draft(session.session_id, text, references)
        self._port.review_marks([mark_of(note) for note in notes])
        places = ", ".join(where(note, session.cwd) for note in notes[:3])
        more = f" and {len(notes) - 3} more" if len(notes) > 3 else ""
        self._port.notify(f"review notes in the prompt ({places}{more}): edit it and send", INFO)


def _gone(notes: list[ReviewNote]) -> frozenset[str]:
    """The notes' files not at their paths now. A rename of the file's buffer is followed (`renamed`); one
    outside Neovim or by the agent (whose moves leave the buffer's name as it was) is not known here, so a
    note is not sent naming a path that leads nowhere without saying so. One stat per file, when asked."""
    return frozenset(path for path in {note.path for note in notes} if not os.path.exists(path))


def forget_notes(port: NeovimPort, session: ChatSession) -> None:
    """The session ended: its notes and their marks go."""
    ids = [note.id for note in session.review_notes]
    session.review_notes.clear()
    if ids:
        port.review_drop(ids)

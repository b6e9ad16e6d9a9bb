"""What a review note is, as Lua reports it and as the session keeps it, and what Lua is handed to show it.

The hunks themselves are Lua's (`lua/acp_nvim/editor/review/`: the marks follow the buffer); a note is the
fact Lua reports when the user comments on a hunk or a range of lines, or rejects a hunk: where, the lines
there, the words. The session keeps its notes until it ends (`ChatSession.review_notes`).
"""

from __future__ import annotations

from typing import Literal

import msgspec

NoteKind = Literal["comment", "rejection"]


class NoteFact(msgspec.Struct, kw_only=True, frozen=True):
    """A comment or a rejection as Lua saw it. `start`..`end` are 1-based lines of the buffer now (a
    rejection's: the old lines back there); `old` / `new` the hunk's lines before the agent and the agent's
    (`hunk`), or `new` the range's lines (a comment on lines no hunk holds)."""

    kind: NoteKind
    # The hunk's session; None: the current one.
    session_id: str | None = None
    bufnr: int = 0
    path: str
    start: int
    end: int
    text: str = ""
    old: list[str] = []
    new: list[str] = []
    hunk: bool = False
    filetype: str = ""


class MarkSpan(msgspec.Struct, kw_only=True, frozen=True):
    """Where the mark of note `id` is now (1-based lines), as Lua finds it when a list or a prompt is made."""

    id: int
    start: int
    end: int


class ReviewRequest(msgspec.Struct, kw_only=True, frozen=True):
    """What `:AcpReview` and the review's keys ask of the notes: `add` a note, `edit` its text, `remove` it,
    `list` them, `send` them into the prompt; a buffer wiped out reports where its marks were (`moved`), one
    read again asks for the notes of its file (`show`, `path`), and one given another name reports the notes
    it shows, now on file `path` (`renamed`). `spans`: the marks where they are now."""

    action: Literal["add", "edit", "remove", "list", "send", "moved", "show", "renamed"]
    session_id: str | None = None
    note: NoteFact | None = None
    note_id: int | None = None
    text: str | None = None
    spans: list[MarkSpan] = []
    path: str | None = None


class ReviewNote(msgspec.Struct, kw_only=True):
    """A note the session keeps: the fact, its id, its lines as last known, and whether a prompt took it."""

    id: int
    fact: NoteFact
    start: int
    end: int
    text: str
    sent: bool = False

    @property
    def path(self) -> str:
        return self.fact.path


class NoteMark(msgspec.Struct, kw_only=True, frozen=True):
    """A note as Lua shows it: virtual text at the end of its first line, on buffer `bufnr`."""

    id: int
    bufnr: int
    path: str
    start: int
    end: int
    kind: NoteKind
    # The user's words (what an edit starts from) and the virtual text.
    text: str
    shown: str


class NoteItem(msgspec.Struct, kw_only=True, frozen=True):
    """One line of the notes' quickfix list."""

    filename: str
    lnum: int
    end_lnum: int
    text: str

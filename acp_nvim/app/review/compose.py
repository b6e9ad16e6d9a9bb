"""The next prompt made of the review's notes: the text the user edits in the prompt window, and a reference
to each note's lines (a `resource_link` with the line range, as a selection's: `prompt_content.py`).

Per file, in the order of their lines: where (`path:3-5`), what the user said (the comment, or that the hunk
was rejected and why), and the lines quoted (a hunk as a diff of the agent's change, a range as it reads).
"""

from __future__ import annotations

import os

from acp_nvim.app.review.note import ReviewNote
from acp_nvim.app.sessions.prompt_content import fenced
from acp_nvim.jsonrpc.wire import JsonValue

INTRO = "Here is my review of your changes. Please address each note:"
#: What a file's notes are headed with when no file is at its path any more: moved or deleted (outside
#: Neovim, or by the agent: only a rename of its buffer is followed), or never written (`:file` alone).
GONE = "not on disk now"
#: The most lines of a hunk or range quoted; the reference names them all.
MAX_QUOTED_LINES = 80


def shown_path(path: str, cwd: str) -> str:
    """A file named as the user would: relative to the session's folder when it is inside it."""
    try:
        relative = os.path.relpath(path, cwd) if cwd else path
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def where(note: ReviewNote, cwd: str) -> str:
    name = shown_path(note.path, cwd)
    return f"{name}:{note.start}" if note.end <= note.start else f"{name}:{note.start}-{note.end}"


def said(note: ReviewNote) -> str:
    """What the user said of the lines, in one line for the list and the prompt."""
    text = " ".join(note.text.split())
    if note.fact.kind == "rejection":
        return f"rejected (the old lines are back): {text}" if text else "rejected (the old lines are back)"
    return text


def _cut(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_QUOTED_LINES:
        return lines
    return [*lines[:MAX_QUOTED_LINES], f"… {len(lines) - MAX_QUOTED_LINES} more lines"]


def quote(note: ReviewNote) -> str:
    """The lines the note is about: a hunk's change as a diff (the old lines, then the agent's), a range's
    lines as they read."""
    fact = note.fact
    if fact.hunk:
        lines = [*("-" + line for line in fact.old), *("+" + line for line in fact.new)]
        return fenced("\n".join(_cut(lines)), "diff") if lines else ""
    return fenced("\n".join(_cut(fact.new)), fact.filetype) if fact.new else ""


def compose(
    notes: list[ReviewNote], cwd: str, gone: frozenset[str] = frozenset()
) -> tuple[str, list[JsonValue]]:
    """The prompt's text and its references (the tables Lua keeps as the prompt's attachments), per file in
    the order of the files' first notes, each file's notes by line. A file of `gone` (no file at its path now)
    is named as such, and gets no reference: a link would lead nowhere."""
    by_file: dict[str, list[ReviewNote]] = {}
    for note in notes:
        by_file.setdefault(note.path, []).append(note)
    parts = [INTRO]
    references: list[JsonValue] = []
    for path, file_notes in by_file.items():
        parts.append(f"## {shown_path(path, cwd)}" + (f" ({GONE})" if path in gone else ""))
        for note in sorted(file_notes, key=lambda n: (n.start, n.end, n.id)):
            body = quote(note)
            parts.append(f"{where(note, cwd)}: {said(note)}" + (f"\n{body}" if body else ""))
            if path in gone:
                continue
            start, end = max(1, note.start), max(1, note.start, note.end)
            reference: JsonValue = {"kind": "reference", "path": path, "start": start, "end": end}
            if reference not in references:
                references.append(reference)
    return "\n\n".join(parts), references

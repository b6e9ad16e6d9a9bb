"""Where the chat continues a message's very long line on the next buffer line.

Neovim measures a wrapped line as a whole each time it redraws it or moves a cursor below it: one streamed
paragraph of 100,000 words (700 KB on one line) cost it 2-10 ms per frame while it grew, and as much again at
each later scroll or prompt under it. A line of prose that reached `LONG_LINE_CHARS` goes on on the next line
at its next word (the space before it stays, at the end of the line; nothing of the text changes): in markdown
a line break inside a paragraph is still the same paragraph, and the window wraps it as before, so the chat
reads the same. Code keeps its lines as they are
(a fenced or indented block, a table row): a newline there would change what it says. A line without any
space (a blob) is left whole; the chat turns 'linebreak' off for such a line (lua/acp_nvim/ui/chat/drain.lua).

The breaks depend only on the text before them, so a message streamed in any pieces gets the same lines as
the same message drawn whole (a replay): `LineBreaker` carries where the last line stands from one piece to
the next.
"""

from __future__ import annotations

import re

# Characters of a line of prose after which it ends at its next space.
LONG_LINE_CHARS = 8192
# Of a line, what tells its kind: a fence (```, ~~~) after up to three spaces, an indent, a table's `|`.
_HEAD_CHARS = 16
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})", re.MULTILINE)
# Where a word starts after a space (its match's end).
_WORD_AFTER_SPACE = re.compile(r" (?=[^ ])")


class LineBreaker:
    """Breaks one message's text, fed in the order it is shown."""

    __slots__ = ("_after_space", "_column", "_fence", "_head", "_limit")

    def __init__(self, limit: int = LONG_LINE_CHARS) -> None:
        # Never within a line's head: whether it is prose is known only once its head has arrived.
        self._limit = max(limit, _HEAD_CHARS)
        # Characters on the current (last) line so far, and its first ones.
        self._column = 0
        self._head = ""
        # Whether the line's last character is a space: a word at the start of the next piece starts there.
        self._after_space = False
        # The fence of the code block the text is in ("```", "~~~~", ...), None outside one.
        self._fence: str | None = None

    def feed(self, text: str) -> str:
        """`text` as the chat shows it, following what was fed before."""
        if self._column + len(text) <= self._limit:
            # No line can be long: nothing to break, only where the text ends to note (nearly every streamed
            # piece, and every message of a replayed history, at the speed of `re`).
            self._follow(text)
            return text
        lines = text.split("\n")
        out: list[str] = []
        for index, line in enumerate(lines):
            if index:
                self._line_ended()
            out.append(self._extend(line))
        return "\n".join(out)

    def _follow(self, text: str) -> None:
        last = text.rfind("\n")
        if last < 0:
            self._grow(text)
            return
        ended = self._head + text[: last + 1]
        for match in _FENCE_LINE.finditer(ended):
            self._toggle(match.group(1))
        self._column, self._head, self._after_space = 0, "", False
        self._grow(text[last + 1 :])

    def _grow(self, part: str) -> None:
        self._note_head(part)
        self._advance(part)

    def _note_head(self, part: str) -> None:
        if len(self._head) < _HEAD_CHARS:
            self._head += part[: _HEAD_CHARS - len(self._head)]

    def _advance(self, part: str) -> None:
        if part:
            self._column += len(part)
            self._after_space = part[-1] == " "

    def _extend(self, part: str) -> str:
        """`part` added to the current line, broken at its spaces past the limit when the line is prose."""
        # Known before the line's kind is asked.
        self._note_head(part)
        if self._column + len(part) <= self._limit or not self._prose():
            self._advance(part)
            return part
        pieces: list[str] = []
        while part and self._column + len(part) > self._limit:
            # The first word starting at or past the limit: a new line before it.
            reach = self._limit - self._column
            if reach <= 0 and self._after_space and part[0] != " ":
                cut = 0
            else:
                match = _WORD_AFTER_SPACE.search(part, max(0, reach - 1))
                if match is None:
                    break
                cut = match.end()
            pieces.append(part[:cut])
            part = part[cut:]
            # The next line starts with a word of the same paragraph: never a fence or code.
            self._column, self._head, self._after_space = 0, "x", False
        self._advance(part)
        pieces.append(part)
        return "\n".join(pieces)

    def _prose(self) -> bool:
        head = self._head
        if self._fence is not None or head.startswith(("    ", "\t", "|")):
            return False
        return _FENCE.match(head) is None

    def _line_ended(self) -> None:
        match = _FENCE.match(self._head)
        if match is not None:
            self._toggle(match.group(1))
        self._column, self._head, self._after_space = 0, "", False

    def _toggle(self, marker: str) -> None:
        """A fence line: it opens a code block, or closes the open one (same character, at least as long)."""
        if self._fence is None:
            self._fence = marker
        elif marker[0] == self._fence[0] and len(marker) >= len(self._fence):
            self._fence = None


def broken(text: str, limit: int = LONG_LINE_CHARS) -> tuple[str, LineBreaker]:
    """A whole text as the chat shows it, and the breaker to feed what follows it."""
    breaker = LineBreaker(limit)
    return breaker.feed(text), breaker

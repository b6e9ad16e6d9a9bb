"""The cut in the middle of a long message: what the chat shows of a message past `HEAD_CHARS` is its end,
and the whole message is kept in a file of the host's that the chat opens on demand.

Pushing a 50 MiB chunk into Neovim froze it for seconds and cost it a gigabyte, so the chat shows at most the
message's first `HEAD_CHARS` characters, a note where it is cut, and its last `TAIL_CHARS` to `2 * TAIL_CHARS`
characters: the end, where an answer concludes. The tail grows with what the agent sends until it is twice
`TAIL_CHARS`; then the cut moves on (the note and the tail are drawn again, from a line's start when one is
near), so a stream of any length costs the chat about one redraw of `TAIL_CHARS` per `TAIL_CHARS` streamed.
The host keeps only the tail in memory; every character of the message goes to its file (up to
`MAX_FILE_CHARS`), removed when the host exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

# Of a message, the beginning shown, and at least this much of its end (characters).
HEAD_CHARS = 512 * 1024
TAIL_CHARS = 512 * 1024
# Of a message, at most this much is kept in its file; a note at its end says what was not.
MAX_FILE_CHARS = 256 << 20
# How far past the cut a line's start is looked for, so that the tail starts with a whole line.
_LINE_START_SEARCH = 4096

_folder: str | None = None


def _messages_folder() -> str:
    """This host's folder of whole messages (private to the user), made at the first long message."""
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="acp_nvim-messages-")
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


def newlines_before(pieces: list[str], chars: int, last_pieces: int = 0) -> int:
    """The newlines the text of `pieces` ended with before its last `chars` characters (all of it when it was
    only newlines), which are its last `last_pieces` pieces when they were not joined since. Counted per frame
    from the pieces: nothing is counted per streamed chunk."""
    index = len(pieces)
    if 0 < last_pieces < index and sum(map(len, pieces[index - last_pieces :])) == chars:
        index -= last_pieces
        chars = 0
    count = 0
    while index > 0:
        index -= 1
        piece = pieces[index]
        if chars >= len(piece):
            chars -= len(piece)
            continue
        end = len(piece) - chars
        chars = 0
        start = end
        while start > 0 and piece[start - 1] == "\n":
            start -= 1
        count += end - start
        if start > 0:
            break
    return count


class WholeMessage:
    """A message's whole text, appended to its file as it arrives (UTF-8; what cannot be encoded replaced)."""

    __slots__ = ("_fd", "_held", "chars", "path")

    def __init__(self) -> None:
        fd, self.path = tempfile.mkstemp(prefix="message-", suffix=".txt", dir=_messages_folder())
        self._fd: int | None = fd
        self._held: list[str] | None = None
        self.chars = 0

    def hold(self) -> None:
        """Until `release`, what is written is kept here: a read's run of chunks past the cut costs one write
        to the file, not a system call per chunk (a quarter of a 100,000-word stream's updates)."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Writes what was held, as the writes one by one would have (the same bytes, the same limit)."""
        held, self._held = self._held, None
        if not held:
            return
        if self.chars + sum(map(len, held)) < MAX_FILE_CHARS:
            self.write(held[0] if len(held) == 1 else "".join(held))
        else:
            # At the file's limit, where the piece that reaches it decides what is kept: one by one.
            for text in held:
                self.write(text)

    def write(self, text: str) -> None:
        if self._held is not None:
            self._held.append(text)
            return
        if self._fd is None:
            return
        room = MAX_FILE_CHARS - self.chars
        if len(text) > room:
            text = f"{text[:room]}\n… the rest of the message is not kept (past {MAX_FILE_CHARS >> 20} MiB)\n"
        try:
            data = memoryview(text.encode("utf-8", "replace"))
            while data:
                data = data[os.write(self._fd, data) :]
        except OSError:
            # A full disk: the chat still shows the message's beginning and end.
            self.close()
            return
        self.chars += len(text)
        if self.chars >= MAX_FILE_CHARS:
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()


class MessageCut:
    """What a message shows after its cut (its tail), how much the cut hides, and the whole message's file."""

    __slots__ = ("hidden", "tail", "tail_size", "whole")

    def __init__(self, head: str) -> None:
        self.whole = WholeMessage()
        self.whole.write(head)
        self.tail: list[str] = []
        self.tail_size = 0
        # Characters between the beginning shown and the tail.
        self.hidden = 0

    @property
    def tail_text(self) -> str:
        if len(self.tail) != 1:
            self.tail = ["".join(self.tail)]
        return self.tail[0] if self.tail else ""

    def add(self, text: str) -> bool:
        """Appends `text` to the tail; True when the cut moved on (the tail is then drawn again whole)."""
        self.whole.write(text)
        self.tail.append(text)
        self.tail_size += len(text)
        if self.tail_size <= 2 * TAIL_CHARS:
            return False
        if len(text) >= TAIL_CHARS + _LINE_START_SEARCH:
            # The tail is all in this one piece: the pieces before it are cut whole, not joined (a 50 MiB
            # chunk is not copied once more).
            self.hidden += self.tail_size - len(text)
            joined = text
        else:
            joined = "".join(self.tail)
        start = len(joined) - TAIL_CHARS
        newline = joined.find("\n", start, start + _LINE_START_SEARCH)
        if newline >= 0:
            start = newline + 1
        self.hidden += start
        self.tail = [joined[start:]]
        self.tail_size = len(self.tail[0])
        return True

    def newlines_before(self, chars: int, last_pieces: int = 0) -> int:
        return newlines_before(self.tail, chars, last_pieces)

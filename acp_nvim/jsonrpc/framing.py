"""Newline-delimited framing with a size cap, without I/O: bytes in, complete lines out."""

from __future__ import annotations

import msgspec

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
# What is kept of a dropped line: enough for the id of a request (or a response) written before its params,
# so the connection can still answer it, and little enough to cost nothing next to the line itself.
HEAD_SIZE = 4096


class Oversized(msgspec.Struct, frozen=True):
    """A line longer than the cap went by and was dropped; `size` is how many bytes were dropped (at the
    end of the stream the line may have been cut short, so this is a lower bound of what the peer meant),
    `head` its first `HEAD_SIZE` bytes."""

    size: int
    head: bytes = b""


def format_size(size: int) -> str:
    """A byte count as people read it: "64 MiB", "1 KiB", "300 bytes"."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


class LineSplitter:
    """Splits a byte stream into lines (without their `\\n` and an optional trailing `\\r`).

    Each chunk is scanned once, so a stream of many small lines costs linear time. A line that grows past
    `max_size` is not kept: its bytes are counted and dropped as they arrive up to the next newline, so a
    huge line never sits in memory, and it comes out as one `Oversized` item. Blank lines are skipped.
    """

    def __init__(self, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_size < 1:
            raise ValueError(f"max_size must be positive, got {max_size}")
        self.max_size = max_size
        # One spare byte while streaming: a line of exactly max_size may still end in "\r".
        self._streaming_limit = max_size + 1
        self._partial = bytearray()
        self._dropping = False
        self._dropped = 0
        self._head = b""
        # Whether the last `feed` (or `finish`) gave out an `Oversized`: when not, its items are all lines.
        self.oversized = False

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        # One C-level split per chunk instead of a find + slice + method call per line: a chunk holds hundreds
        # of streamed updates, and the per-line Python work was a fifth of the client's cost per message.
        self.oversized = False
        pieces = data.split(b"\n")
        rest = pieces.pop()  # after the last newline: the start of a line still to come (b"" if none)
        out: list[bytes | Oversized] = []
        if pieces:
            if self._dropping or self._partial:
                # The first piece ends the line held from earlier chunks.
                self._grow(pieces[0])
                self._end_line(out)
                pieces[0] = b""
            if len(data) <= self.max_size and b"\r" not in data:
                # Common case: no line here can be over the cap, none ends in "\r": keep the non-blank ones.
                out += [line for line in pieces if line and not line.isspace()]
            else:
                for line in pieces:
                    self._emit(out, line)
        if rest:
            self._grow(rest)
        return out

    def _grow(self, part: bytes) -> None:
        """Adds `part` to the unfinished line, or starts dropping it once it is past the cap."""
        if self._dropping:
            self._dropped += len(part)
            if len(self._head) < HEAD_SIZE:
                self._head += part[: HEAD_SIZE - len(self._head)]
        elif len(self._partial) + len(part) > self._streaming_limit:
            self._dropped = len(self._partial) + len(part)
            # Only on the way into dropping, once per oversized line: normal lines never pay for the head.
            self._head = bytes(self._partial[:HEAD_SIZE]) + part[: max(0, HEAD_SIZE - len(self._partial))]
            self._partial = bytearray()
            self._dropping = True
        else:
            self._partial += part

    def finish(self) -> list[bytes | Oversized]:
        """At end of stream: an unterminated last line is still delivered (or reported if too long)."""
        self.oversized = False
        out: list[bytes | Oversized] = []
        if self._dropping or self._partial:
            self._end_line(out)
        return out

    def _end_line(self, out: list[bytes | Oversized]) -> None:
        if self._dropping:
            out.append(Oversized(self._dropped, self._head))
            self.oversized = True
            self._dropping = False
            self._dropped = 0
            self._head = b""
            return
        line = bytes(self._partial)
        self._partial.clear()
        self._emit(out, line)

    def _emit(self, out: list[bytes | Oversized], line: bytes) -> None:
        # The size reported counts a trailing "\r", as the bytes dropped while streaming do.
        size = len(line)
        whole = line
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_size:
            out.append(Oversized(size, whole[:HEAD_SIZE]))
            self.oversized = True
        elif line and not line.isspace():
            out.append(line)

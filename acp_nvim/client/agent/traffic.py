"""A bounded record of the JSON-RPC traffic with one agent, with secrets redacted, for `:AcpLog`.

Recording must cost next to nothing while an agent streams 100,000 updates, so a line is only stored (as
bytes, with its direction and time); parsing, redaction and pretty-printing happen when someone looks.
Memory is bounded twice: by the number of messages and by their total size, and a single huge message (an
agent sending a whole file) is kept as its beginning only.
"""

from __future__ import annotations

import bisect
import itertools
import json
import re
import time
from collections import deque
from typing import TYPE_CHECKING, TypeAlias

import msgspec

if TYPE_CHECKING:
    from acp_nvim.jsonrpc import Direction, JsonValue

DEFAULT_MAX_MESSAGES = 5000
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
MAX_KEPT_PER_MESSAGE = 64 * 1024

REDACTED = "«redacted»"
# Names of environment variables, headers and fields whose values must never reach a log or a bug report.
SECRET_NAME = re.compile(
    r"token|secret|passw|api[-_]?key|auth|credential|cookie|session[-_]?key|private", re.I
)


class TrafficEntry(msgspec.Struct, frozen=True):
    direction: Direction
    timestamp: float
    line: bytes
    size: int

    @property
    def truncated(self) -> bool:
        return self.size > len(self.line)


# One recorded batch: a read's lines (or one line sent), their direction and time, the lines (each cut to
# MAX_KEPT_PER_MESSAGE), their full sizes when one was cut (else None: the lines are whole), their kept bytes.
Batch: TypeAlias = tuple["Direction", float, list[bytes], list[int] | None, int]


class TrafficLog:
    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        # Kept by batch, the lines of one read of the agent's pipe together: an agent streaming hundreds of
        # lines per read costs one call, one time stamp and a few C-level list operations per read instead of
        # a Python call per line (that call cost as much as decoding the line). `TrafficEntry`s are made
        # when someone looks. A batch is never changed once in the deque, only replaced or dropped: a reader
        # on another thread copies the deque and reads the batches without a lock.
        self._batches: deque[Batch] = deque()
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._count = 0
        self._bytes = 0
        self.dropped = 0

    def record(self, direction: Direction, line: bytes) -> None:
        """One line (the `on_message` hook of the connection)."""
        self.record_lines(direction, [bytes(line)])

    def record_lines(self, direction: Direction, lines: list[bytes]) -> None:
        """The lines of one read, in order (the `on_messages` hook of the connection); `lines` is not changed
        afterwards by the caller."""
        if not lines:
            return
        sizes: list[int] | None = None
        if max(map(len, lines)) > MAX_KEPT_PER_MESSAGE:
            sizes = [len(line) for line in lines]
            lines = [line[:MAX_KEPT_PER_MESSAGE] for line in lines]
        added = sum(map(len, lines))
        count = self._count + len(lines)
        total = self._bytes + added
        # Room is made before the append, so a reader on another thread never sees more than the bounds. What
        # stays is what recording the lines one by one would keep: the newest messages within both bounds,
        # and always the newest one, even alone over the byte budget (it is the one the user wants).
        batches = self._batches
        while batches and (count > self._max_messages or total > self._max_bytes):
            first = batches[0]
            cut = self._cut(first[2], count, total)
            if cut >= len(first[2]):
                batches.popleft()
                count -= len(first[2])
                total -= first[4]
                self.dropped += len(first[2])
                continue
            kept_sizes = None if first[3] is None else first[3][cut:]
            kept = first[2][cut:]
            batches[0] = (first[0], first[1], kept, kept_sizes, first[4] - sum(map(len, first[2][:cut])))
            count -= cut
            total -= first[4] - batches[0][4]
            self.dropped += cut
        if count > self._max_messages or total > self._max_bytes:
            # The lines alone are over the bounds: their newest ones only (at least one).
            cut = min(self._cut(lines, count, total), len(lines) - 1)
            count -= cut
            total -= sum(map(len, lines[:cut]))
            self.dropped += cut
            lines = lines[cut:]
            sizes = None if sizes is None else sizes[cut:]
            added = total
        batches.append((direction, time.time(), lines, sizes, added))
        self._count = count
        self._bytes = total

    def _cut(self, lines: list[bytes], count: int, total: int) -> int:
        """How many of the oldest `lines` must go for `count` messages of `total` bytes to fit the bounds."""
        cut = max(0, count - self._max_messages)
        over = total - self._max_bytes
        if over > 0:
            cut = max(cut, bisect.bisect_left(list(itertools.accumulate(map(len, lines))), over) + 1)
        return cut

    def __len__(self) -> int:
        return self._count

    def entries(self) -> list[TrafficEntry]:
        # The agent's thread records while Neovim's asks for the view: `list()` copies the deque in one C call
        # (atomic under the GIL), whereas iterating it in Python would fail when a record lands mid-way.
        return [
            TrafficEntry(direction, timestamp, line, len(line) if sizes is None else sizes[index])
            for direction, timestamp, lines, sizes, _ in list(self._batches)
            for index, line in enumerate(lines)
        ]


def describe(entry: TrafficEntry) -> dict[str, JsonValue]:
    record: dict[str, JsonValue] = {
        "direction": entry.direction,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(entry.timestamp))
        + f".{int(entry.timestamp * 1000) % 1000:03d}Z",
    }
    try:
        message: JsonValue = json.loads(entry.line)
        redacted = redact(message)
    except ValueError:
        record["raw"] = entry.line.decode("utf-8", "replace")
        record["size"] = entry.size
        record["truncated"] = entry.truncated
        return record
    except RecursionError:
        # Valid JSON too deep to parse or redact here: its text is not shown, since it could not be redacted.
        record["raw"] = f"(nested too deeply to show: {entry.size} bytes)"
        record["too_deep"] = True
        record["size"] = entry.size
        record["truncated"] = entry.truncated
        return record
    if isinstance(message, dict):
        record["method"] = message.get("method")
        record["id"] = message.get("id")
    record["message"] = redacted
    return record


def redact(value: JsonValue) -> JsonValue:
    """A copy of a JSON value with secret-looking values replaced.

    Three shapes carry secrets in ACP: `{"name": N, "value": V}` pairs (env variables of MCP servers and
    terminals, HTTP headers), plain objects with secret-looking keys, and `_meta` blobs agents use for auth.
    """
    if isinstance(value, list):
        return [redact(item) for item in value]
    if not isinstance(value, dict):
        return value
    name = value.get("name")
    if isinstance(name, str) and "value" in value and SECRET_NAME.search(name):
        return {**{k: redact(v) for k, v in value.items() if k != "value"}, "value": REDACTED}
    result: dict[str, JsonValue] = {}
    for key, item in value.items():
        if SECRET_NAME.search(key) and isinstance(item, str | int | float) and not isinstance(item, bool):
            result[key] = REDACTED
        elif key == "env" and isinstance(item, dict):
            result[key] = {k: (REDACTED if SECRET_NAME.search(k) else v) for k, v in item.items()}
        else:
            result[key] = redact(item)
    return result

"""A bounded record of the JSON-RPC traffic with one agent, with secrets redacted, for `:AcpLog`.

Recording must cost next to nothing while an agent streams 100,000 updates, so a line is only stored (as
bytes, with its direction and time); parsing, redaction and pretty-printing happen when someone looks.
Memory is bounded twice: by the number of messages and by their total size, and a single huge message (an
agent sending a whole file) is kept as its beginning only.
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from acp_nvim.jsonrpc import Direction

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


class TrafficLog:
    def __init__(self, max_messages: int = DEFAULT_MAX_MESSAGES, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        # Plain tuples (direction, time, line, size): a frozen dataclass per line cost more than everything
        # else the client does with a streamed update; `TrafficEntry`s are made when someone looks.
        self._entries: deque[tuple[Direction, float, bytes, int]] = deque()
        self._max_messages = max_messages
        self._max_bytes = max_bytes
        self._bytes = 0
        self.dropped = 0

    def record(self, direction: Direction, line: bytes) -> None:
        """The `on_message` hook of the connection."""
        size = len(line)
        kept = bytes(line) if size <= MAX_KEPT_PER_MESSAGE else bytes(line[:MAX_KEPT_PER_MESSAGE])
        entries = self._entries
        total = self._bytes + len(kept)
        # Room is made before the append, so a reader on another thread never sees more than the bounds. The
        # newest message always goes in, even alone over the byte budget: it is the one the user wants. Once
        # the log is full (any stream of more than max_messages) one message goes per message: no loop.
        if len(entries) >= self._max_messages and total - len(entries[0][2]) <= self._max_bytes:
            total -= len(entries.popleft()[2])
            self.dropped += 1
        else:
            while entries and (len(entries) >= self._max_messages or total > self._max_bytes):
                total -= len(entries.popleft()[2])
                self.dropped += 1
        entries.append((direction, time.time(), kept, size))
        self._bytes = total

    def __len__(self) -> int:
        return len(self._entries)

    def entries(self) -> list[TrafficEntry]:
        # The agent's thread records while Neovim's asks for the view: `list()` copies the deque in one C call
        # (atomic under the GIL), whereas iterating it in Python would fail when a record lands mid-way.
        return [TrafficEntry(*entry) for entry in list(self._entries)]

    def messages(self) -> list[dict[str, Any]]:
        """Every kept message as a redacted record: direction, ISO time, method (or id), the message."""
        return [describe(entry) for entry in self.entries()]

    def to_ndjson(self) -> str:
        return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in self.messages())


def describe(entry: TrafficEntry) -> dict[str, Any]:
    record: dict[str, Any] = {
        "direction": entry.direction,
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(entry.timestamp))
        + f".{int(entry.timestamp * 1000) % 1000:03d}Z",
    }
    try:
        message: Any = json.loads(entry.line)
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


def redact(value: Any) -> Any:
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
    result: dict[str, Any] = {}
    for key, item in value.items():
        if SECRET_NAME.search(key) and isinstance(item, str | int | float) and not isinstance(item, bool):
            result[key] = REDACTED
        elif key == "env" and isinstance(item, dict):
            result[key] = {k: (REDACTED if SECRET_NAME.search(k) else v) for k, v in item.items()}
        else:
            result[key] = redact(item)
    return result

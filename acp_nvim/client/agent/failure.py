"""Why a request to the agent failed, in one line for the user.

An agent's error message alone is rarely the cause: claude-agent-acp answers a failed `session/new` with
"Internal error", while its `data` says "Query closed before response received" and its stderr says why
("--dangerously-skip-permissions cannot be used with root/sudo privileges"). The line names all three: the
message, what the data adds (a string, or the text fields agents put there: `details`, `message`, ...), and
the stderr lines the agent wrote while the request was pending.
"""

from __future__ import annotations

import anyio
import msgspec

from acp_nvim.client.agent.process import StderrTail
from acp_nvim.jsonrpc import RpcError

# Text fields of an error's `data` that say what went wrong, in the order shown (agents differ: the
# TypeScript SDK's agents put `details`, others `message`, `error` or `reason`).
DATA_TEXT_FIELDS = ("details", "detail", "message", "error", "reason", "cause")
# The most of `data` (its JSON, when it has no text field) and of the stderr shown in the line.
MAX_DATA_CHARS = 300
STDERR_CAUSE_LINES = 3
# How long a failed request waits for the stderr line that explains it: stderr is another pipe than the
# answer, so the line written just before the answer may still be on its way.
STDERR_SETTLE_SECONDS = 0.1

_STDERR_NOTE = "agent stderr: "


def describe(err: RpcError) -> str:
    """The error's message, followed by what its data and the agent's stderr (see `note_stderr`) add."""
    parts = [err.message]
    detail = _data_text(err.data)
    if detail and detail not in err.message:
        parts.append(detail)
    text = ": ".join(parts)
    for note in getattr(err, "__notes__", ()):
        if isinstance(note, str) and note.startswith(_STDERR_NOTE):
            text += f" ({note})"
    return text


async def note_stderr(err: RpcError, stderr: StderrTail, mark: int) -> None:
    """Adds to `err` the stderr lines the agent wrote since `mark` (a `StderrTail.count`), waiting a moment
    for them when none came yet."""
    if stderr.count == mark:
        with anyio.move_on_after(STDERR_SETTLE_SECONDS):
            await stderr.wait_beyond(mark)
    lines = stderr.lines_since(mark, STDERR_CAUSE_LINES)
    if lines:
        err.add_note(_STDERR_NOTE + _clip(" | ".join(lines)))


def _data_text(data: object) -> str:
    if data is None:
        return ""
    if isinstance(data, str):
        return _clip(data.strip())
    if isinstance(data, dict):
        texts = [data[key].strip() for key in DATA_TEXT_FIELDS if isinstance(data.get(key), str)]
        texts = [text for text in texts if text]
        if texts:
            return _clip("; ".join(texts))
    try:
        encoded = msgspec.json.encode(data).decode()
    except (TypeError, msgspec.EncodeError):
        return ""
    return "" if encoded in ("{}", "[]") else _clip(encoded)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DATA_CHARS else text[:MAX_DATA_CHARS] + "…"

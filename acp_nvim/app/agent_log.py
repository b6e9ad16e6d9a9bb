"""The JSON-RPC traffic of each agent, for `:AcpLog`: one bounded, redacted `TrafficLog` per agent name.

The controller passes `on_messages=agent_log.record_hook(name)` to `AgentConnection.launch`; recording runs
on the anyio thread for every read of the agent's pipe (and every line sent), so it only appends (see
`TrafficLog`). `view` and `save` run on pynvim's
thread when the user asks, and do the expensive part there: parsing, redaction, pretty-printing. A log
survives a restart of its agent, so that after a crash the user can still read what led to it.
"""

from __future__ import annotations

import json
import os
import threading
import time

from acp_nvim.client.agent.connection import TrafficLinesHook
from acp_nvim.client.agent.traffic import TrafficEntry, TrafficLog, describe
from acp_nvim.jsonrpc import JsonValue

_lock = threading.Lock()
_logs: dict[str, TrafficLog] = {}
_current: str | None = None


def record_hook(agent_name: str) -> TrafficLinesHook:
    """The `on_messages` callable for the agent `agent_name`; makes it the current agent of `:AcpLog`."""
    global _current
    with _lock:
        traffic = _logs.get(agent_name)
        if traffic is None:
            traffic = _logs[agent_name] = TrafficLog()
        _current = agent_name

    # The log's own method, called for every read: no lock (a reader copies the deque in one C call, atomic
    # under the GIL) and no wrapper, each a cost per streamed update.
    return traffic.record_lines


def names() -> list[str]:
    with _lock:
        return sorted(_logs)


def current() -> str | None:
    return _current


def clear(agent_name: str | None = None) -> None:
    """Forget the traffic of one agent (all agents when None)."""
    global _current
    with _lock:
        if agent_name is None:
            _logs.clear()
            _current = None
        else:
            _logs.pop(agent_name, None)
            if _current == agent_name:
                _current = None


def _snapshot(agent_name: str | None) -> tuple[str | None, list[TrafficEntry], int]:
    with _lock:
        name = agent_name or _current
        traffic = _logs.get(name) if name else None
        if traffic is None:
            return name, [], 0
        return name, traffic.entries(), traffic.dropped


def header(entry: TrafficEntry, record: dict[str, JsonValue]) -> str:
    """`HH:MM:SS.mmm  >> method (id)`: `>>` what the editor sent, `<<` what the agent sent."""
    clock = time.strftime("%H:%M:%S", time.localtime(entry.timestamp))
    clock += f".{int(entry.timestamp * 1000) % 1000:03d}"
    arrow = ">>" if entry.direction == "out" else "<<"
    message = record.get("message")
    if "raw" in record:
        what = f"({'nested too deeply' if record.get('too_deep') else 'not JSON'}, {entry.size} bytes)"
    elif not isinstance(message, dict):
        what = "(not a JSON-RPC object)"
    elif isinstance(method := message.get("method"), str):
        what = method
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict) and isinstance(kind := update.get("sessionUpdate"), str):
            what += " " + kind
    elif "error" in message:
        what = "error"
    else:
        what = "result"
    request_id = message.get("id") if isinstance(message, dict) else None
    text = f"{clock}  {arrow} {what}"
    if request_id is not None:
        text += f" ({json.dumps(request_id)})"
    if entry.truncated and "raw" not in record:
        text += f" [first {len(entry.line)} of {entry.size} bytes]"
    return text


def _body(record: dict[str, JsonValue]) -> list[str]:
    if "raw" in record:
        raw = str(record["raw"])
        note = f"(cut: first {len(raw)} bytes shown)" if record.get("truncated") else None
        # A buffer line cannot hold a newline; the raw line came from a framing that had none, but be sure.
        lines = [raw.replace("\n", "\\n")]
        return [*lines, note] if note else lines
    # ensure_ascii=False: the user reads text as the agent wrote it; json escapes newlines inside strings.
    try:
        return json.dumps(record.get("message"), indent=2, ensure_ascii=False).split("\n")
    except RecursionError:
        # Indenting is done in Python, one frame per level; the compact encoder (in C) goes deeper.
        try:
            return [json.dumps(record.get("message"), ensure_ascii=False)]
        except RecursionError:
            return ["(nested too deeply to show)"]


def view(agent_name: str | None = None) -> dict[str, object]:
    """The log as buffer lines and one fold per message: `{name, lines, folds, count, dropped}`.

    `folds` are 1-based inclusive `[first, last]` line ranges; the first line of each is its header.
    """
    name, entries, dropped = _snapshot(agent_name)
    lines: list[str] = []
    folds: list[list[int]] = []
    if dropped:
        lines.append(f"({dropped} older messages dropped: the log keeps the most recent ones)")
    for entry in entries:
        record = describe(entry)
        first = len(lines) + 1
        lines.append(header(entry, record))
        lines.extend(_body(record))
        folds.append([first, len(lines)])
    return {"name": name, "lines": lines, "folds": folds, "count": len(entries), "dropped": dropped}


def save(agent_name: str | None, path: str) -> dict[str, object]:
    """Write the log as NDJSON (a redacted record per line) for a bug report: `{path, count}` or `{error}`."""
    name, entries, _ = _snapshot(agent_name)
    if name is None:
        return {"error": "no agent traffic recorded yet"}
    target = os.path.abspath(os.path.expanduser(path))
    try:
        with open(target, "w", encoding="utf-8") as out:
            for entry in entries:
                out.write(json.dumps(describe(entry), ensure_ascii=False) + "\n")
    except OSError as err:
        return {"error": f"cannot write {target}: {err.strerror or err}"}
    return {"path": target, "count": len(entries), "name": name}

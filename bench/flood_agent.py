"""A stdlib-only ACP agent that floods the client, for benchmarks.

The prompt's text picks the show: ``words N`` streams N one-word agent_message_chunk updates; ``mix N``
streams N updates mixing message chunks, thought chunks and (one in ten) tool-call updates. ``session/load``
replays a history of ``ACP_FLOOD_HISTORY`` updates (default 10,000) before answering. Every line is built
up front and written in large batches, so the agent itself costs as little as possible: the benchmark
measures the client.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

WRITE_BATCH = 512


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _update(session_id: str, update: dict[str, Any]) -> bytes:
    return _line(
        {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}}
    )


def _text(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def words(session_id: str, count: int) -> list[bytes]:
    return [_update(session_id, _text("agent_message_chunk", f"w{i} ")) for i in range(count)]


def mix(session_id: str, count: int) -> list[bytes]:
    lines: list[bytes] = []
    tool = 0
    for i in range(count):
        if i % 10 == 9:
            tool_id = f"tool-{tool // 2}"
            if tool % 2 == 0:
                update = {
                    "sessionUpdate": "tool_call",
                    "toolCallId": tool_id,
                    "title": f"Read file {tool}",
                    "kind": "read",
                    "status": "in_progress",
                }
            else:
                update = {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tool_id,
                    "status": "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
                }
            tool += 1
            lines.append(_update(session_id, update))
        elif i % 10 in (3, 4):
            lines.append(_update(session_id, _text("agent_thought_chunk", f"t{i} ")))
        else:
            lines.append(_update(session_id, _text("agent_message_chunk", f"w{i} ")))
    return lines


def history(session_id: str, count: int) -> list[bytes]:
    lines: list[bytes] = []
    turn = 0
    while len(lines) < count:
        lines.append(_update(session_id, _text("user_message_chunk", f"question {turn}")))
        lines.append(_update(session_id, _text("agent_thought_chunk", "thinking about it")))
        lines.append(
            _update(
                session_id,
                {
                    "sessionUpdate": "plan",
                    "entries": [{"content": f"step {turn}", "priority": "medium", "status": "completed"}],
                },
            )
        )
        tool_id = f"replay-tool-{turn}"
        lines.append(
            _update(
                session_id,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": tool_id,
                    "title": f"Edit file {turn}",
                    "kind": "edit",
                    "status": "pending",
                },
            )
        )
        lines.append(
            _update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": tool_id, "status": "completed"},
            )
        )
        for word in range(5):
            lines.append(_update(session_id, _text("agent_message_chunk", f"answer{turn}.{word} ")))
        turn += 1
    return lines[:count]


def _write(lines: list[bytes]) -> None:
    out = sys.stdout.buffer
    for start in range(0, len(lines), WRITE_BATCH):
        out.write(b"".join(lines[start : start + WRITE_BATCH]))
    out.flush()


def _respond(request_id: Any, result: Any) -> None:
    _write([_line({"jsonrpc": "2.0", "id": request_id, "result": result})])


def main() -> None:
    sessions = 0
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            _respond(
                request_id,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": True},
                    "agentInfo": {"name": "flood", "title": "Flood agent", "version": "1.0"},
                },
            )
        elif method == "session/new":
            sessions += 1
            _respond(request_id, {"sessionId": f"flood-{sessions}"})
        elif method == "session/load":
            _write(history(params["sessionId"], int(os.environ.get("ACP_FLOOD_HISTORY", "10000"))))
            _respond(request_id, {})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text")
            show, _, count = text.partition(" ")
            builder = mix if show == "mix" else words
            _write(builder(params["sessionId"], int(count or "10000")))
            _respond(request_id, {"stopReason": "end_turn"})
        elif request_id is not None and method is not None:
            _write(
                [
                    _line(
                        {
                            "jsonrpc": "2.0",
                            "id": request_id,
                            "error": {"code": -32601, "message": f"Method not found: {method}"},
                        }
                    )
                ]
            )


if __name__ == "__main__":
    main()

"""A fake model API on 127.0.0.1, streaming (SSE) the replies a test scripted, in the three dialects the real
agents speak: the OpenAI Responses API (codex), OpenAI chat/completions (opencode) and Gemini's
`streamGenerateContent` (gemini-cli).

The script (a JSON file, read afresh on every request so that a test can change it between turns) maps a key
to the steps of one conversation: the request whose last user message contains the key gets step N, where N
is how many tool results follow that message (so a tool call's result brings the next step). A step is
`{"text": ...}` (streamed in pieces), `{"tool": name, "args": {...}}` (a function call the model "decides",
then the turn's text; `"namespace"`: the namespace of a deferred tool), `{"search": query}` (codex's
`tool_search` of its deferred tools, which offers them from the next request on), or
`{"slow": ..., "pieces": n, "delay": s}` (a stream slow enough to be cancelled).
A request that names no key, or one that offers no tools when the step is a call (title and summary
requests), is answered with `default_text`.

Every request is logged (one JSON object a line). A request for anything but this server — a proxy request,
which the agents make since their HTTP(S)_PROXY points here — is logged as `"escape": true` and refused: the
test fails on any.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_TEXT = "Fake title"
# A slow step never streams longer than this, whatever the script says: the test's deadline stays bounded.
MAX_SLOW_SECONDS = 30.0


class Script:
    def __init__(self, path: Path) -> None:
        self.path = path

    def steps(self) -> dict[str, list[dict[str, Any]]]:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        steps = data.get("steps", {})
        return steps if isinstance(steps, dict) else {}

    def default_text(self) -> str:
        try:
            return str(json.loads(self.path.read_text()).get("default_text", DEFAULT_TEXT))
        except (OSError, ValueError):
            return DEFAULT_TEXT


def choose(script: Script, user_texts: list[tuple[str, int]], has_tools: bool) -> dict[str, Any]:
    """The step for a request: `user_texts` holds each user message's text with the number of tool results
    after it, oldest first."""
    steps = script.steps()
    for text, results in reversed(user_texts):
        for key, conversation in steps.items():
            if key in text:
                step = conversation[results] if results < len(conversation) else {"text": "Done."}
                if "tool" in step and not has_tools:
                    break
                return step
    return {"text": script.default_text()}


def pieces(text: str, count: int = 3) -> list[str]:
    """The text cut into `count` pieces (streamed one event each), whole words where it can."""
    words = text.split(" ")
    if len(words) < count:
        return [text]
    size = -(-len(words) // count)
    parts = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    return [p + (" " if i < len(parts) - 1 else "") for i, p in enumerate(parts)]


def stream_text(step: dict[str, Any]) -> Iterator[str]:
    """The text pieces of a text or slow step, slow ones spaced by their delay."""
    if "slow" in step:
        delay = float(step.get("delay", 0.2))
        count = int(step.get("pieces", 50))
        started = time.monotonic()
        for index in range(count):
            if time.monotonic() - started > MAX_SLOW_SECONDS:
                return
            yield f"{step['slow']} {index} "
            time.sleep(delay)
        return
    yield from pieces(str(step.get("text", "")))


# ---- the dialects ------------------------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part) for part in content)
    if isinstance(content, dict):
        return str(content.get("text", "")) if isinstance(content.get("text"), str) else ""
    return ""


# What answers a call of the model in the Responses API: a function's, a custom tool's, a shell's output, and
# codex's own search of its deferred tools (`tool_search`, its multi-agent tools among them).
OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output", "tool_search_output")


def responses_turns(body: dict[str, Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for item in body.get("input") or []:
        kind = item.get("type")
        if item.get("role") == "user" and kind in (None, "message"):
            turns.append((_text_of(item.get("content")), 0))
        elif kind in OUTPUTS and turns:
            text, results = turns[-1]
            turns[-1] = (text, results + 1)
    return turns


def chat_turns(body: dict[str, Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for message in body.get("messages") or []:
        if message.get("role") == "user":
            turns.append((_text_of(message.get("content")), 0))
        elif message.get("role") == "tool" and turns:
            text, results = turns[-1]
            turns[-1] = (text, results + 1)
    return turns


def gemini_turns(body: dict[str, Any]) -> list[tuple[str, int]]:
    turns: list[tuple[str, int]] = []
    for content in body.get("contents") or []:
        parts = content.get("parts") or []
        responses = sum(1 for part in parts if "functionResponse" in part)
        if responses and turns:
            text, results = turns[-1]
            turns[-1] = (text, results + responses)
        elif content.get("role") == "user":
            turns.append(("\n".join(str(p.get("text", "")) for p in parts if "text" in p), 0))
    return turns


class Handler(BaseHTTPRequestHandler):
    server: FakeModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass  # stdout belongs to the agent's protocol: the request log says it all

    def _escape(self) -> bool:
        host = self.headers.get("Host", "")
        local = host.split(":")[0] in ("127.0.0.1", "localhost")
        if self.command == "CONNECT" or self.path.startswith(("http://", "https://")) or not local:
            self.server.record({"method": self.command, "path": self.path, "host": host, "escape": True})
            self.send_response(403)
            self.send_header("Content-Length", "0")
            self.send_header("Connection", "close")
            self.end_headers()
            return True
        return False

    def do_CONNECT(self) -> None:
        self._escape()

    def do_GET(self) -> None:
        if self._escape():
            return
        self.server.record({"method": "GET", "path": self.path})
        if self.path.rstrip("/").endswith("/models"):
            self._json({"object": "list", "data": [], "models": []})
            return
        self._json({"error": {"message": f"not served: {self.path}"}}, 404)

    def do_POST(self) -> None:
        if self._escape():
            return
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        self.server.record({"method": "POST", "path": self.path, "body": body})
        script = self.server.script
        if path.endswith("/responses"):
            step = choose(script, responses_turns(body), bool(body.get("tools")))
            self._sse(self._responses_events(step))
        elif path.endswith("/chat/completions"):
            step = choose(script, chat_turns(body), bool(body.get("tools")))
            self._sse(self._chat_events(step), done=True)
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            step = choose(script, gemini_turns(body), bool(body.get("tools")))
            if ":generateContent" in path:
                self._json(self._gemini_whole(step))
            else:
                self._sse(self._gemini_events(step))
        elif path.endswith(":countTokens"):
            self._json({"totalTokens": 10})
        else:
            self._json({"error": {"message": f"not served: {self.path}"}}, 404)

    # ---- output ----

    def _json(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterator[Any], done: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            for event in events:
                name = event.get("type") if isinstance(event, dict) else None
                head = f"event: {name}\n" if name and "." in str(name) else ""
                self.wfile.write(f"{head}data: {json.dumps(event)}\n\n".encode())
                self.wfile.flush()
            if done:
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            # The agent stopped reading: its turn was cancelled.
            self.server.record({"method": "ABORT", "path": self.path})

    def _call_id(self) -> str:
        return f"call_{self.server.next_id()}"

    def _responses_events(self, step: dict[str, Any]) -> Iterator[dict[str, Any]]:
        rid = f"resp_{self.server.next_id()}"
        yield {"type": "response.created", "response": {"id": rid}}
        if "search" in step:
            # codex's `tool_search` (executed by codex itself): its deferred tools matching the query are
            # offered from the next request on.
            item: dict[str, Any] = {
                "type": "tool_search_call",
                "id": f"ts_{self.server.next_id()}",
                "call_id": self._call_id(),
                "status": "completed",
                "execution": "client",
                "arguments": {"query": step["search"]},
            }
            yield {"type": "response.output_item.added", "output_index": 0, "item": item}
            yield {"type": "response.output_item.done", "output_index": 0, "item": item}
        elif "tool" in step:
            call_id = self._call_id()
            if step.get("custom"):
                item = {
                    "type": "custom_tool_call",
                    "name": step["tool"],
                    "input": step["args"],
                    "call_id": call_id,
                    "status": "completed",
                }
            else:
                item = {
                    "type": "function_call",
                    "name": step["tool"],
                    "arguments": json.dumps(step["args"]),
                    "call_id": call_id,
                }
                if step.get("namespace"):
                    item["namespace"] = step["namespace"]
            yield {"type": "response.output_item.added", "output_index": 0, "item": item}
            yield {"type": "response.output_item.done", "output_index": 0, "item": item}
        else:
            mid = f"msg_{self.server.next_id()}"
            added = {"type": "message", "role": "assistant", "id": mid, "content": []}
            yield {"type": "response.output_item.added", "output_index": 0, "item": added}
            text = ""
            for piece in stream_text(step):
                text += piece
                yield {
                    "type": "response.output_text.delta",
                    "item_id": mid,
                    "output_index": 0,
                    "content_index": 0,
                    "delta": piece,
                }
            done = {
                "type": "message",
                "role": "assistant",
                "id": mid,
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
            yield {"type": "response.output_item.done", "output_index": 0, "item": done}
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        yield {"type": "response.completed", "response": {"id": rid, "usage": usage}}

    def _chat_events(self, step: dict[str, Any]) -> Iterator[dict[str, Any]]:
        cid = f"chatcmpl-{self.server.next_id()}"
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": "fake"}
        if "tool" in step:
            call = {
                "index": 0,
                "id": self._call_id(),
                "type": "function",
                "function": {"name": step["tool"], "arguments": json.dumps(step["args"])},
            }
            delta = {"role": "assistant", "content": None, "tool_calls": [call]}
            yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            finish = "tool_calls"
        else:
            first = True
            for piece in stream_text(step):
                delta = {"role": "assistant", "content": piece} if first else {"content": piece}
                first = False
                yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            finish = "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage}

    def _gemini_events(self, step: dict[str, Any]) -> Iterator[dict[str, Any]]:
        usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
        if "tool" in step:
            part = {"functionCall": {"name": step["tool"], "args": step["args"]}}
            content = {"role": "model", "parts": [part]}
            candidate = {"content": content, "finishReason": "STOP", "index": 0}
            yield {"candidates": [candidate], "usageMetadata": usage}
            return
        for piece in stream_text(step):
            content = {"role": "model", "parts": [{"text": piece}]}
            yield {"candidates": [{"content": content, "index": 0}]}
        last = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}
        yield {"candidates": [last], "usageMetadata": usage}

    def _gemini_whole(self, step: dict[str, Any]) -> dict[str, Any]:
        text = "".join(stream_text(step)) if "tool" not in step else ""
        content = {"role": "model", "parts": [{"text": text}]}
        return {"candidates": [{"content": content, "finishReason": "STOP", "index": 0}]}


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Path, log: Path) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = Script(script)
        self._log = log
        self._lock = threading.Lock()
        self._ids = 0

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def next_id(self) -> int:
        with self._lock:
            self._ids += 1
            return self._ids

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock, self._log.open("a") as log:
            log.write(json.dumps(entry) + "\n")


def read_log(log: Path) -> list[dict[str, Any]]:
    """The requests the server got, oldest first."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

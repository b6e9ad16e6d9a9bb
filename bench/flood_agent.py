"""A stdlib-only ACP agent that floods the client, for benchmarks.

The prompt's text picks the show:

- ``words N`` streams N one-word agent_message_chunk updates (the last one is ``w{N-1} ``);
- ``prose N`` streams the same N words as ordinary prose: a line break after every 12th word and a blank line
  after every 8th line (the last chunk is ``w{N-1} `` as for ``words``);
- ``mix N`` streams N updates mixing message chunks, thought chunks and (one in ten) tool-call updates, then
  one closing agent_message_chunk ``end `` (a tool-call update last would leave nothing unique to wait for);
- ``history N`` streams, as a live turn, the same N updates ``session/load`` replays;
- ``read PATH [LINE LIMIT]`` asks the client for ``fs/read_text_file`` and times the answer;
- ``write PATH LINE`` reads PATH from disk, changes line LINE (1-based) and asks for ``fs/write_text_file``;
- ``disk_edit PATH LINE`` edits the disk itself as claude-agent-acp does: a tool call (kind edit, PATH in its
  locations and rawInput) in progress, line LINE changed on disk 50 ms later, the call completed; it reports
  the wall-clock time just before sending "completed";
- ``term BYTES LIMIT`` runs a command printing BYTES bytes through ``terminal/create`` with
  ``outputByteLimit`` LIMIT, timing every ``terminal/output`` until it ends;
- ``create N DIR [KIND]`` (a burst, issue 26): N tool calls of kind KIND (default ``edit``), each naming a new
  file ``DIR/new-NNNNN.txt``, in progress in one write; the N files created on disk, then all N calls
  completed in one write; it reports the monotonic clock just before that write (``read``: the same calls,
  which the client's follower of edits leaves alone, the floor);
- ``touch N DIR`` creates N new files in DIR while its turn runs, then waits 0.3 s (the client's watch of the
  loaded buffers' folders settles) and ends the turn;
- ``terms N SECONDS`` sends N ``terminal/create`` of ``sleep SECONDS`` in one write and reads their answers,
  reporting when the first was sent and the last answered; the terminals are left running;
- ``writes N DIR`` sends N ``fs/write_text_file`` of new files ``DIR/w-NNNNN.txt`` (100 lines each) in one
  write and reads their answers, reporting when the first was sent and the last answered;
- ``toolout N BYTES [TAG]`` reports a command it runs itself (a tool call of kind ``execute``) whose output,
  lines growing to BYTES bytes, it resends whole in N ``tool_call_update``s (N = 1: the final output alone),
  then completes it with exit code 0 and streams ``toolout-end TAG ``.

It advertises ``loadSession`` and ``session/list``: the list (of any directory, the one asked for) holds
``ACP_FLOOD_STORED`` sessions (default 20) ``stored-1``, ``stored-2``, ... so that each of several loads in
one Neovim opens a new chat, and ``session/load`` of any of them replays, with the loaded session's id, the
``history N`` updates for N = ``ACP_FLOOD_HISTORY`` (default 10,000) before answering.
Every line is built up front and written in large batches, so the agent itself costs as little as possible:
the benchmark measures the client. The fs and terminal shows time their requests from here (the agent's side
of the wire, the same for every client) and append one JSON object per show to the file named by
``ACP_FLOOD_REPORT``; they also report the ``clientCapabilities`` of ``initialize`` there.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import time
from collections.abc import Callable
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


@functools.cache
def _template(session_id: str, kind: str) -> tuple[bytes, bytes]:
    head, tail = _update(session_id, _text(kind, "\0")).split(b'"\\u0000"')
    return head, tail


def _text_update(session_id: str, kind: str, text: str) -> bytes:
    """The same bytes as `_update(session_id, _text(kind, text))`, from a template: json.dumps of a whole
    message per line made the agent, not the client, most of the floor (1 s of 2.8 s for 100,000 words)."""
    head, tail = _template(session_id, kind)
    return b"".join((head, json.dumps(text).encode(), tail))


def _text_updates(session_id: str, kind: str, texts: list[str]) -> list[bytes]:
    head, tail = _template(session_id, kind)
    dumps = json.dumps
    return [b"".join((head, dumps(text).encode(), tail)) for text in texts]


def words(session_id: str, count: int) -> list[bytes]:
    return _text_updates(session_id, "agent_message_chunk", [f"w{i} " for i in range(count)])


def markdown_words(session_id: str, count: int) -> list[bytes]:
    """`words N` with markdown in it (every 8th word bold, every 32nd code): plain text is drawn without a
    parse, so a stream the highlighting is to be measured on must give it something to parse."""
    texts = []
    for i in range(count):
        if i == count - 1 or i % 8 != 3:
            texts.append(f"w{i} ")
        elif i % 32 == 3:
            texts.append(f"`w{i}` ")
        else:
            texts.append(f"**w{i}** ")
    return _text_updates(session_id, "agent_message_chunk", texts)


def prose(session_id: str, count: int) -> list[bytes]:
    texts = []
    for i in range(count):
        end = " " if i == count - 1 or i % 12 != 11 else ("\n\n" if i % 96 == 95 else "\n")
        texts.append(f"w{i}{end}")
    return _text_updates(session_id, "agent_message_chunk", texts)


def big_text(session_id: str, mib: int) -> list[bytes]:
    """`bigtext N`: one message of N MiB, in chunks of 64 KiB of 80-character lines (the host's memory
    after such a chat is closed is measured by bench/memory.py); it ends with `final_text`'s words."""
    line = "x" * 79 + "\n"
    chunk = line * (64 * 1024 // len(line))
    count = max(1, mib * 16)
    texts = [chunk] * (count - 1) + [chunk + final_text("bigtext", mib)]
    return _text_updates(session_id, "agent_message_chunk", texts)


def final_text(show: str, count: int) -> str:
    """The text of the last update of a show: what a client waits for to know it rendered everything."""
    if show == "mix":
        return "end "
    if show == "history":
        turn, word = divmod(count - 1, 10)
        # Each history turn is 5 updates of other kinds, then 5 message words.
        if word < 5:
            raise ValueError("a history must end on a message word: make its length a multiple of 10")
        return f"answer{turn}.{word - 5} "
    return f"w{count - 1} "


def mix(session_id: str, count: int) -> list[bytes]:
    lines: list[bytes] = []
    tool = 0
    for i in range(count):
        if i % 10 == 9:
            tool_id = f"tool-{tool // 2}"
            update: dict[str, Any]
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
            lines.append(_text_update(session_id, "agent_thought_chunk", f"t{i} "))
        else:
            lines.append(_text_update(session_id, "agent_message_chunk", f"w{i} "))
    lines.append(_update(session_id, _text("agent_message_chunk", final_text("mix", count))))
    return lines


def history(session_id: str, count: int) -> list[bytes]:
    lines: list[bytes] = []
    turn = 0
    while len(lines) < count:
        lines.append(_text_update(session_id, "user_message_chunk", f"question {turn}"))
        lines.append(_text_update(session_id, "agent_thought_chunk", "thinking about it"))
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
            lines.append(_text_update(session_id, "agent_message_chunk", f"answer{turn}.{word} "))
        turn += 1
    return lines[:count]


def stored_sessions(cwd: str) -> list[dict[str, Any]]:
    """What ``session/list`` answers: sessions whose load replays a `history` of ACP_FLOOD_HISTORY updates."""
    count = int(os.environ.get("ACP_FLOOD_HISTORY", "10000"))
    return [
        {
            "sessionId": f"stored-{k}",
            "cwd": cwd,
            "title": f"Flood history {k} ({count:,} updates)",
            "updatedAt": f"2025-01-01T{k % 24:02d}:00:00Z",
        }
        for k in range(1, int(os.environ.get("ACP_FLOOD_STORED", "20")) + 1)
    ]


def _write(lines: list[bytes]) -> None:
    out = sys.stdout.buffer
    for start in range(0, len(lines), WRITE_BATCH):
        out.write(b"".join(lines[start : start + WRITE_BATCH]))
    out.flush()


def _respond(request_id: Any, result: Any) -> None:
    _write([_line({"jsonrpc": "2.0", "id": request_id, "result": result})])


class Client:
    """The agent's side of its own requests to the client (fs, terminal), one at a time."""

    def __init__(self) -> None:
        self._next_id = 0
        self.capabilities: dict[str, Any] = {}

    def call(self, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Sends a request and reads until its answer; returns (the answer message, seconds it took)."""
        self._next_id += 1
        request_id = f"flood-{self._next_id}"
        started = time.perf_counter()
        _write([_line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})])
        for raw in sys.stdin.buffer:
            if not raw.strip():
                continue
            message = json.loads(raw)
            if message.get("id") == request_id and "method" not in message:
                return message, time.perf_counter() - started
            # A cancel or another notification in between is not expected in a benchmark: ignored.
        raise SystemExit(0)


def _report(entry: dict[str, Any]) -> None:
    path = os.environ.get("ACP_FLOOD_REPORT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")


def _error_text(answer: dict[str, Any]) -> str | None:
    error = answer.get("error")
    return None if error is None else str(error.get("message", error))


def show_read(client: Client, session_id: str, args: list[str]) -> None:
    params: dict[str, Any] = {"sessionId": session_id, "path": args[0]}
    if len(args) >= 3:
        params["line"], params["limit"] = int(args[1]), int(args[2])
    answer, seconds = client.call("fs/read_text_file", params)
    content = (answer.get("result") or {}).get("content", "")
    _report({"show": "read", "seconds": seconds, "chars": len(content), "error": _error_text(answer)})


def show_write(client: Client, session_id: str, args: list[str]) -> None:
    path, line = args[0], int(args[1])
    with open(path, encoding="utf-8") as source:
        lines = source.read().split("\n")
    lines[line - 1] = lines[line - 1] + " (changed by the agent)"
    params = {"sessionId": session_id, "path": path, "content": "\n".join(lines)}
    answer, seconds = client.call("fs/write_text_file", params)
    _report({"show": "write", "seconds": seconds, "error": _error_text(answer)})


TOOLOUT_END = "toolout-end "


def show_toolout(session_id: str, args: list[str]) -> None:
    """Writes each update as it is built: 1,000 resends of up to 1 MB are 500 MB, never held at once."""
    times, size, tag = int(args[0]), int(args[1]), args[2] if len(args) > 2 else ""
    line = "0123456789abcdefghijklmnopqrstuvwxyz" * 2
    lines = [f"{n:07d} {line}\n" for n in range(size // (len(line) + 9) + 1)]
    output = "".join(lines)[:size]
    # The text is ASCII with no character JSON escapes but the newline: a prefix of it escapes to a prefix of
    # the escaped whole, so each update is a slice of one string, not a json.dumps of up to 1 MB.
    escaped = json.dumps(output)[1:-1]
    tool_id = f"toolout-{time.monotonic_ns()}"
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": tool_id,
        "title": "build",
        "kind": "execute",
        "status": "in_progress",
        "rawInput": {"command": ["bash", "-lc", "make build"]},
    }
    _write([_update(session_id, start)])
    head, tail = _update(
        session_id,
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": tool_id,
            "content": [{"type": "content", "content": {"type": "text", "text": "\0"}}],
        },
    ).split(b"\\u0000")
    out = sys.stdout.buffer
    for n in range(1, times + 1):
        cut = len(output) * n // times
        escaped_cut = cut + output.count("\n", 0, cut)
        out.write(b"".join((head, escaped[:escaped_cut].encode(), tail)))
    done = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": tool_id,
        "status": "completed",
        "rawOutput": {"exit_code": 0},
    }
    _write(
        [_update(session_id, done), _update(session_id, _text("agent_message_chunk", f"{TOOLOUT_END}{tag} "))]
    )


def show_disk_edit(session_id: str, args: list[str]) -> None:
    path, line = args[0], int(args[1])
    call_id = f"disk-edit-{time.monotonic_ns()}"
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": f"Edit {os.path.basename(path)}",
        "kind": "edit",
        "status": "in_progress",
        "locations": [{"path": path}],
        "rawInput": {"file_path": path},
    }
    _write([_update(session_id, start)])
    # The client snapshots the file when the call starts; an agent asking permission first leaves it the time.
    time.sleep(0.05)
    with open(path, encoding="utf-8") as source:
        lines = source.read().split("\n")
    lines[line - 1] = lines[line - 1] + " (changed by the agent on disk)"
    with open(path, "w", encoding="utf-8") as target:
        target.write("\n".join(lines))
    completed_at = time.time()
    _write(
        [
            _update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"},
            )
        ]
    )
    _report({"show": "disk_edit", "completed_at": completed_at})


def show_term(client: Client, session_id: str, args: list[str]) -> None:
    size, limit = int(args[0]), int(args[1])
    # 64-byte lines of text: what a chatty build prints, and cheap for the shell to produce.
    script = f"yes 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxy' | head -c {size}"
    created, create_seconds = client.call(
        "terminal/create",
        {"sessionId": session_id, "command": "sh", "args": ["-c", script], "outputByteLimit": limit},
    )
    if "error" in created:
        _report({"show": "term", "error": _error_text(created)})
        return
    terminal_id = created["result"]["terminalId"]
    polls: list[float] = []
    largest = 0
    while True:
        answer, seconds = client.call("terminal/output", {"sessionId": session_id, "terminalId": terminal_id})
        polls.append(seconds)
        result = answer.get("result") or {}
        largest = max(largest, len(result.get("output", "")))
        if result.get("exitStatus") is not None or "error" in answer:
            break
        time.sleep(0.05)
    client.call("terminal/release", {"sessionId": session_id, "terminalId": terminal_id})
    _report(
        {
            "show": "term",
            "create_seconds": create_seconds,
            "output_seconds": polls,
            "largest_output": largest,
            "error": _error_text(answer),
        }
    )


def show_create(session_id: str, args: list[str]) -> None:
    count, folder = int(args[0]), args[1]
    kind = args[2] if len(args) > 2 else "edit"
    stamp = time.monotonic_ns()
    paths = [os.path.join(folder, f"new-{i:05d}.txt") for i in range(count)]
    ids = [f"create-{stamp}-{i}" for i in range(count)]
    _write(
        [
            _update(
                session_id,
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": f"Write {os.path.basename(path)}",
                    "kind": kind,
                    "status": "in_progress",
                    "locations": [{"path": path}],
                    "rawInput": {"file_path": path},
                },
            )
            for call_id, path in zip(ids, paths, strict=True)
        ]
    )
    # The client snapshots each file ("absent") when its call starts: an agent asking permission first leaves
    # it the time.
    time.sleep(0.2 + count / 10000)
    for i, path in enumerate(paths):
        with open(path, "w", encoding="utf-8") as target:
            target.write(f"file {i}\nwritten by the agent\n")
    completed_ns = time.monotonic_ns()
    _write(
        [
            _update(
                session_id,
                {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "completed"},
            )
            for call_id in ids
        ]
    )
    _report({"show": "create", "kind": kind, "count": count, "completed_ns": completed_ns})


def show_touch(session_id: str, args: list[str]) -> None:
    count, folder = int(args[0]), args[1]
    started_ns = time.monotonic_ns()
    for i in range(count):
        with open(os.path.join(folder, f"touched-{started_ns}-{i:05d}.txt"), "w", encoding="utf-8") as target:
            target.write("new\n")
    written_ns = time.monotonic_ns()
    time.sleep(0.3)
    _report({"show": "touch", "started_ns": started_ns, "written_ns": written_ns})


def _requests_at_once(method: str, params: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sends one request per params in one write and reads until each is answered; the answers, in order."""
    stamp = time.monotonic_ns()
    ids = [f"{method}-{stamp}-{i}" for i in range(len(params))]
    _write(
        [
            _line({"jsonrpc": "2.0", "id": request_id, "method": method, "params": p})
            for request_id, p in zip(ids, params, strict=True)
        ]
    )
    answers: dict[str, dict[str, Any]] = {}
    wanted = set(ids)
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        if message.get("id") in wanted and "method" not in message:
            answers[message["id"]] = message
            if len(answers) == len(ids):
                break
    return [answers[request_id] for request_id in ids if request_id in answers]


def _errors(answers: list[dict[str, Any]]) -> list[str]:
    return [_error_text(a) or "error" for a in answers if "error" in a]


def show_writes(session_id: str, args: list[str]) -> None:
    """N `fs/write_text_file` at once, as an agent writing a project's files in parallel sends them."""
    count, folder = int(args[0]), args[1]
    text = "".join(f"line {n} of a file the agent wrote\n" for n in range(100))
    params = [
        {"sessionId": session_id, "path": os.path.join(folder, f"w-{i:05d}.txt"), "content": text}
        for i in range(count)
    ]
    sent_ns = time.monotonic_ns()
    errors = _errors(_requests_at_once("fs/write_text_file", params))
    _report({"show": "writes", "sent_ns": sent_ns, "answered_ns": time.monotonic_ns(), "errors": errors})


def show_terms(session_id: str, args: list[str]) -> None:
    """N `terminal/create` written at once, as an agent running commands in parallel sends them."""
    count, seconds = int(args[0]), args[1]
    params = [{"sessionId": session_id, "command": "sleep", "args": [seconds]} for _ in range(count)]
    sent_ns = time.monotonic_ns()
    answers = _requests_at_once("terminal/create", params)
    errors = _errors(answers)
    terminals = [a["result"]["terminalId"] for a in answers if "result" in a]
    _report(
        {
            "show": "terms",
            "sent_ns": sent_ns,
            "answered_ns": time.monotonic_ns(),
            "terminals": terminals,
            "errors": errors,
        }
    )


# The shows that need only the session and their words.
SHOWS: dict[str, Callable[[str, list[str]], None]] = {
    "toolout": show_toolout,
    "disk_edit": show_disk_edit,
    "create": show_create,
    "touch": show_touch,
    "terms": show_terms,
    "writes": show_writes,
}


def main() -> None:
    sessions = 0
    client = Client()
    for raw in sys.stdin.buffer:
        if not raw.strip():
            continue
        message = json.loads(raw)
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        if method == "initialize":
            client.capabilities = params.get("clientCapabilities") or {}
            _report({"show": "initialize", "client_capabilities": client.capabilities})
            _respond(
                request_id,
                {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
                    "agentInfo": {"name": "flood", "title": "Flood agent", "version": "1.0"},
                },
            )
        elif method == "session/new":
            sessions += 1
            _respond(request_id, {"sessionId": f"flood-{sessions}"})
        elif method == "session/list":
            _respond(request_id, {"sessions": stored_sessions(params.get("cwd") or os.getcwd())})
        elif method == "session/load":
            _write(history(params["sessionId"], int(os.environ.get("ACP_FLOOD_HISTORY", "10000"))))
            _respond(request_id, {})
        elif method == "session/prompt":
            text = " ".join(b.get("text", "") for b in params.get("prompt", []) if b.get("type") == "text")
            show, *args = text.split()
            session_id = params["sessionId"]
            if show == "read":
                show_read(client, session_id, args)
            elif show == "write":
                show_write(client, session_id, args)
            elif show == "term":
                show_term(client, session_id, args)
            elif show in SHOWS:
                SHOWS[show](session_id, args)
            else:
                received = time.monotonic_ns()
                builder = {
                    "mix": mix,
                    "history": history,
                    "prose": prose,
                    "mdwords": markdown_words,
                    "bigtext": big_text,
                }.get(show, words)
                lines = builder(session_id, int(args[0]) if args else 10000)
                first_sent = time.monotonic_ns()
                _write(lines)
                # After the stream, so that the file costs the stream nothing; before the answer, so that the
                # bench finds it once the turn has ended. Monotonic: the clock of Neovim's vim.uv.hrtime.
                _report({"show": "stream", "prompt_received_ns": received, "first_sent_ns": first_sent})
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

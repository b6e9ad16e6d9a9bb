"""A hostile ACP agent for reliability tests: standard library only, so nothing in the way of the bytes.

Run: ``python tests/agents/hostile_agent.py``. It answers ``initialize`` and ``session/new`` like a valid
agent; each ``session/prompt`` performs the *show* named by the prompt text (or ``HOSTILE_SHOW`` when the text
names none), then streams a valid agent_message_chunk ``"survived"`` and answers ``end_turn``.

Shows (sizes from the environment, defaults in brackets):
- ``garbage``            HOSTILE_GARBAGE lines [1000] that are not JSON, a third of them not UTF-8
- ``huge``               one session/update line of HOSTILE_HUGE_MB MiB [100] (a JSON string), then more
- ``notjsonrpc``         valid JSON that is not JSON-RPC: arrays, scalars, objects without method, bad ids
- ``bogus-responses``    answers to ids never sent, two requests sharing one id, a second answer to the prompt
- ``badparams``          requests and session/updates with wrong param types or missing fields
- ``unknown``            unknown methods and notifications, ``_``-prefixed and not
- ``readflood``          HOSTILE_FLOOD [10000] fs/read_text_file requests at once
- ``stormunknownsession`` HOSTILE_STORM [100000] session/updates for a session that does not exist
- ``stderr``             HOSTILE_STDERR_MB MiB [100] on stderr (lines, then one endless line)
- ``badanswer``          answers the prompt with a result of the wrong shape (no "survived")
- ``exit``               a line on stderr, then exit code 3 in the middle of the turn
- ``sigkill``            a line on stderr, then SIGKILL to itself
- ``hang``               starts a child in its group, ignores SIGTERM and stdin EOF, never answers again
- ``hugechunk``          an agent_message_chunk of HOSTILE_HUGECHUNK_MB MiB [50], a thought, a tool call
                         with a diff, text content and rawOutput as large; a small chunk after each; then
                         2.5 MiB in 64 KiB chunks of one message, and a message after it
- ``toolstorm``          HOSTILE_TOOLSTORM [100000] tool_call + tool_call_update (completed) pairs in one turn
                         (a second storm numbers its calls on from the first's)
- ``deepnest``           requests and notifications nested HOSTILE_DEPTHS deep [1000,100000] (and 100 deep)
- ``oversized``          requests of HOSTILE_OVERSIZED_MB MiB [65], id first and id after the bulk
- ``permissionunknown``  a permission request and an elicitation (and with HOSTILE_GHOST_FS=1 an
  fs/read_text_file) for a session that does not exist
``HOSTILE_INIT=mute`` makes it never answer ``initialize``. Outside a turn, the request
``_hostile/oversized_answer`` is answered with a result of HOSTILE_OVERSIZED_MB MiB.

Journal (file named by ``HOSTILE_JOURNAL``), one JSON object per line:
- ``{"event": "sent", "show": S, "id": ID, "expect": "result" | CODE, "path"?: P}`` for each request it sent
  that deserves an answer (``expect`` is the JSON-RPC error code the answer must carry, or "result");
- ``{"event": "answer", "id": ID, "result"?: R, "error"?: E}`` for every response the client sent it,
  including the ``id: null`` errors the client sends back for lines it could not read;
- ``{"event": "expect_null", "show": S, "code": CODE, "count": N}``: N answers with id null and that code
  are due for the show's unreadable lines;
- ``{"event": "show_done", "show": S, "missing": [...]}`` once the show's answers are in (or timed out).
Every show ends with a *fence*: a request whose answer, written by the client after everything the show
provoked, tells the agent its journal is complete before it ends the turn.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from typing import Any

SESSION_ID = "hostile-session"
ANSWER_TIMEOUT = 120.0

_out = sys.stdout.buffer
_out_lock = threading.Lock()


def write_raw(data: bytes) -> None:
    with _out_lock:
        _out.write(data)
        _out.flush()


def encode(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def send(message: Any) -> None:
    write_raw(encode(message))


def env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


def chunk_message(text: str, session_id: str = SESSION_ID) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": session_id,
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
        },
    }


class Journal:
    def __init__(self, path: str | None) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115 - lives as long as we do
        self._lock = threading.Lock()

    def write(self, entry: dict[str, Any]) -> None:
        if self._file is None:
            return
        with self._lock:
            self._file.write(json.dumps(entry) + "\n")
            self._file.flush()


class Agent:
    def __init__(self) -> None:
        self.journal = Journal(os.environ.get("HOSTILE_JOURNAL"))
        self.inbox: list[dict[str, Any] | None] = []
        self.inbox_ready = threading.Condition()
        self.answers: dict[str, int] = {}  # json-encoded id -> answers received
        self.answered = threading.Condition()
        self.replies: dict[str, dict[str, Any]] = {}  # json-encoded id -> the last response to it
        self.next_id = 1
        self.show = "none"
        self.ignore_eof = False
        self.client_capabilities: dict[str, Any] = {}
        self.tool_calls_stormed = 0

    # ---- reading (its own thread, so the client's answers are taken in while a show writes) -----------

    def read_loop(self) -> None:
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
            except ValueError:
                self.journal.write({"event": "unreadable_from_client", "line": line[:200].decode("latin-1")})
                continue
            if isinstance(message, dict) and "method" in message:
                with self.inbox_ready:
                    self.inbox.append(message)
                    self.inbox_ready.notify()
            elif isinstance(message, dict):
                entry: dict[str, Any] = {"event": "answer", "id": message.get("id")}
                for key in ("result", "error"):
                    if key in message:
                        entry[key] = message[key]
                self.journal.write(entry)
                with self.answered:
                    key = json.dumps(message.get("id"))
                    self.replies[key] = message
                    self.answers[key] = self.answers.get(key, 0) + 1
                    self.answered.notify_all()
        if self.ignore_eof:
            return
        with self.inbox_ready:
            self.inbox.append(None)
            self.inbox_ready.notify()

    def next_message(self) -> dict[str, Any] | None:
        with self.inbox_ready:
            while not self.inbox:
                self.inbox_ready.wait()
            return self.inbox.pop(0)

    # ---- requests of our own --------------------------------------------------------------------------

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def request(
        self,
        method: str,
        params: Any = None,
        *,
        expect: str | int = "result",
        request_id: Any = None,
        **extra: Any,
    ) -> Any:
        """Send a request the client must answer; returns its id. `params=None` sends none at all."""
        if request_id is None:
            request_id = self.new_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.journal.write({"event": "sent", "show": self.show, "id": request_id, "expect": expect, **extra})
        send(message)
        return request_id

    def read_request(self, path: str, session_id: str = SESSION_ID, **kwargs: Any) -> Any:
        params = {"sessionId": session_id, "path": path}
        return self.request("fs/read_text_file", params, path=path, **kwargs)

    def wait_answers(self, ids: list[Any]) -> list[Any]:
        """Wait until every id has as many answers as it appears in `ids`; returns those still missing."""
        wanted: dict[str, int] = {}
        for request_id in ids:
            key = json.dumps(request_id)
            wanted[key] = wanted.get(key, 0) + 1
        deadline = time.monotonic() + ANSWER_TIMEOUT
        with self.answered:
            while True:
                missing = [k for k, n in wanted.items() if self.answers.get(k, 0) < n]
                left = deadline - time.monotonic()
                if not missing or left <= 0:
                    return [json.loads(k) for k in missing]
                self.answered.wait(left)

    def notify(self, method: str, params: Any) -> None:
        send({"jsonrpc": "2.0", "method": method, "params": params})

    def chunk(self, text: str, session_id: str = SESSION_ID) -> None:
        send(chunk_message(text, session_id))

    # ---- the main loop --------------------------------------------------------------------------------

    def serve(self) -> None:
        threading.Thread(target=self.read_loop, daemon=True).start()
        while True:
            message = self.next_message()
            if message is None:
                return
            method = message.get("method")
            request_id = message.get("id")
            if "id" not in message:
                continue  # session/cancel and friends: nothing to do for a hostile agent
            if method == "initialize":
                if os.environ.get("HOSTILE_INIT") == "mute":
                    continue
                self.client_capabilities = (message.get("params") or {}).get("clientCapabilities") or {}
                send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "result": {
                            "protocolVersion": 1,
                            "agentCapabilities": {},
                            "agentInfo": {"name": "hostile", "title": "Hostile", "version": "6.6.6"},
                        },
                    }
                )
            elif method == "session/new":
                # The answer and a first update in one write: the client reads both before the caller of
                # session/new has the id, and must still deliver the update.
                answer = {"jsonrpc": "2.0", "id": request_id, "result": {"sessionId": SESSION_ID}}
                write_raw(encode(answer) + encode(chunk_message("hello ")))
            elif method == "session/prompt":
                self.prompt(request_id, message.get("params") or {})
            elif method == "_hostile/oversized_answer":
                answer_oversized(request_id)
            else:
                send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})

    def prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        blocks = params.get("prompt") or [{}]
        text = (blocks[0].get("text") or "").strip()
        show = text if text in SHOWS else os.environ.get("HOSTILE_SHOW", "none")
        self.show = show
        ids = SHOWS[show](self) if show in SHOWS else []
        ids.append(self.read_request("/fence"))
        missing = self.wait_answers(ids)
        self.journal.write({"event": "show_done", "show": show, "missing": missing})
        if show == "badanswer":
            send({"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": 42}})
            return
        self.chunk("survived")
        answer = {"jsonrpc": "2.0", "id": request_id, "result": {"stopReason": "end_turn"}}
        send(answer)
        if show == "bogus-responses":
            # The same answer again: the client has already forgotten this id.
            send(answer)


# ---- the shows ----------------------------------------------------------------------------------------


def show_garbage(agent: Agent) -> list[Any]:
    rng = random.Random(7)
    count = env_int("HOSTILE_GARBAGE", 1000)
    lines = []
    for index in range(count):
        if index % 3 == 0:
            # \xff never occurs in UTF-8.
            body = bytes(rng.choice([b for b in range(256) if b != 0x0A]) for _ in range(rng.randint(1, 80)))
            lines.append(b"\xff" + body)
        elif index % 3 == 1:
            lines.append(
                b"#" + "".join(chr(rng.randint(32, 0x2FF)) for _ in range(rng.randint(0, 80))).encode()
            )
        else:
            lines.append(
                b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":' + str(index).encode()
            )
    ids = [agent.read_request("/before-garbage")]
    write_raw(b"\n".join(lines) + b"\n")
    agent.journal.write({"event": "expect_null", "show": agent.show, "code": -32700, "count": count})
    return ids


def show_huge(agent: Agent) -> list[Any]:
    size = env_int("HOSTILE_HUGE_MB", 100) << 20
    head = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
        + SESSION_ID.encode()
        + b'","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"'
    )
    block = b"x" * (1 << 20)
    with _out_lock:
        _out.write(head)
        written = 0
        while written < size:
            piece = block[: min(len(block), size - written)]
            _out.write(piece)
            written += len(piece)
        _out.write(b'"}}}}\n')
        _out.flush()
    # No id before the bulk: whether it is a request cannot be known, so it is answered under null.
    agent.journal.write({"event": "expect_null", "show": agent.show, "code": -32600, "count": 1})
    agent.chunk("after the huge line")
    return [agent.read_request("/after-huge")]


NOT_JSONRPC_WITHOUT_ID = [
    b"[1,2,3]",
    b"42",
    b'"hello"',
    b"null",
    b"true",
    b"{}",
    b'{"foo":"bar"}',
    b'{"jsonrpc":"2.0"}',
    b'[{"jsonrpc":"2.0","id":"batch","method":"fs/read_text_file","params":{}}]',
    b'{"jsonrpc":"2.0","id":true,"method":"fs/read_text_file"}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"fs/read_text_file"}',
    b'{"jsonrpc":"2.0","id":{"x":1},"method":"fs/read_text_file"}',
]


def show_notjsonrpc(agent: Agent) -> list[Any]:
    write_raw(b"\n".join(NOT_JSONRPC_WITHOUT_ID) + b"\n")
    agent.journal.write(
        {"event": "expect_null", "show": agent.show, "code": -32600, "count": len(NOT_JSONRPC_WITHOUT_ID)}
    )
    ids: list[Any] = []
    # Invalid, but with an id the client can echo: each is answered under its own id.
    for request_id, line, code in (
        ("nj-1", b'{"id":"nj-1"}', -32600),
        ("nj-2", b'{"jsonrpc":"2.0","id":"nj-2","method":42}', -32600),
        ("nj-3", b'{"jsonrpc":"2.0","id":"nj-3","method":"fs/read_text_file","params":"x"}', -32602),
    ):
        agent.journal.write({"event": "sent", "show": agent.show, "id": request_id, "expect": code})
        write_raw(line + b"\n")
        ids.append(request_id)
    return ids


def show_bogus_responses(agent: Agent) -> list[Any]:
    for message in (
        {"jsonrpc": "2.0", "id": 987654, "result": {}},
        {"jsonrpc": "2.0", "id": "never-sent", "error": {"code": 1, "message": "what request?"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "I am confused"}},
        {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}},  # initialize, answered long ago
        {"jsonrpc": "2.0", "id": 31337, "result": None},
        {"jsonrpc": "2.0", "id": 31338, "error": "not an error object"},
        {"jsonrpc": "2.0", "id": 31339, "result": 1, "error": {"code": 2, "message": "both"}},
    ):
        send(message)
    # Two requests in flight under one id: each still gets its answer.
    return [
        agent.read_request("/dup-a", request_id="dup"),
        agent.read_request("/dup-b", request_id="dup"),
    ]


def show_badparams(agent: Agent) -> list[Any]:
    sid = SESSION_ID
    ids = [
        agent.request("fs/read_text_file", {"sessionId": sid, "path": 42}, expect=-32602),
        agent.request(
            "session/request_permission",
            {"sessionId": sid, "toolCall": {"toolCallId": "t1", "title": "rm -rf /"}},
            expect=-32602,
        ),
        agent.request("fs/read_text_file", None, expect=-32602),
        agent.request("fs/read_text_file", [1, 2], expect=-32602),
        agent.request("fs/read_text_file", {"sessionId": sid, "path": "/x", "line": "ten"}, expect=-32602),
        agent.request("fs/read_text_file", {"sessionId": 7, "path": "/x"}, expect=-32602),
        agent.request(
            "session/request_permission",
            {"sessionId": sid, "toolCall": {"toolCallId": "t2"}, "options": "allow"},
            expect=-32602,
        ),
        # Not advertised by the test editor.
        agent.request("fs/write_text_file", {"sessionId": sid, "path": "/x", "content": "y"}, expect=-32601),
        # Valid ones in between: served as usual.
        agent.read_request("/valid-read"),
        agent.request(
            "session/request_permission",
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": "t3", "title": "valid"},
                "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
            },
        ),
    ]
    agent.notify("session/update", {"sessionId": sid, "update": 5})
    agent.notify("session/update", {"update": {"sessionUpdate": "agent_message_chunk", "content": {}}})
    agent.notify(
        "session/update",
        {"sessionId": sid, "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}},
    )
    send({"jsonrpc": "2.0", "method": "session/update"})
    send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": {"x": 1}}})
    return ids


def show_unknown(agent: Agent) -> list[Any]:
    ids = [
        agent.request("_acme/thing", {"a": 1}, expect=-32601),
        agent.request("acme/thing", {"a": 1}, expect=-32601),
        agent.request("session/new", {"cwd": "/", "mcpServers": []}, expect=-32601),
        agent.request("terminal/create", {"sessionId": SESSION_ID, "command": "ls"}, expect=-32601),
        agent.request("", None, expect=-32601),
        agent.request("$/ping", None, expect=-32601),
    ]
    agent.notify("_acme/ping", {"b": 2})
    agent.notify("weird/notify", [1])
    agent.notify("session/prompt", {"sessionId": SESSION_ID, "prompt": []})
    agent.notify("elicitation/complete", {"elicitationId": "nope"})
    return ids


def show_readflood(agent: Agent) -> list[Any]:
    count = env_int("HOSTILE_FLOOD", 10000)
    ids = []
    lines = []
    for index in range(count):
        request_id = agent.new_id()
        path = f"/flood/{index}.txt"
        agent.journal.write(
            {"event": "sent", "show": agent.show, "id": request_id, "expect": "result", "path": path}
        )
        lines.append(
            encode(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "fs/read_text_file",
                    "params": {"sessionId": SESSION_ID, "path": path},
                }
            )
        )
        ids.append(request_id)
    write_raw(b"".join(lines))
    return ids


def show_storm(agent: Agent) -> list[Any]:
    count = env_int("HOSTILE_STORM", 100000)
    line = encode(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {
                "sessionId": "no-such-session",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "boo"},
                },
            },
        }
    )
    batch = 1000
    for start in range(0, count, batch):
        write_raw(line * min(batch, count - start))
    return []


def show_stderr(agent: Agent) -> list[Any]:
    total = env_int("HOSTILE_STDERR_MB", 100) << 20
    err = sys.stderr.buffer
    line = b"e" * 999 + b"\n"
    block = line * 1024  # 1 MiB of lines
    written = 0
    while written < total // 2:
        err.write(block)
        written += len(block)
    endless = b"z" * (1 << 20)
    while written < total:
        err.write(endless)
        written += len(endless)
    err.write(b"\nlast words on stderr\n")
    err.flush()
    return [agent.read_request("/after-stderr")]


def show_badanswer(agent: Agent) -> list[Any]:
    return []


def show_exit(agent: Agent) -> list[Any]:
    agent.chunk("about to exit")
    sys.stderr.write("fatal: the hostile agent exploded\n")
    sys.stderr.flush()
    os._exit(3)


def show_sigkill(agent: Agent) -> list[Any]:
    agent.chunk("about to be killed")
    sys.stderr.write("the hostile agent is about to be killed\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)
    return []


def show_hang(agent: Agent) -> list[Any]:
    agent.ignore_eof = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # A grandchild in the same process group: stopping the agent must reach it too.
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)",
        ],
        stdin=subprocess.DEVNULL,
    )
    agent.journal.write({"event": "child", "pid": child.pid})
    agent.chunk("hanging")
    threading.Event().wait()
    return []


# ---- terminal shows (terminal/*; the client must advertise clientCapabilities.terminal) ----------------
# - ``termrace``       HOSTILE_RACE [10] x terminal/create then terminal/release at once, as many x create
#                      then terminal/kill at once (then wait_for_exit, output, release: ids stay valid)
# - ``termbackground`` a command that leaves ``nohup sleep &``, a double-forked sleep ignoring HUP, a
#                      ``setsid sleep &`` and a setsid'd loop ignoring TERM behind and exits; then
#                      wait_for_exit and release (not with HOSTILE_RELEASE=0)
# - ``termcancel``     terminal/create of a long command, then on session/cancel terminal/kill at once, then
#                      wait_for_exit and release
# Commands carry HOSTILE_TERMINAL_MARKER=$HOSTILE_MARKER in their environment, so a test can find them.


def call(agent: Agent, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request and wait for its answer; returns the response (an error response included)."""
    request_id = agent.request(method, params, rpc=method)
    missing = agent.wait_answers([request_id])
    if missing:
        return {"error": {"code": 0, "message": f"no answer to {method} in {ANSWER_TIMEOUT:g} s"}}
    with agent.answered:
        return agent.replies[json.dumps(request_id)]


def terminal_env() -> list[dict[str, str]]:
    return [{"name": "HOSTILE_TERMINAL_MARKER", "value": os.environ.get("HOSTILE_MARKER", "")}]


def create_terminal(agent: Agent, command: str, args: list[str]) -> str | None:
    params = {"sessionId": SESSION_ID, "command": command, "args": args, "env": terminal_env()}
    answer = call(agent, "terminal/create", params)
    terminal_id = (answer.get("result") or {}).get("terminalId")
    return terminal_id if isinstance(terminal_id, str) else None


def on_terminal(agent: Agent, method: str, terminal_id: str) -> dict[str, Any]:
    return call(agent, method, {"sessionId": SESSION_ID, "terminalId": terminal_id})


def report(agent: Agent, facts: dict[str, Any]) -> None:
    """Tell the test what happened, in the chat (one line) and in the journal."""
    agent.journal.write({"event": "terminal_report", "show": agent.show, **facts})
    agent.chunk(f"{agent.show}: {json.dumps(facts)}\n")


def show_termrace(agent: Agent) -> list[Any]:
    rounds = env_int("HOSTILE_RACE", 10)
    created: list[str] = []
    for _ in range(rounds):
        terminal_id = create_terminal(agent, "sleep", ["300"])
        if terminal_id is not None:
            created.append(terminal_id)
            on_terminal(agent, "terminal/release", terminal_id)
    killed: list[str] = []
    for _ in range(rounds):
        terminal_id = create_terminal(agent, "sleep", ["300"])
        if terminal_id is not None:
            created.append(terminal_id)
            killed.append(terminal_id)
            on_terminal(agent, "terminal/kill", terminal_id)
    exits = [on_terminal(agent, "terminal/wait_for_exit", terminal_id) for terminal_id in killed]
    outputs = [on_terminal(agent, "terminal/output", terminal_id) for terminal_id in killed]
    for terminal_id in killed:
        on_terminal(agent, "terminal/release", terminal_id)
    report(
        agent,
        {
            "created": len(created),
            "exits": [e.get("result", e.get("error")) for e in exits],
            "output_exit": [(o.get("result") or {}).get("exitStatus") for o in outputs],
        },
    )
    return []


# Four things outlive the command, the sleeps told apart by their duration: nohup'd, double-forked ignoring
# HUP, setsid'd, and a setsid'd loop ignoring TERM and HUP that keeps starting sleeps. The command ends only
# once each is immune to the SIGHUP its end sends to the terminal's session (a file says so; at most ~10 s).
BACKGROUND = """
d=$(mktemp -d)
nohup sh -c 'touch "$1/1"; exec sleep 301' sh "$d" >/dev/null 2>&1 &
( ( trap '' HUP; touch "$d/2"; exec sleep 302 ) >/dev/null 2>&1 & )
setsid sh -c 'touch "$1/3"; exec sleep 303' sh "$d" >/dev/null 2>&1 &
loop='trap "" TERM HUP; touch "$1/4"; while :; do sleep 304 & sleep 0.2; done'
setsid sh -c "$loop" sh "$d" >/dev/null 2>&1 &
n=0
while [ ! -e "$d/1" ] || [ ! -e "$d/2" ] || [ ! -e "$d/3" ] || [ ! -e "$d/4" ]; do
  n=$((n + 1)); [ "$n" -lt 1000 ] || break; sleep 0.01
done
rm -rf "$d"
echo backgrounded
"""


def show_termbackground(agent: Agent) -> list[Any]:
    terminal_id = create_terminal(agent, "sh", ["-c", BACKGROUND])
    if terminal_id is None:
        report(agent, {"error": "terminal/create failed"})
        return []
    exit_answer = on_terminal(agent, "terminal/wait_for_exit", terminal_id)
    output = on_terminal(agent, "terminal/output", terminal_id)
    # HOSTILE_RELEASE=0 leaves the terminal to whatever ends the session (:AcpStop, :qa!).
    release = {"result": None}
    if os.environ.get("HOSTILE_RELEASE", "1") != "0":
        release = on_terminal(agent, "terminal/release", terminal_id)
    report(
        agent,
        {
            "terminal": terminal_id,
            "exit": exit_answer.get("result", exit_answer.get("error")),
            "output": (output.get("result") or {}).get("output"),
            "release": release.get("result", release.get("error")),
        },
    )
    return []


def wait_for_cancel(agent: Agent, timeout: float) -> bool:
    """Wait for a session/cancel notification (taken out of the inbox; other messages stay)."""
    deadline = time.monotonic() + timeout
    with agent.inbox_ready:
        while True:
            for index, message in enumerate(agent.inbox):
                if message is not None and message.get("method") == "session/cancel":
                    del agent.inbox[index]
                    return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            agent.inbox_ready.wait(left)


def show_termcancel(agent: Agent) -> list[Any]:
    params = {"sessionId": SESSION_ID, "command": "sleep", "args": ["300"], "env": terminal_env()}
    request_id = agent.request("terminal/create", params, rpc="terminal/create")
    # The user cancels as soon as the command starts: the kill follows the create's answer at once.
    cancelled = wait_for_cancel(agent, ANSWER_TIMEOUT)
    agent.wait_answers([request_id])
    with agent.answered:
        created = agent.replies.get(json.dumps(request_id), {})
    terminal_id = (created.get("result") or {}).get("terminalId")
    if not isinstance(terminal_id, str):
        report(agent, {"error": "terminal/create failed", "answer": created})
        return []
    kill = on_terminal(agent, "terminal/kill", terminal_id)
    exit_answer = on_terminal(agent, "terminal/wait_for_exit", terminal_id)
    release = on_terminal(agent, "terminal/release", terminal_id)
    report(
        agent,
        {
            "cancelled": cancelled,
            "kill": kill.get("result", kill.get("error")),
            "exit": exit_answer.get("result", exit_answer.get("error")),
            "release": release.get("result", release.get("error")),
        },
    )
    return []


# ---- load: what the agent streams (huge updates, very many tool calls) -----------------------------------

HUGE_BEGIN = "HUGE-BEGIN"
# A line of the huge texts as JSON string bytes: 99 characters and an escaped newline.
HUGE_LINE = b"x" * 99 + b"\\n"


def write_huge_update(update_head: bytes, update_tail: bytes, size: int) -> None:
    """One session/update whose JSON string starts with HUGE_BEGIN and holds `size` bytes of lines, written
    from byte templates: json.dumps of 50 MiB would cost the agent more than the client spends on it."""
    head = (
        b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
        + SESSION_ID.encode()
        + b'","update":'
        + update_head
        + HUGE_BEGIN.encode()
        + HUGE_LINE
    )
    block = HUGE_LINE * ((1 << 20) // len(HUGE_LINE))
    with _out_lock:
        _out.write(head)
        written = len(HUGE_LINE)
        while written < size:
            piece = block[: min(len(block), size - written)]
            _out.write(piece)
            written += len(piece)
        _out.write(update_tail + b"}}\n")
        _out.flush()


def show_hugechunk(agent: Agent) -> list[Any]:
    size = env_int("HOSTILE_HUGECHUNK_MB", 50) << 20
    text_tail = b'"}'
    write_huge_update(
        b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"', text_tail + b"}", size
    )
    agent.chunk("after the huge chunk")
    write_huge_update(
        b'{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"', text_tail + b"}", size
    )
    agent.chunk("after the huge thought")
    write_huge_update(
        b'{"sessionUpdate":"tool_call","toolCallId":"huge-tool","title":"huge edit","kind":"edit",'
        b'"status":"in_progress","content":[{"type":"diff","path":"/huge.txt","oldText":"old\\n","newText":"',
        b'"}]}',
        size,
    )
    write_huge_update(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"huge-tool",'
        b'"content":[{"type":"content","content":{"type":"text","text":"',
        b'"}}]}',
        size,
    )
    write_huge_update(
        b'{"sessionUpdate":"tool_call_update","toolCallId":"huge-tool","status":"completed","rawOutput":"',
        b'"}',
        size,
    )
    agent.chunk("after the huge tool call")
    # One message streamed past what the chat shows of a message, in two bursts (so the note of what is
    # not shown is written, then rewritten); then a message of its own.
    piece = "y" * (63 << 10) + "\n"
    for burst in range(2):
        for _ in range(20):
            send(message_chunk(piece, "long"))
        if burst == 0:
            time.sleep(0.1)  # the agent's pace: the second burst comes frames later
    send(message_chunk("after the long message", "after-long"))
    return []


def message_chunk(text: str, message_id: str) -> dict[str, Any]:
    message = chunk_message(text)
    message["params"]["update"]["messageId"] = message_id
    return message


def show_toolstorm(agent: Agent) -> list[Any]:
    first = agent.tool_calls_stormed
    count = first + env_int("HOSTILE_TOOLSTORM", 100000)
    agent.tool_calls_stormed = count
    prefix = b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + SESSION_ID.encode()
    batch = 1000
    for start in range(first, count, batch):
        lines = []
        for index in range(start, min(count, start + batch)):
            call = f"storm-{index}".encode()
            lines.append(
                prefix
                + b'","update":{"sessionUpdate":"tool_call","toolCallId":"'
                + call
                + b'","title":"Read file '
                + str(index).encode()
                + b'","kind":"read","status":"in_progress"}}}\n'
            )
            lines.append(
                prefix
                + b'","update":{"sessionUpdate":"tool_call_update","toolCallId":"'
                + call
                + b'","status":"completed","content":[{"type":"content","content":{"type":"text","text":'
                b'"contents of file ' + str(index).encode() + b'"}}]}}}\n'
            )
        write_raw(b"".join(lines))
    return []


# ---- every request answered exactly once, whatever its shape or size (issue 15) ---------------------


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def show_deepnest(agent: Agent) -> list[Any]:
    """Deeper than the client's decoder goes: each request is answered -32602 under its id (read from the
    line, before or after the deep part), each notification only reported; 100 deep is served as usual."""
    sid = SESSION_ID.encode()
    ids: list[Any] = [agent.read_request("/before-deep")]
    depths = [int(d) for d in os.environ.get("HOSTILE_DEPTHS", "1000,100000").split(",")]
    lines = []
    for index, depth in enumerate(depths):
        deep = nested(depth)
        first, after = f"deep{index}-{depth}-first", f"deep{index}-{depth}-after"
        for request_id in (first, after):
            agent.journal.write({"event": "sent", "show": agent.show, "id": request_id, "expect": -32602})
        params = b'{"sessionId":"' + sid + b'","path":"/deep","_meta":{"deep":' + deep + b"}}"
        lines.append(
            b'{"jsonrpc":"2.0","id":"' + first.encode() + b'","method":"fs/read_text_file","params":'
        )
        lines[-1] += params + b"}"
        lines.append(b'{"jsonrpc":"2.0","method":"fs/read_text_file","params":' + params)
        lines[-1] += b',"id":"' + after.encode() + b'"}'
        ids += [first, after]
        lines.append(b'{"jsonrpc":"2.0","method":"_hostile/deep","params":' + deep + b"}")
        lines.append(
            b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"' + sid + b'","update":'
            b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"deep","_meta":'
            b'{"deep":' + deep + b"}}}}}"
        )
    write_raw(b"\n".join(lines) + b"\n")
    fine = {"sessionId": SESSION_ID, "path": "/deep-100", "_meta": {"deep": json.loads(nested(100))}}
    ids.append(agent.request("fs/read_text_file", fine, path="/deep-100"))
    return ids


def oversized_line(size: int, before: bytes, after: bytes) -> None:
    """Writes `before`, a JSON string of `size` bytes, `after` and a newline, without holding it all."""
    block = b"x" * (1 << 20)
    with _out_lock:
        _out.write(before + b'"')
        written = 0
        while written < size:
            piece = block[: min(len(block), size - written)]
            _out.write(piece)
            written += len(piece)
        _out.write(b'"' + after + b"\n")
        _out.flush()


def show_oversized(agent: Agent) -> list[Any]:
    """Over the client's size cap: answered -32600 under the id when it comes first, else under null."""
    size = env_int("HOSTILE_OVERSIZED_MB", 65) << 20
    sid = SESSION_ID.encode()
    request_id = agent.new_id()
    agent.journal.write({"event": "sent", "show": agent.show, "id": request_id, "expect": -32600})
    head = b'{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":' % request_id
    oversized_line(size, head + b'{"sessionId":"' + sid + b'","path":"/big","_meta":{"blob":', b"}}}")
    agent.journal.write({"event": "expect_null", "show": agent.show, "code": -32600, "count": 1})
    head = b'{"jsonrpc":"2.0","method":"fs/read_text_file","params":{"sessionId":"' + sid + b'","_meta":'
    oversized_line(size, head, b',"path":"/big"},"id":"after-the-bulk"}')
    return [request_id, agent.read_request("/after-oversized")]


def answer_oversized(request_id: Any) -> None:
    size = env_int("HOSTILE_OVERSIZED_MB", 65) << 20
    oversized_line(
        size, b'{"jsonrpc":"2.0","id":%s,"result":{"blob":' % json.dumps(request_id).encode(), b"}}"
    )


def show_permissionunknown(agent: Agent) -> list[Any]:
    """Requests naming a session that does not exist: an error (-32002), not `cancelled`."""
    ghost = "no-such-session"
    permission = {
        "sessionId": ghost,
        "toolCall": {"toolCallId": "ghost-1", "title": "rm -rf /"},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}],
    }
    elicitation = {
        "sessionId": ghost,
        "mode": "form",
        "message": "Your password?",
        "requestedSchema": {"type": "object", "properties": {"password": {"type": "string"}}},
    }
    # A client that does not do forms knows no such method at all.
    advertised = "form" in (agent.client_capabilities.get("elicitation") or {})
    ids = [
        agent.request("session/request_permission", permission, expect=-32002),
        agent.request("elicitation/create", elicitation, expect=-32002 if advertised else -32601),
    ]
    if os.environ.get("HOSTILE_GHOST_FS"):
        # For a client whose fs methods know their sessions (the test editors serve any).
        ids.append(agent.read_request("/ghost", expect=-32002, session_id=ghost))
    return ids


SHOWS = {
    "garbage": show_garbage,
    "huge": show_huge,
    "notjsonrpc": show_notjsonrpc,
    "bogus-responses": show_bogus_responses,
    "badparams": show_badparams,
    "unknown": show_unknown,
    "readflood": show_readflood,
    "stormunknownsession": show_storm,
    "stderr": show_stderr,
    "badanswer": show_badanswer,
    "exit": show_exit,
    "sigkill": show_sigkill,
    "hang": show_hang,
    "termrace": show_termrace,
    "termbackground": show_termbackground,
    "termcancel": show_termcancel,
    "hugechunk": show_hugechunk,
    "toolstorm": show_toolstorm,
    "deepnest": show_deepnest,
    "oversized": show_oversized,
    "permissionunknown": show_permissionunknown,
}


if __name__ == "__main__":
    Agent().serve()

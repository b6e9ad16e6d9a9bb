"""Fuzzing the whole client stack on in-memory streams: framing, JSON-RPC decoding and the client's real
`Dispatcher` (method table, typed params, editor calls, session filter, trouble reports).

Properties: whatever the agent sends, nothing escapes the connection (serve() ends normally at end of input),
every valid request gets exactly one answer with the right outcome, nothing is answered twice, and every line
the client writes is a well-formed JSON-RPC response.

`ACP_FUZZ_EXAMPLES` sets the examples per property (default 50, a few seconds in all).
"""

from __future__ import annotations

import math
import os
from collections import Counter
from typing import Any

import anyio
import msgspec
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.client.agent.diagnostics import Diagnostics
from acp_nvim.client.dispatch import Dispatcher
from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.jsonrpc import Connection, LineSplitter
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.methods import CANCEL_REQUEST as CANCEL_REQUEST_METHOD
from acp_nvim.protocol.methods import METHODS
from tests.trouble_log import troubles_by_kind
from tests.unit.strategies import cut, json_trees, property_settings

EXAMPLES = int(os.environ.get("ACP_FUZZ_EXAMPLES", "50"))
FUZZ = property_settings(max_examples=EXAMPLES)
DEADLINE = 20
SESSION_ID = "s1"


class FuzzEditor(HeadlessEditor):
    """Serves everything it can, from memory, so every client method the agent may call is exercised."""

    def __init__(self) -> None:
        self.updates: list[s.SessionNotification] = []

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities(
            fs=s.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )

    def session_updates(self, notifications: list[s.SessionNotification]) -> None:
        self.updates += notifications

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        if not params.options:
            return s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled())
        option = params.options[0].option_id
        return s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeSelected(option_id=option))

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        return s.ReadTextFileResponse(content=f"read {params.path}")

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        return s.WriteTextFileResponse()

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        return s.CreateTerminalResponse(terminal_id="term-1")

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        return s.TerminalOutputResponse(output="", truncated=False)

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        return s.WaitForTerminalExitResponse(exit_code=0)

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        return s.KillTerminalResponse()

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        return s.ReleaseTerminalResponse()


class Outcome(msgspec.Struct):
    answers: list[dict[str, Any]]
    editor: FuzzEditor
    troubles: dict[str, int]


def run_client(chunks: list[bytes], probe_ids: set[str], max_message_size: int = 1 << 20) -> Outcome:
    """Feed the chunks to a connection served by the real dispatcher, wait for an answer to each probe id,
    end the input; serve() must then return on its own. Returns every answer the client wrote."""

    async def main() -> Outcome:
        agent_send, client_receive = anyio.create_memory_object_stream[bytes](math.inf)
        client_send, agent_receive = anyio.create_memory_object_stream[bytes](math.inf)
        editor = FuzzEditor()
        # No interval: every trouble is a message of its own, counted by kind from what the sink was told.
        troubles: list[str] = []
        diagnostics = Diagnostics("fuzz", troubles.append, interval=0)
        dispatcher = Dispatcher(editor, diagnostics)
        dispatcher.sessions.add(SESSION_ID)
        conn = Connection(
            client_receive,
            client_send,
            on_request=dispatcher.on_request,
            on_notification=dispatcher.on_notification,
            on_protocol_error=diagnostics.protocol_error,
            max_message_size=max_message_size,
            cancel_method=CANCEL_REQUEST_METHOD,
        )
        splitter = LineSplitter()
        lines: list[bytes] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.serve)
            for chunk in chunks:
                await agent_send.send(chunk)
            waiting = set(probe_ids)
            while waiting:
                for item in splitter.feed(await agent_receive.receive()):
                    assert isinstance(item, bytes)
                    lines.append(item)
                    waiting.discard(msgspec.json.decode(item).get("id"))
            await agent_send.aclose()
        # Only the end of input gets us here: serve() returned by itself, nothing escaped it.
        client_send.close()
        async for chunk in agent_receive:
            lines.extend(item for item in splitter.feed(chunk) if isinstance(item, bytes))
        answers = [msgspec.json.decode(line) for line in lines]
        return Outcome(answers, editor, troubles_by_kind(troubles))

    async def bounded() -> Outcome:
        with anyio.fail_after(DEADLINE):
            return await main()

    outcome = anyio.run(bounded)
    for answer in outcome.answers:
        assert answer["jsonrpc"] == "2.0" and "id" in answer, answer
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert isinstance(answer["error"]["code"], int) and isinstance(answer["error"]["message"], str)
            assert "Traceback" not in answer["error"]["message"]
    return outcome


def encode(message: object) -> bytes:
    return msgspec.json.encode(message)


def probe(index: int) -> bytes:
    return encode(
        {
            "jsonrpc": "2.0",
            "id": f"probe-{index}",
            "method": "fs/read_text_file",
            "params": {"sessionId": SESSION_ID, "path": f"/probe/{index}"},
        }
    )


def assert_probes_answered_once(answers: list[dict[str, Any]], count: int) -> None:
    by_id = Counter(a["id"] for a in answers if isinstance(a["id"], str) and a["id"].startswith("probe-"))
    for index in range(count):
        assert by_id[f"probe-{index}"] == 1, f"probe-{index}: {by_id[f'probe-{index}']} answers"
    for answer in answers:
        if isinstance(answer["id"], str) and answer["id"].startswith("probe-"):
            index = int(answer["id"].removeprefix("probe-"))
            if index < count:
                assert answer["result"] == {"content": f"read /probe/{index}"}


# ---- any bytes -----------------------------------------------------------------------------------------


@FUZZ
@given(
    garbage=st.lists(st.binary(max_size=300), max_size=10),
    points=st.lists(st.integers(0, 100_000), max_size=20),
    cap=st.sampled_from([120, 300, 1 << 20]),
)
def test_any_bytes_between_valid_requests(garbage: list[bytes], points: list[int], cap: int) -> None:
    data = b"".join(g + b"\n" + probe(i) + b"\n" for i, g in enumerate(garbage))
    outcome = run_client(cut(data, points), {f"probe-{i}" for i in range(len(garbage))}, cap)
    assert_probes_answered_once(outcome.answers, len(garbage))
    # A line is answered at most once (garbage with id null or its own id, a probe exactly once).
    assert len(outcome.answers) <= data.count(b"\n")


# ---- any JSON, biased towards things that look like ACP -------------------------------------------------

ACP_KEYS = [
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "code",
    "message",
    "sessionId",
    "update",
    "sessionUpdate",
    "content",
    "type",
    "text",
    "path",
    "line",
    "limit",
    "options",
    "toolCall",
    "toolCallId",
    "requestId",
    "_meta",
]
METHOD_NAMES = [*sorted(METHODS), "_vendor/x", "nope", "", "$/cancel_request", "$/progress"]
UPDATE_KINDS = ["agent_message_chunk", "tool_call", "tool_call_update", "plan", "usage_update", "hologram"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from([SESSION_ID, "other-session", *UPDATE_KINDS, "text", "allow_once", "/tmp/x"])
)
json_values = json_trees(scalars, st.sampled_from(ACP_KEYS), width=6, max_leaves=16)
request_ids = (
    st.integers(-(2**63), 2**63 - 1)
    | st.text(max_size=8).filter(lambda text: not text.startswith("probe-"))
    | st.none()
    | st.booleans()
    | st.floats()
)
messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(METHOD_NAMES)},
    optional={"id": request_ids, "params": json_values, "result": json_values, "error": json_values},
)
updates = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.just("session/update"),
        "params": st.fixed_dictionaries(
            {
                "sessionId": st.sampled_from([SESSION_ID, "other-session"]) | json_values,
                "update": st.fixed_dictionaries(
                    {"sessionUpdate": st.sampled_from(UPDATE_KINDS)},
                    optional={
                        k: json_values for k in ("content", "toolCallId", "title", "entries", "status")
                    },
                )
                | json_values,
            }
        ),
    }
)


@FUZZ
@given(values=st.lists(json_values | messages | updates, max_size=10))
def test_any_json_between_valid_requests(values: list[object]) -> None:
    lines = []
    for index, value in enumerate(values):
        lines.append(encode(value))
        lines.append(probe(index))
    outcome = run_client([b"\n".join(lines) + b"\n"], {f"probe-{i}" for i in range(len(values))})
    assert_probes_answered_once(outcome.answers, len(values))
    assert len(outcome.answers) <= 2 * len(values)
    # Only updates for the open session reach the editor.
    assert all(u.session_id == SESSION_ID for u in outcome.editor.updates)


# ---- valid traffic, cut anywhere ------------------------------------------------------------------------

# (message without id, the outcome its answer must have: "result" or an error code)
REQUESTS: list[tuple[dict[str, Any], str | int]] = [
    ({"method": "fs/read_text_file", "params": {"sessionId": SESSION_ID, "path": "/a"}}, "result"),
    (
        {"method": "fs/write_text_file", "params": {"sessionId": SESSION_ID, "path": "/a", "content": "ü\n"}},
        "result",
    ),
    (
        {
            "method": "session/request_permission",
            "params": {
                "sessionId": SESSION_ID,
                "toolCall": {"toolCallId": "t", "title": "x"},
                "options": [{"optionId": "o", "name": "O", "kind": "allow_once"}],
            },
        },
        "result",
    ),
    ({"method": "terminal/create", "params": {"sessionId": SESSION_ID, "command": "ls"}}, "result"),
    ({"method": "terminal/output", "params": {"sessionId": SESSION_ID, "terminalId": "term-1"}}, "result"),
    ({"method": "fs/read_text_file", "params": {"sessionId": SESSION_ID, "path": 42}}, -32602),
    ({"method": "session/request_permission", "params": {"sessionId": SESSION_ID}}, -32602),
    ({"method": "_vendor/thing", "params": {}}, -32601),
    ({"method": "session/prompt", "params": {"sessionId": SESSION_ID, "prompt": []}}, -32601),
]
NOTIFICATIONS: list[dict[str, Any]] = [
    {
        "method": "session/update",
        "params": {
            "sessionId": SESSION_ID,
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}},
        },
    },
    {
        "method": "session/update",
        "params": {
            "sessionId": "other-session",
            "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "no"}},
        },
    },
    {"method": "session/update", "params": {"sessionId": SESSION_ID, "update": {"sessionUpdate": "plan"}}},
    {"method": "_vendor/ping"},
    {"method": "$/cancel_request", "params": {"requestId": "nobody"}},
]


@FUZZ
@given(
    picks=st.lists(st.integers(0, len(REQUESTS) + len(NOTIFICATIONS) - 1), min_size=1, max_size=40),
    points=st.lists(st.integers(0, 100_000), max_size=40),
    crlf=st.booleans(),
)
def test_valid_traffic_split_anywhere(picks: list[int], points: list[int], crlf: bool) -> None:
    ending = b"\r\n" if crlf else b"\n"
    lines: list[bytes] = []
    expected: dict[int | str, str | int] = {}
    notifications: list[dict[str, Any]] = []
    for index, pick in enumerate(picks):
        if pick < len(REQUESTS):
            message, outcome = REQUESTS[pick]
            request_id: int | str = index if index % 2 else f"r{index}"
            lines.append(encode({"jsonrpc": "2.0", "id": request_id, **message}))
            expected[request_id] = outcome
        else:
            notification = NOTIFICATIONS[pick - len(REQUESTS)]
            lines.append(encode({"jsonrpc": "2.0", **notification}))
            notifications.append(notification)
    data = ending.join(lines) + ending
    probes = {f"probe-{len(picks)}"}
    data += probe(len(picks)) + ending
    result = run_client(cut(data, points), probes)
    answers = [a for a in result.answers if a["id"] not in probes]
    assert Counter(a["id"] for a in answers) == Counter(dict.fromkeys(expected, 1))
    for answer in answers:
        want = expected[answer["id"]]
        if want == "result":
            assert "result" in answer, answer
        else:
            assert answer["error"]["code"] == want, answer
    # Only updates for the open session reach the editor; the others are counted as trouble.
    assert len(result.editor.updates) == sum(1 for n in notifications if n is NOTIFICATIONS[0])
    assert result.troubles.get("unknown_session", 0) == sum(1 for n in notifications if n is NOTIFICATIONS[1])
    assert result.troubles.get("malformed_update", 0) == sum(
        1 for n in notifications if n is NOTIFICATIONS[2]
    )

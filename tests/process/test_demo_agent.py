"""The built-in demo agent as a subprocess, driven over raw JSON-RPC lines with canned client answers."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_nvim.protocol.methods import METHODS
from tests.schema_check import assert_valid

from .raw_peer import Message, RawPeer, is_response, update_kind

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]

ALL_CAPS = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
README = "# Demo project\n\nA scratch project.\n"
HELLO = 'print("hello")\n'

Answer = Callable[[Message], Any]


class Checked:
    """Validates every message the agent sends against the official schema, by the method it belongs to."""

    def __init__(self, peer: RawPeer, schema: dict[str, Any]) -> None:
        self.peer = peer
        self.schema = schema
        self.our_requests: dict[int, str] = {}

    async def request(self, method: str, params: Any) -> int:
        request_id = await self.peer.request(method, params)
        self.our_requests[request_id] = method
        return request_id

    async def recv(self) -> Message:
        message = await self.peer.recv()
        assert message.get("jsonrpc") == "2.0", message
        method = message.get("method")
        if method is not None:
            envelope = "AgentRequest" if "id" in message else "AgentNotification"
            assert_valid(self.schema, envelope, message)
            assert_valid(self.schema, METHODS[method].params.__name__, message.get("params"))
        elif "error" in message:
            assert_valid(self.schema, "Error", message["error"])
        else:
            assert_valid(self.schema, "AgentResponse", message)
            answered = self.our_requests[message["id"]]
            assert_valid(self.schema, METHODS[answered].result.__name__, message["result"])
        return message

    async def call(self, method: str, params: Any) -> Message:
        request_id = await self.request(method, params)
        message = await self.recv()
        assert is_response(message, request_id), message
        return message

    async def turn(
        self,
        session_id: str,
        text: str | list[dict[str, Any]],
        answers: dict[str, Answer],
        on_message: Answer | None = None,
    ) -> tuple[list[Message], Message]:
        """Send a prompt, answer the agent's requests from `answers`, return what came and the response."""
        prompt = [{"type": "text", "text": text}] if isinstance(text, str) else text
        prompt_id = await self.request("session/prompt", {"sessionId": session_id, "prompt": prompt})
        seen: list[Message] = []
        with anyio.fail_after(20):
            while True:
                message = await self.recv()
                if is_response(message, prompt_id):
                    return seen, message
                seen.append(message)
                if on_message is not None:
                    await on_message(message)
                if "id" in message and "method" in message:
                    answer = answers[message["method"]](message)
                    if isinstance(answer, tuple):
                        await self.peer.respond_error(message["id"], answer[0], answer[1])
                    elif answer is not ...:
                        await self.peer.respond(message["id"], answer)


def spawn(cwd: Path, delay_ms: int = 0) -> Any:
    # The checkout first on the path: the agent runs with the project dir as cwd, away from the repo.
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, ACP_DEMO_DELAY_MS=str(delay_ms), PYTHONPATH=pythonpath)
    return RawPeer.spawn([sys.executable, "-m", "acp_nvim.agents.demo"], env=env, cwd=str(cwd))


def project(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text(README)
    (tmp_path / "hello.py").write_text(HELLO)
    return tmp_path


def shape(messages: list[Message]) -> list[str]:
    """Methods and update kinds in order, runs of message chunks collapsed to one."""
    out: list[str] = []
    for message in messages:
        kind = update_kind(message)
        item = kind if kind is not None else message["method"]
        if item == "agent_message_chunk" and out and out[-1] == item:
            continue
        out.append(item)
    return out


def chat_text(messages: list[Message]) -> str:
    return "".join(
        m["params"]["update"]["content"]["text"] for m in messages if update_kind(m) == "agent_message_chunk"
    )


def canned(tmp_path: Path, permission: str = "allow") -> dict[str, Answer]:
    files = {str(tmp_path / "README.md"): README, str(tmp_path / "hello.py"): HELLO}
    return {
        "fs/read_text_file": lambda m: {"content": files[m["params"]["path"]]},
        "fs/write_text_file": lambda m: {},
        "session/request_permission": lambda m: {"outcome": {"outcome": "selected", "optionId": permission}},
        "terminal/create": lambda m: {"terminalId": "term-1"},
        "terminal/wait_for_exit": lambda m: {"exitCode": 0},
        "terminal/output": lambda m: {"output": "a\nb\n", "truncated": False, "exitStatus": {"exitCode": 0}},
        "terminal/release": lambda m: {},
    }


async def start(checked: Checked, cwd: Path, caps: dict[str, Any]) -> str:
    init = await checked.call(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": caps, "clientInfo": {"name": "t", "version": "0"}},
    )
    assert init["result"]["protocolVersion"] == 1
    new = await checked.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    session_id: str = new["result"]["sessionId"]
    return session_id


async def test_full_tour_allowed(tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = project(tmp_path)
    async with spawn(cwd) as peer:
        checked = Checked(peer, schema)
        init = await checked.call("initialize", {"protocolVersion": 1, "clientCapabilities": ALL_CAPS})
        info = init["result"]["agentInfo"]
        assert (info["name"], info["title"]) == ("acp-nvim-demo", "acp.nvim demo agent")
        assert init["result"]["agentCapabilities"].get("loadSession", False) is False
        new = await checked.call("session/new", {"cwd": str(cwd), "mcpServers": []})
        sid = new["result"]["sessionId"]
        assert [m["id"] for m in new["result"]["modes"]["availableModes"]] == ["ask", "code"]

        seen, done = await checked.turn(sid, "please fix the greeting", canned(cwd))
        assert done["result"] == {"stopReason": "end_turn"}
        assert shape(seen) == [
            "session_info_update",
            "available_commands_update",
            "agent_thought_chunk",
            "plan",
            "agent_message_chunk",
            "plan",
            "tool_call",
            "fs/read_text_file",
            "tool_call_update",
            "agent_message_chunk",
            "plan",
            "fs/read_text_file",
            "tool_call",
            "session/request_permission",
            "tool_call_update",
            "fs/write_text_file",
            "tool_call_update",
            "agent_message_chunk",
            "plan",
            "terminal/create",
            "tool_call",
            "terminal/wait_for_exit",
            "terminal/output",
            "tool_call_update",
            "agent_message_chunk",
            "terminal/release",
            "plan",
            "agent_message_chunk",
            "usage_update",
        ]
        assert "please fix the greeting" in chat_text(seen)
        by_method = {m["method"]: m["params"] for m in seen if "id" in m}
        assert by_method["fs/read_text_file"]["path"] == str(cwd / "hello.py")
        permission = by_method["session/request_permission"]
        diff = permission["toolCall"]["content"][0]
        assert diff == {
            "type": "diff",
            "path": str(cwd / "hello.py"),
            "oldText": HELLO,
            "newText": by_method["fs/write_text_file"]["content"],
        }
        assert [o["kind"] for o in permission["options"]] == ["allow_once", "reject_once"]
        assert by_method["fs/write_text_file"]["content"].endswith(HELLO)
        assert by_method["terminal/create"]["cwd"] == str(cwd)
        run_call = next(
            m for m in seen if update_kind(m) == "tool_call" and m["params"]["update"]["kind"] == "execute"
        )
        assert run_call["params"]["update"]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
        plans = [m["params"]["update"]["entries"] for m in seen if update_kind(m) == "plan"]
        assert len(plans[0]) == 3
        assert [e["status"] for e in plans[-1]] == ["completed"] * 3
        statuses = [
            m["params"]["update"].get("status")
            for m in seen
            if update_kind(m) in ("tool_call", "tool_call_update")
        ]
        assert statuses.count("completed") == 3

        # A second turn does the tour again without re-announcing the title.
        seen2, done2 = await checked.turn(sid, "again", canned(cwd))
        assert done2["result"]["stopReason"] == "end_turn"
        assert "session_info_update" not in shape(seen2)

        unknown = await checked.call("session/load", {"sessionId": sid, "cwd": str(cwd), "mcpServers": []})
        assert unknown["error"]["code"] == -32601
        await peer.notify("_vendor/unknown", {})
        mode = await checked.call("session/set_mode", {"sessionId": sid, "modeId": "code"})
        assert mode["result"] == {}


async def test_rejected_edit_fails_the_tool_call(tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = project(tmp_path)
    async with spawn(cwd) as peer:
        checked = Checked(peer, schema)
        sid = await start(checked, cwd, ALL_CAPS)
        seen, done = await checked.turn(sid, "hi", canned(cwd, permission="reject"))
        assert done["result"]["stopReason"] == "end_turn"
        methods = [m["method"] for m in seen if "id" in m]
        assert "fs/write_text_file" not in methods
        assert "terminal/create" in methods
        edit_updates = [
            m["params"]["update"]
            for m in seen
            if update_kind(m) == "tool_call_update" and m["params"]["update"]["toolCallId"].endswith("-edit")
        ]
        assert [u["status"] for u in edit_updates] == ["failed"]
        assert "rejected" in chat_text(seen)


async def test_without_client_capabilities(tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = project(tmp_path)
    async with spawn(cwd) as peer:
        checked = Checked(peer, schema)
        sid = await start(checked, cwd, {})
        selection = {"uri": f"file://{cwd}/hello.py", "text": HELLO, "mimeType": "text/x-python"}
        prompt = [{"type": "text", "text": "explain"}, {"type": "resource", "resource": selection}]
        seen, done = await checked.turn(sid, prompt, {})
        assert done["result"]["stopReason"] == "end_turn"
        assert [m for m in seen if "id" in m] == []
        text = chat_text(seen)
        assert "You said “explain @file:///" in text
        for skipped in ("fs/read_text_file", "fs/write_text_file", "terminals"):
            assert skipped in text


async def test_missing_files_and_client_errors(tmp_path: Path, schema: dict[str, Any]) -> None:
    async with spawn(tmp_path) as peer:
        checked = Checked(peer, schema)
        sid = await start(checked, tmp_path, ALL_CAPS)
        answers = canned(tmp_path)
        answers["terminal/create"] = lambda m: (-32603, "no terminals today")
        seen, done = await checked.turn(sid, "hi", answers)
        assert done["result"]["stopReason"] == "end_turn"
        permission = next(m for m in seen if m.get("method") == "session/request_permission")
        diff = permission["params"]["toolCall"]["content"][0]
        # An empty project: a new file is proposed (no oldText), nothing was read.
        assert diff["path"] == str(tmp_path / "acp_demo.txt")
        assert "oldText" not in diff or diff["oldText"] is None
        methods = [m["method"] for m in seen if "id" in m]
        assert "fs/read_text_file" not in methods
        assert "terminal/release" not in methods
        assert "no terminals today" in chat_text(seen)


async def test_cancel_during_permission(tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = project(tmp_path)
    async with spawn(cwd) as peer:
        checked = Checked(peer, schema)
        sid = await start(checked, cwd, ALL_CAPS)
        answers = canned(cwd)

        def cancel_then_answer(message: Message) -> Any:
            return ...  # answered by on_message below, after session/cancel

        answers["session/request_permission"] = cancel_then_answer

        async def on_message(message: Message) -> None:
            if message.get("method") == "session/request_permission":
                await peer.notify("session/cancel", {"sessionId": sid})
                await peer.respond(message["id"], {"outcome": {"outcome": "cancelled"}})

        seen, done = await checked.turn(sid, "hi", answers, on_message)
        assert done["result"] == {"stopReason": "cancelled"}
        methods = [m["method"] for m in seen if "id" in m]
        assert "fs/write_text_file" not in methods
        assert "terminal/create" not in methods

        # The session is usable again afterwards.
        _, again = await checked.turn(sid, "hi", canned(cwd))
        assert again["result"]["stopReason"] == "end_turn"


async def test_cancel_while_streaming_and_terminal_released(tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = project(tmp_path)
    async with spawn(cwd, delay_ms=50) as peer:
        checked = Checked(peer, schema)
        sid = await start(checked, cwd, ALL_CAPS)
        chunks = 0

        async def on_message(message: Message) -> None:
            nonlocal chunks
            if update_kind(message) == "agent_message_chunk":
                chunks += 1
                if chunks == 3:
                    await peer.notify("session/cancel", {"sessionId": sid})

        with anyio.fail_after(5):
            seen, done = await checked.turn(sid, "a long prompt", canned(cwd), on_message)
        assert done["result"]["stopReason"] == "cancelled"
        assert [m for m in seen if "id" in m] == []

        # Cancelled while waiting for the command: the terminal is still released.
        answers = canned(cwd)
        answers["terminal/wait_for_exit"] = lambda m: ...

        async def cancel_on_wait(message: Message) -> None:
            if message.get("method") == "terminal/wait_for_exit":
                await peer.notify("session/cancel", {"sessionId": sid})

        seen, done = await checked.turn(sid, "go", answers, cancel_on_wait)
        assert done["result"]["stopReason"] == "cancelled"
        methods = [m.get("method") for m in seen]
        assert methods.index("terminal/release") > methods.index("terminal/wait_for_exit")
        assert "$/cancel_request" in methods


def test_demo_imports_runtime_deps_only() -> None:
    check = (
        "import sys, acp_nvim.agents.demo\n"
        "bad = {'acp', 'pydantic', 'pynvim'} & {name.split('.')[0] for name in sys.modules}\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True, timeout=60)

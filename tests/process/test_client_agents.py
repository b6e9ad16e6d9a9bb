"""The client against real agents written by others: the TypeScript SDK example agent and an agent on the
official Python SDK. Every message the client sends is validated against the official schema."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.handshake import AgentExited, HandshakeTimeout, VersionMismatch
from acp_nvim.client.agent.process import AgentCommand, AgentNotFound, group_has_members
from acp_nvim.protocol import schema as s
from tests.conftest import NODE, ROOT, TS_EXAMPLE_AGENT
from tests.process.recording_editor import RecordingEditor, choose
from tests.wire_check import WireCheck

pytestmark = pytest.mark.anyio

SCRIPTED_AGENT = ROOT / "tests" / "agents" / "scripted_agent.py"


@asynccontextmanager
async def ts_agent(
    editor: RecordingEditor, wire: WireCheck, tmp_path: Path
) -> AsyncIterator[AgentConnection]:
    command = AgentCommand(NODE, [str(TS_EXAMPLE_AGENT)], cwd=str(tmp_path))
    async with AgentConnection.launch(command, editor, on_message=wire.record, handshake_timeout=20) as agent:
        yield agent


@asynccontextmanager
async def scripted_agent(
    scenario: dict[str, Any], editor: RecordingEditor, wire: WireCheck, tmp_path: Path
) -> AsyncIterator[AgentConnection]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    command = AgentCommand(
        sys.executable,
        [str(SCRIPTED_AGENT), str(path)],
        env={"ACP_TEST_JOURNAL": str(tmp_path / "journal.jsonl")},
        cwd=str(tmp_path),
    )
    async with AgentConnection.launch(command, editor, on_message=wire.record, handshake_timeout=20) as agent:
        yield agent


def journal(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (tmp_path / "journal.jsonl").read_text().splitlines()]


def text(value: str) -> list[s.ContentBlock]:
    return [s.ContentBlockText(text=value)]


@pytest.fixture
def wire(schema: dict[str, Any]) -> WireCheck:
    return WireCheck(schema)


async def test_ts_example_agent_turn_with_permission_allowed(tmp_path: Path, wire: WireCheck) -> None:
    editor = RecordingEditor(choose("allow"))
    async with ts_agent(editor, wire, tmp_path) as agent:
        assert agent.protocol_version == 1
        assert agent.display_name == "node"  # the example agent sends no agentInfo
        session = await agent.new_session(str(tmp_path))
        with anyio.fail_after(30):
            result = await agent.prompt(session.session_id, text("do it"))
    assert result.stop_reason == "end_turn"
    assert "I'll help you with that" in editor.agent_text()
    assert editor.permission_requests[0].tool_call.title == "Modifying critical configuration file"
    assert editor.tool_statuses("call_1") == ["pending", "completed"]
    assert editor.tool_statuses("call_2")[-1] == "completed"
    assert wire.methods_sent() == ["initialize", "session/new", "session/prompt"]
    init = wire.sent[0]["params"]
    assert init["protocolVersion"] == 1
    assert init["clientInfo"]["name"] == "acp.nvim"
    wire.assert_valid()


async def test_ts_example_agent_turn_with_permission_rejected(tmp_path: Path, wire: WireCheck) -> None:
    editor = RecordingEditor(choose("reject"))
    async with ts_agent(editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        with anyio.fail_after(30):
            result = await agent.prompt(session.session_id, text("do it"))
    assert result.stop_reason == "end_turn"
    assert "prefer not to make that change" in editor.agent_text()
    assert "completed" not in editor.tool_statuses("call_2")
    wire.assert_valid()


async def test_ts_example_agent_cancel_mid_turn(tmp_path: Path, wire: WireCheck) -> None:
    editor = RecordingEditor()
    async with ts_agent(editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        async with anyio.create_task_group() as tasks:
            outcome: list[s.PromptResponse] = []

            async def run_turn() -> None:
                outcome.append(await agent.prompt(session.session_id, text("do it")))

            tasks.start_soon(run_turn)
            with anyio.fail_after(30):
                await editor.wait_for_update(s.SessionUpdateToolCall)
            await agent.cancel(session.session_id)
    assert outcome[0].stop_reason == "cancelled"
    assert not editor.permission_requests
    assert "session/cancel" in wire.methods_sent()
    wire.assert_valid()


async def test_cancel_answers_a_pending_permission_request_cancelled(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {
        "turns": [
            [
                {"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit x", "kind": "edit"}}},
                {"sleep_until_cancel": True},
            ]
        ]
    }
    editor = RecordingEditor()
    editor.hold_permission = anyio.Event()  # the user never answers the prompt
    async with scripted_agent(scenario, editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        outcome: list[s.PromptResponse] = []
        async with anyio.create_task_group() as tasks:

            async def run_turn() -> None:
                outcome.append(await agent.prompt(session.session_id, text("go")))

            tasks.start_soon(run_turn)
            with anyio.fail_after(30):
                await editor.permission_asked.wait()
                await agent.cancel(session.session_id)
    assert outcome[0].stop_reason == "cancelled"
    answers = [e for e in journal(tmp_path) if e.get("call") == "session/request_permission"]
    assert answers[0]["result"]["outcome"] == {"outcome": "cancelled"}
    wire.assert_valid()


async def test_stop_leaves_no_process_of_the_agent_group(tmp_path: Path, wire: WireCheck) -> None:
    editor = RecordingEditor()
    async with ts_agent(editor, wire, tmp_path) as agent:
        pgid = agent.process.pgid
        assert os.getpgid(agent.process.pid) == pgid
    assert not group_has_members(pgid)


SCENARIO: dict[str, Any] = {
    "agentInfo": {"name": "scripted", "title": "Scripted Agent", "version": "2.1.0"},
    "agentCapabilities": {"sessionCapabilities": {"list": {}}},
    "turns": [[{"text": "Hello ${PROMPT}"}, {"thought": "pondering"}, {"stop": "max_tokens"}]],
}


async def test_python_sdk_agent_handshake_and_turn(tmp_path: Path, wire: WireCheck) -> None:
    editor = RecordingEditor()
    async with scripted_agent(SCENARIO, editor, wire, tmp_path) as agent:
        assert agent.display_name == "Scripted Agent"
        assert agent.agent_info is not None and agent.agent_info.version == "2.1.0"
        session = await agent.new_session(str(tmp_path), additional_directories=[str(tmp_path)])
        with anyio.fail_after(30):
            result = await agent.prompt(session.session_id, text("world"))
        listed = await agent.list_sessions()
        with pytest.raises(Unsupported, match="cannot load sessions"):
            await agent.load_session("x", str(tmp_path))
        with pytest.raises(Unsupported, match="does not accept images"):
            await agent.prompt(session.session_id, [s.ContentBlockImage(data="AAAA", mime_type="image/png")])
    assert result.stop_reason == "max_tokens"
    assert editor.agent_text().startswith("Hello world")
    assert "SessionUpdateAgentThoughtChunk" in editor.kinds()
    assert isinstance(listed, s.ListSessionsResponse)
    new_session = next(e for e in journal(tmp_path) if e.get("method") == "session/new")
    # Not advertised, so not sent.
    assert "additionalDirectories" not in new_session["params"]
    wire.assert_valid()


# Each call gated by a capability of the agent's (`AGENT_GATING`): the call, what the user reads when the
# agent did not advertise it, the method that is then never sent.
GATED_CALLS: list[tuple[Callable[[AgentConnection, str], Awaitable[object]], str, str]] = [
    (lambda agent, cwd: agent.load_session("old", cwd), "cannot load sessions", "session/load"),
    (lambda agent, cwd: agent.resume_session("old", cwd), "cannot resume sessions", "session/resume"),
    (lambda agent, cwd: agent.list_sessions(), "cannot list sessions", "session/list"),
    (lambda agent, cwd: agent.close_session("old"), "cannot close sessions", "session/close"),
    (lambda agent, cwd: agent.delete_session("old"), "cannot delete sessions", "session/delete"),
    (lambda agent, cwd: agent.logout(), "does not support logout", "logout"),
]
EVERY_GATE: dict[str, Any] = {
    "loadSession": True,
    "sessionCapabilities": {"resume": {}, "list": {}, "delete": {}, "close": {}},
    "auth": {"logout": {}},
}


async def test_a_call_the_agent_did_not_advertise_is_refused_and_never_sent(
    tmp_path: Path, wire: WireCheck
) -> None:
    scenario = {"agentInfo": {"name": "bare", "version": "1"}, "agentCapabilities": {}}
    async with scripted_agent(scenario, RecordingEditor(), wire, tmp_path) as agent:
        for call, refusal, _ in GATED_CALLS:
            with pytest.raises(Unsupported, match=f"^bare {refusal}$"):
                await call(agent, str(tmp_path))
    assert [e["method"] for e in journal(tmp_path) if e.get("kind") == "request"] == ["initialize"]
    wire.assert_valid()


async def test_each_gated_call_is_sent_once_advertised(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {"agentCapabilities": EVERY_GATE, "sessions": [{"sessionId": "old", "cwd": str(tmp_path)}]}
    async with scripted_agent(scenario, RecordingEditor(), wire, tmp_path) as agent:
        for call, _, _ in GATED_CALLS:
            await call(agent, str(tmp_path))
    sent = [e["method"] for e in journal(tmp_path) if e.get("kind") == "request"]
    assert sent == ["initialize", *(method for _, _, method in GATED_CALLS)]
    wire.assert_valid()


async def test_unknown_update_kind_is_skipped_and_the_stream_goes_on(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {
        "turns": [
            [
                {"update": {"sessionUpdate": "hologram_update", "beam": 1}},
                {
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "t",
                        "title": "x",
                        "kind": "teleport",
                    }
                },
                {"text": "still here"},
            ]
        ]
    }
    editor = RecordingEditor()
    async with scripted_agent(scenario, editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        with anyio.fail_after(30):
            await agent.prompt(session.session_id, text("go"))
    assert editor.kinds() == ["SessionUpdateToolCall", "SessionUpdateAgentMessageChunk"]
    assert editor.agent_text() == "still here"
    tool_call = editor.updates[0].update
    assert isinstance(tool_call, s.SessionUpdateToolCall) and tool_call.kind == "teleport"


async def test_unadvertised_client_methods_are_method_not_found(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {"echo": False, "turns": [[{"read": {"path": "${CWD}/x.txt"}}, {"text": "done"}]]}
    editor = RecordingEditor()
    async with scripted_agent(scenario, editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        with anyio.fail_after(30):
            await agent.prompt(session.session_id, text("go"))
    errors = [e for e in journal(tmp_path) if e.get("kind") == "error"]
    assert errors and errors[0]["code"] == -32601
    wire.assert_valid()


async def test_version_mismatch_names_both_versions(tmp_path: Path, wire: WireCheck) -> None:
    with pytest.raises(
        VersionMismatch, match=r"speaks ACP protocol version 99; acp\.nvim supports version 1"
    ):
        async with scripted_agent({"protocolVersion": 99}, RecordingEditor(), wire, tmp_path):
            pass


async def test_agent_that_exits_at_once(tmp_path: Path) -> None:
    command = AgentCommand("sh", ["-c", "echo 'missing API key' >&2; exit 3"])
    with pytest.raises(AgentExited, match="exited with code 3: missing API key"):
        async with AgentConnection.launch(command, RecordingEditor()):
            pass


async def test_agent_that_never_answers(tmp_path: Path) -> None:
    with pytest.raises(HandshakeTimeout, match=r"did not answer initialize within 0\.5 s"):
        async with AgentConnection.launch(
            AgentCommand("sleep", ["60"]), RecordingEditor(), handshake_timeout=0.5
        ):
            pass


async def test_missing_command(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound):
        async with AgentConnection.launch(AgentCommand("no-such-agent-xyz"), RecordingEditor()):
            pass


async def test_pending_request_fails_when_the_agent_dies_mid_turn(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {"turns": [[{"text": "bye"}, {"exit": 7}]]}
    from acp_nvim.jsonrpc import ConnectionClosed

    async with scripted_agent(scenario, RecordingEditor(), wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        with anyio.fail_after(30), pytest.raises(ConnectionClosed, match="exited with code 7"):
            await agent.prompt(session.session_id, text("go"))


async def test_list_all_sessions_follows_cursors(tmp_path: Path, wire: WireCheck) -> None:
    stored = [{"sessionId": f"old-{n}", "cwd": str(tmp_path), "title": f"Session {n}"} for n in range(5)]
    scenario = {
        "agentCapabilities": {"sessionCapabilities": {"list": {}}},
        "sessions": stored,
        "listPageSize": 2,
    }
    async with scripted_agent(scenario, RecordingEditor(), wire, tmp_path) as agent:
        sessions = await agent.list_all_sessions(str(tmp_path))
    assert [info.title for info in sessions] == [f"Session {n}" for n in range(5)]
    assert wire.methods_sent().count("session/list") == 3
    wire.assert_valid()

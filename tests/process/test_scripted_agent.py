"""Self-test of tests/agents/scripted_agent.py, driven over raw JSON-RPC lines (not through our client)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from .raw_peer import RawPeer, is_request, update_kind

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "tests" / "agents" / "scripted_agent.py"

pytestmark = pytest.mark.anyio


def journal_lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def spawn(tmp_path: Path, scenario: dict[str, Any]) -> tuple[Any, Path]:
    scenario_path = tmp_path / "scenario.json"
    scenario_path.write_text(json.dumps(scenario))
    journal = tmp_path / "journal.jsonl"
    env = dict(os.environ, ACP_TEST_JOURNAL=str(journal))
    return RawPeer.spawn([sys.executable, str(AGENT), str(scenario_path)], env=env), journal


async def new_session(peer: RawPeer, cwd: Path) -> str:
    response = await peer.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    session_id: str = response["result"]["sessionId"]
    return session_id


INIT = {
    "protocolVersion": 1,
    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
    "clientInfo": {"name": "raw-test", "version": "0"},
}


async def test_initialize_text_and_read(tmp_path: Path) -> None:
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Scripted Agent", "version": "9.9"},
        "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
        "authMethods": [{"id": "login", "name": "Log in"}],
        "turns": [
            [{"text": "Hello ${PROMPT}"}, {"read": {"path": "${CWD}/README.md", "line": 2, "limit": 1}}]
        ],
    }
    peer_cm, journal = spawn(tmp_path, scenario)
    async with peer_cm as peer:
        init = await peer.call("initialize", INIT)
        assert init["result"]["protocolVersion"] == 1
        assert init["result"]["agentInfo"] == {
            "name": "scripted",
            "title": "Scripted Agent",
            "version": "9.9",
        }
        assert init["result"]["agentCapabilities"]["loadSession"] is True
        assert init["result"]["authMethods"][0]["id"] == "login"

        new = await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        sid = new["result"]["sessionId"]

        prompt_id = await peer.request(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "world"}]}
        )
        skipped, read = await peer.recv_until(lambda m: is_request(m, "fs/read_text_file"))
        assert [update_kind(m) for m in skipped] == ["agent_message_chunk"]
        assert skipped[0]["params"]["update"]["content"] == {"type": "text", "text": "Hello world"}
        assert read["params"] == {"sessionId": sid, "path": f"{tmp_path}/README.md", "line": 2, "limit": 1}

        await peer.respond(read["id"], {"content": "second line"})
        skipped, done = await peer.response_to(prompt_id)
        assert done["result"] == {"stopReason": "end_turn"}
        # The answer is echoed to the chat for humans.
        assert [update_kind(m) for m in skipped] == ["agent_message_chunk"]
        assert "fs/read_text_file -> " in skipped[0]["params"]["update"]["content"]["text"]

    entries = journal_lines(journal)
    assert [e.get("method") for e in entries if e["kind"] == "request"] == [
        "initialize",
        "session/new",
        "session/prompt",
    ]
    assert entries[2]["params"]["prompt"] == [{"type": "text", "text": "world"}]
    results = [e for e in entries if e["kind"] == "result"]
    assert results == [
        {
            "kind": "result",
            "call": "fs/read_text_file",
            "params": {"path": f"{tmp_path}/README.md", "line": 2, "limit": 1},
            "result": {"content": "second line"},
        }
    ]
    assert entries[-1] == {"kind": "turn_end", "sessionId": sid, "stopReason": "end_turn"}


async def test_errors_cancel_exit_and_version(tmp_path: Path) -> None:
    scenario = {
        "protocolVersion": 99,
        "echo": False,
        "turns": [
            [{"write": {"path": "/nope/x", "content": "x"}}, {"sleep_until_cancel": True}],
            [{"stop": "max_tokens"}],
            [{"exit": 3}],
        ],
    }
    peer_cm, journal = spawn(tmp_path, scenario)
    async with peer_cm as peer:
        init = await peer.call("initialize", INIT)
        assert init["result"]["protocolVersion"] == 99
        assert "agentInfo" not in init["result"]
        sid = (await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"][
            "sessionId"
        ]

        unknown = await peer.call("session/list", {})
        assert unknown["error"]["code"] == -32601

        prompt_id = await peer.request("session/prompt", {"sessionId": sid, "prompt": []})
        _, write = await peer.recv_until(lambda m: is_request(m, "fs/write_text_file"))
        await peer.respond_error(write["id"], -32002, "Resource not found")
        await peer.notify("session/cancel", {"sessionId": sid})
        _, done = await peer.response_to(prompt_id)
        assert done["result"]["stopReason"] == "cancelled"

        second = await peer.call("session/prompt", {"sessionId": sid, "prompt": []})
        assert second["result"]["stopReason"] == "max_tokens"

        await peer.request("session/prompt", {"sessionId": sid, "prompt": []})
        assert await peer.wait_exit() == 3

    entries = journal_lines(journal)
    errors = [e for e in entries if e["kind"] == "error"]
    assert errors[0]["call"] == "fs/write_text_file"
    assert errors[0]["code"] == -32002
    assert any(e["kind"] == "notification" and e["method"] == "session/cancel" for e in entries)
    assert entries[-1] == {"kind": "exit", "code": 3}


async def test_auth_sessions_modes(tmp_path: Path) -> None:
    history = [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "old question"}}]
    scenario = {
        "agentCapabilities": {
            "loadSession": True,
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            "auth": {"logout": {}},
        },
        "authMethods": [{"id": "login", "name": "Log in"}],
        "authRequired": True,
        "session": {
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            },
            "configOptions": [
                {
                    "id": "model",
                    "name": "Model",
                    "type": "select",
                    "currentValue": "a",
                    "options": [{"value": "a", "name": "A"}, {"value": "b", "name": "B"}],
                }
            ],
        },
        "sessions": [
            {"sessionId": "old-1", "cwd": str(tmp_path), "title": "One", "history": history},
            {"sessionId": "old-2", "cwd": str(tmp_path), "title": "Two"},
            {"sessionId": "old-3", "cwd": "/elsewhere", "title": "Three"},
        ],
        "listPageSize": 1,
        "setMode": {"refuse": ["code"], "error": {"code": -32099, "message": "not now"}},
        "setConfigOption": {"refuse": [{"configId": "model", "value": "c"}]},
    }
    peer_cm, _ = spawn(tmp_path, scenario)
    cwd = str(tmp_path)
    async with peer_cm as peer:
        await peer.call("initialize", INIT)
        denied = await peer.call("session/new", {"cwd": cwd, "mcpServers": []})
        assert denied["error"]["code"] == -32000
        assert (await peer.call("authenticate", {"methodId": "login"}))["result"] == {}
        new = (await peer.call("session/new", {"cwd": cwd, "mcpServers": []}))["result"]
        assert new["modes"]["currentModeId"] == "ask"
        assert new["configOptions"][0]["currentValue"] == "a"
        sid = new["sessionId"]

        page1 = (await peer.call("session/list", {"cwd": cwd}))["result"]
        assert [s["sessionId"] for s in page1["sessions"]] == ["old-1"]
        page2 = (await peer.call("session/list", {"cwd": cwd, "cursor": page1["nextCursor"]}))["result"]
        assert [s["sessionId"] for s in page2["sessions"]] == ["old-2"]
        page3 = (await peer.call("session/list", {"cwd": cwd, "cursor": page2["nextCursor"]}))["result"]
        assert [s["sessionId"] for s in page3["sessions"]] == [sid]
        assert "nextCursor" not in page3

        load_id = await peer.request("session/load", {"sessionId": "old-1", "cwd": cwd, "mcpServers": []})
        replay, loaded = await peer.response_to(load_id)
        assert [m["params"]["update"] for m in replay] == history
        assert loaded["result"]["modes"]["currentModeId"] == "ask"

        resumed = await peer.call("session/resume", {"sessionId": "old-2", "cwd": cwd})
        assert "result" in resumed
        assert (await peer.call("session/close", {"sessionId": "old-2"}))["result"] == {}
        assert (await peer.call("session/delete", {"sessionId": "old-3"}))["result"] == {}
        assert (await peer.call("session/delete", {"sessionId": "never"}))["result"] == {}

        refused = await peer.call("session/set_mode", {"sessionId": sid, "modeId": "code"})
        assert refused["error"] == {"code": -32099, "message": "not now", "data": None}
        assert (await peer.call("session/set_mode", {"sessionId": sid, "modeId": "ask"}))["result"] == {}
        changed = await peer.call(
            "session/set_config_option", {"sessionId": sid, "configId": "model", "value": "b"}
        )
        assert changed["result"]["configOptions"][0]["currentValue"] == "b"
        bad = await peer.call(
            "session/set_config_option", {"sessionId": sid, "configId": "model", "value": "c"}
        )
        assert bad["error"]["code"] == -32602

        assert (await peer.call("logout", {}))["result"] == {}
        again = await peer.call("session/new", {"cwd": cwd, "mcpServers": []})
        assert again["error"]["code"] == -32000


async def test_permission_and_terminal(tmp_path: Path) -> None:
    scenario = {
        "echo": False,
        "turns": [
            [
                {"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit"}}},
                {
                    "terminal": {
                        "command": "echo",
                        "args": ["hi"],
                        "toolCallId": "t2",
                        "then": ["wait", "output", "release"],
                    }
                },
                {
                    "elicit": {
                        "mode": "form",
                        "message": "Name?",
                        "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
                    }
                },
            ]
        ],
    }
    peer_cm, journal = spawn(tmp_path, scenario)
    async with peer_cm as peer:
        await peer.call("initialize", INIT)
        sid = (await peer.call("session/new", {"cwd": str(tmp_path), "mcpServers": []}))["result"][
            "sessionId"
        ]
        prompt_id = await peer.request("session/prompt", {"sessionId": sid, "prompt": []})
        _, perm = await peer.recv_until(lambda m: is_request(m, "session/request_permission"))
        assert [o["kind"] for o in perm["params"]["options"]] == ["allow_once", "reject_once"]
        await peer.respond(perm["id"], {"outcome": {"outcome": "selected", "optionId": "allow"}})
        _, create = await peer.recv_until(lambda m: is_request(m, "terminal/create"))
        assert create["params"]["command"] == "echo"
        await peer.respond(create["id"], {"terminalId": "term-1"})
        skipped, wait = await peer.recv_until(lambda m: is_request(m, "terminal/wait_for_exit"))
        assert skipped[0]["params"]["update"]["content"] == [{"type": "terminal", "terminalId": "term-1"}]
        await peer.respond(wait["id"], {"exitCode": 0})
        _, output = await peer.recv_until(lambda m: is_request(m, "terminal/output"))
        await peer.respond(
            output["id"], {"output": "hi\n", "truncated": False, "exitStatus": {"exitCode": 0}}
        )
        _, release = await peer.recv_until(lambda m: is_request(m, "terminal/release"))
        await peer.respond(release["id"], {})
        skipped, elicit = await peer.recv_until(lambda m: is_request(m, "elicitation/create"))
        assert skipped[-1]["params"]["update"]["status"] == "completed"
        assert elicit["params"]["sessionId"] == sid
        assert elicit["params"]["mode"] == "form"
        assert elicit["params"]["requestedSchema"]["properties"] == {"n": {"type": "string"}}
        await peer.respond(elicit["id"], {"action": "accept", "content": {"n": "x"}})
        _, done = await peer.response_to(prompt_id)
        assert done["result"]["stopReason"] == "end_turn"

    calls = [(e["call"], e["result"]) for e in journal_lines(journal) if e["kind"] == "result"]
    assert calls == [
        ("session/request_permission", {"outcome": {"outcome": "selected", "optionId": "allow"}}),
        ("terminal/create", {"terminalId": "term-1"}),
        ("terminal/wait_for_exit", {"exitCode": 0}),
        ("terminal/output", {"output": "hi\n", "truncated": False, "exitStatus": {"exitCode": 0}}),
        ("terminal/release", {}),
        ("elicitation/create", {"action": "accept", "content": {"n": "x"}}),
    ]

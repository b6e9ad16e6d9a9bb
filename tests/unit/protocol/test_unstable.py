"""The unstable protocol module (`acp_nvim/protocol/unstable.py`, `unstable_methods.py`): generated apart from
the stable one, every new method's types and every new update kind round-trip valid against the package's
`schema.unstable.json`, lenient where the schema says so, and a stable agent's messages decode as before."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_nvim.protocol import codec, methods, unstable_methods
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from tests.conftest import ROOT, SCHEMA_PATH
from tests.schema_check import assert_valid, is_valid
from tests.wire_check import WireCheck

UNSTABLE_SCHEMA_PATH = SCHEMA_PATH.with_name("schema.unstable.json")
GENERATOR = ROOT / "tools" / "gen_protocol.py"
PROTOCOL = ROOT / "acp_nvim" / "protocol"
SID = "sess-1"
TEXT = {"type": "text", "text": "hi"}
USAGE = {"totalTokens": 30, "inputTokens": 20, "outputTokens": 10, "cachedReadTokens": 5}


@pytest.fixture(scope="module")
def unstable_schema() -> dict[str, Any]:
    return json.loads(UNSTABLE_SCHEMA_PATH.read_text())


# A value of each params and result type of the methods only the unstable schema has, as an agent or the
# client would send it.
METHOD_VALUES: dict[str, dict[str, Any]] = {
    "ForkSessionRequest": {
        "sessionId": SID,
        "cwd": "/w",
        "mcpServers": [{"name": "fs", "command": "mcp-fs", "args": [], "env": []}],
        "systemPrompt": {"mode": "append", "content": [TEXT]},
    },
    "ForkSessionResponse": {
        "sessionId": "sess-2",
        "modes": {"currentModeId": "ask", "availableModes": [{"id": "ask", "name": "Ask"}]},
    },
    "SetSessionTitleRequest": {"sessionId": SID, "title": "Refactor the parser"},
    "SetSessionTitleResponse": {"title": "Refactor the parser"},
    "ArchiveSessionRequest": {"sessionId": SID},
    "ArchiveSessionResponse": {},
    "UnarchiveSessionRequest": {"sessionId": SID},
    "UnarchiveSessionResponse": {},
    "SessionStatusRequest": {"sessionId": SID},
    "SessionStatusResponse": {"status": "open"},
    "ListProvidersRequest": {},
    "ListProvidersResponse": {
        "providers": [
            {
                "providerId": "openai",
                "supported": ["openai"],
                "required": False,
                "current": {"apiType": "openai", "baseUrl": "https://api.example"},
            }
        ]
    },
    "SetProviderRequest": {"providerId": "openai", "apiType": "openai", "baseUrl": "https://api.example"},
    "SetProviderResponse": {},
    "DisableProviderRequest": {"providerId": "openai"},
    "DisableProviderResponse": {},
    "AuthStatusRequest": {},
    "AuthStatusResponse": {"state": "authenticated", "accounts": [{"label": "me", "active": True}]},
    "AuthStatusUpdateNotification": {"state": "unauthenticated"},
    "MessageMcpRequest": {"serverId": "srv", "requestId": "r1", "method": "tools/list"},
    "MessageMcpResponse": {"result": {"tools": []}},
    "MessageMcpNotification": {"serverId": "srv", "requestId": "r1", "method": "notifications/cancelled"},
    "InitializeProxyRequest": {
        "protocolVersion": 1,
        "clientCapabilities": {"fs": {}, "auth": {}, "subagents": {}, "plan": {}},
    },
    "InitializeProxyResponse": {
        "protocolVersion": 1,
        "agentCapabilities": {
            "promptCapabilities": {},
            "mcpCapabilities": {},
            "sessionCapabilities": {"fork": {}},
            "auth": {},
        },
    },
    "ProxySuccessorRequest": {"method": "session/new", "params": {"cwd": "/w"}},
    "ProxySuccessorResponse": {"sessionId": "x"},
    "ProxySuccessorNotification": {"method": "session/cancel"},
}


def test_every_method_only_the_unstable_schema_has_gets_a_value_here(unstable_schema: dict[str, Any]) -> None:
    new = {
        n for n, d in unstable_schema["$defs"].items() if d.get("x-method") in unstable_methods.NEW_METHODS
    }
    assert new == set(METHOD_VALUES)


@pytest.mark.parametrize("name", sorted(METHOD_VALUES))
def test_new_method_types_round_trip_valid_against_the_unstable_schema(
    name: str, unstable_schema: dict[str, Any]
) -> None:
    value = METHOD_VALUES[name]
    assert_valid(unstable_schema, name, value)
    decoded = codec.decode(json.dumps(value).encode(), getattr(u, name))
    assert json.loads(codec.encode(decoded)) == value


def notification(update: dict[str, Any]) -> bytes:
    return json.dumps({"sessionId": SID, "update": update}).encode()


UPDATES: list[tuple[dict[str, Any], type[Any]]] = [
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": "p1",
                "entries": [{"content": "a", "priority": "high", "status": "pending"}],
            },
        },
        u.SessionUpdatePlanUpdate,
    ),
    (
        {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "p1", "content": "# Plan"}},
        u.SessionUpdatePlanUpdate,
    ),
    (
        {
            "sessionUpdate": "plan_update",
            "plan": {"type": "file", "planId": "p1", "uri": "file:///w/PLAN.md"},
        },
        u.SessionUpdatePlanUpdate,
    ),
    ({"sessionUpdate": "plan_removed", "planId": "p1"}, u.SessionUpdatePlanRemoved),
    (
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child-1",
            "title": "Explore the tests",
            "capabilities": {"cancel": {}},
            "state": {"state": "running"},
            "cwd": "/w",
        },
        u.SessionUpdateSubagentUpdate,
    ),
    (
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child-1",
            "state": {"state": "idle", "stopReason": "end_turn", "usage": USAGE},
        },
        u.SessionUpdateSubagentUpdate,
    ),
    (
        {
            "sessionUpdate": "subagent_update",
            "sessionId": "child-1",
            "state": {"state": "idle", "stopReason": "error", "error": {"code": -32603, "message": "boom"}},
        },
        u.SessionUpdateSubagentUpdate,
    ),
    (
        {"sessionUpdate": "subagent_update", "sessionId": "child-1", "state": {"state": "requires_action"}},
        u.SessionUpdateSubagentUpdate,
    ),
    (
        {"sessionUpdate": "subagent_update", "sessionId": "child-1", "state": {"state": "unknown"}},
        u.SessionUpdateSubagentUpdate,
    ),
    (
        {
            "sessionUpdate": "session_message",
            "messageId": "m1",
            "senderSessionId": "child-1",
            "recipientSessionId": SID,
            "content": [TEXT],
        },
        u.SessionUpdateSessionMessage,
    ),
    (
        {"sessionUpdate": "session_message_chunk", "messageId": "m1", "content": TEXT},
        u.SessionUpdateSessionMessageChunk,
    ),
]


def test_every_unstable_update_kind_is_covered() -> None:
    assert {update["sessionUpdate"] for update, _ in UPDATES} == codec.UNSTABLE_SESSION_UPDATE_KINDS
    assert not codec.UNSTABLE_SESSION_UPDATE_KINDS & codec.SESSION_UPDATE_KINDS


@pytest.mark.parametrize(
    ("update", "cls"), UPDATES, ids=[f"{u['sessionUpdate']}-{i}" for i, (u, _) in enumerate(UPDATES)]
)
def test_unstable_update_kinds_decode_and_round_trip(
    update: dict[str, Any], cls: type[Any], unstable_schema: dict[str, Any], schema: dict[str, Any]
) -> None:
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and type(decoded.update) is cls
    reencoded = json.loads(codec.encode(decoded))
    assert reencoded == {"sessionId": SID, "update": update}
    assert_valid(unstable_schema, "SessionNotification", reencoded)
    # Kept apart: none of these is a stable update.
    assert not is_valid(schema, "SessionNotification", reencoded)


def test_a_subagent_state_reads_as_typed_values() -> None:
    decoded = codec.decode_session_update(notification(UPDATES[5][0]))
    assert decoded is not None and isinstance(decoded.update, u.SubagentUpdate)
    state = decoded.update.state
    assert isinstance(state, u.StateUpdateIdle) and state.stop_reason == "end_turn"
    assert state.usage is not None and (state.usage.total_tokens, state.usage.cached_read_tokens) == (30, 5)


def test_an_unknown_subagent_state_or_stop_reason_is_kept_raw() -> None:
    update = {"sessionUpdate": "subagent_update", "sessionId": "c", "state": {"state": "paused", "why": 1}}
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and isinstance(decoded.update, u.SubagentUpdate)
    assert decoded.update.state == u.StateUpdateOther(state="paused")
    update["state"] = {"state": "idle", "stopReason": "exploded"}
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and isinstance(decoded.update, u.SubagentUpdate)
    assert (
        isinstance(decoded.update.state, u.StateUpdateIdle) and decoded.update.state.stop_reason == "exploded"
    )


def test_an_invalid_lenient_field_is_dropped_not_the_update(caplog: pytest.LogCaptureFixture) -> None:
    # `state` is x-deserialize-default-on-error: the subagent update stays, its state is unknown.
    update = {"sessionUpdate": "subagent_update", "sessionId": "c", "state": "running", "title": "T"}
    with caplog.at_level(logging.INFO, logger="acp_nvim.protocol"):
        decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and isinstance(decoded.update, u.SubagentUpdate)
    assert (decoded.update.state, decoded.update.title) == (None, "T")
    assert "StateUpdateOrNone" in caplog.text


def test_a_malformed_unstable_update_raises_naming_the_field() -> None:
    with pytest.raises(msgspec.ValidationError, match="planId"):
        codec.decode_session_update(notification({"sessionUpdate": "plan_removed"}))


def test_a_kind_no_schema_has_is_still_skipped() -> None:
    assert codec.decode_session_update(notification({"sessionUpdate": "brand_new", "x": 1})) is None


def test_stable_updates_decode_to_the_stable_classes() -> None:
    decoded = codec.decode_session_update(
        notification({"sessionUpdate": "agent_message_chunk", "content": TEXT})
    )
    assert decoded is not None and type(decoded.update) is s.SessionUpdateAgentMessageChunk


def test_prompt_response_usage_is_read_and_a_bad_one_dropped(unstable_schema: dict[str, Any]) -> None:
    raw = {"stopReason": "end_turn", "usage": USAGE}
    response = codec.decode_result(json.dumps(raw).encode(), u.PromptResponse)
    assert isinstance(response, s.PromptResponse)
    assert response.usage is not None and response.usage.output_tokens == 10
    assert_valid(unstable_schema, "PromptResponse", json.loads(codec.encode(response)))
    bad = codec.decode_result(b'{"stopReason":"end_turn","usage":{"totalTokens":"many"}}', u.PromptResponse)
    assert (bad.stop_reason, bad.usage) == ("end_turn", None)
    # What a stable agent sends decodes as before.
    assert codec.decode_result(b'{"stopReason":"cancelled"}', u.PromptResponse).usage is None


def test_extended_types_are_the_stable_ones_with_the_unstable_fields() -> None:
    for name in (
        "InitializeResponse",
        "AgentCapabilities",
        "SessionCapabilities",
        "PromptResponse",
        "ClientCapabilities",
    ):
        assert issubclass(getattr(u, name), getattr(s, name)), name
    # Redefined where a union they hold gained variants: not subclasses, so not mistaken for stable ones.
    assert not issubclass(u.SessionNotification, s.SessionNotification)
    # Nothing stable is repeated: a name here is unstable.
    stable_only = {n for n in dir(s) if n[0].isupper()} - {n for n in dir(u) if n[0].isupper()}
    assert {"ToolCall", "ContentBlock", "SessionUpdateToolCall"} <= stable_only


def test_client_capabilities_can_carry_subagents_and_plans(unstable_schema: dict[str, Any]) -> None:
    caps = u.ClientCapabilities(subagents=u.SubagentCapabilities(), plan=u.PlanCapabilities())
    value = json.loads(codec.encode(caps))
    assert value == {"fs": {}, "auth": {}, "subagents": {}, "plan": {}}
    assert_valid(unstable_schema, "ClientCapabilities", value)


def test_unstable_method_tables() -> None:
    fork = unstable_methods.AGENT_METHODS[unstable_methods.SESSION_FORK]
    assert (fork.params, fork.result, fork.side) == (u.ForkSessionRequest, u.ForkSessionResponse, "agent")
    assert unstable_methods.AGENT_METHODS["initialize"].result is u.InitializeResponse
    assert unstable_methods.AGENT_METHODS["session/cancel"].params is s.CancelNotification
    # `mcp/message` is a method of both sides, each with its own types.
    assert unstable_methods.AGENT_METHODS["mcp/message"].is_notification
    assert unstable_methods.CLIENT_METHODS["mcp/message"].params is u.MessageMcpRequest
    assert unstable_methods.NEW_METHODS.isdisjoint(methods.METHODS)
    assert {
        "session/fork",
        "session/set_title",
        "session/archive",
        "session/unarchive",
    } <= unstable_methods.NEW_METHODS
    stable = set(methods.AGENT_METHODS) | set(methods.CLIENT_METHODS)
    assert stable <= set(unstable_methods.AGENT_METHODS) | set(unstable_methods.CLIENT_METHODS)


def test_a_stale_unstable_module_is_reported(tmp_path: Path) -> None:
    for name in ("schema.py", "methods.py", "unstable_methods.py"):
        shutil.copyfile(PROTOCOL / name, tmp_path / name)
    (tmp_path / "unstable.py").write_text("# stale\n")
    argv = [sys.executable, str(GENERATOR), "--check", "--output", str(tmp_path / "schema.py")]
    argv += ["--methods-output", str(tmp_path / "methods.py")]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    # (The copies sit outside the project, where the formatter's settings differ: they are reported too.)
    assert proc.returncode == 1
    assert f"{tmp_path / 'unstable.py'} is out of date" in proc.stderr


def test_the_modules_are_stamped_with_the_package_that_made_them() -> None:
    package = json.loads((SCHEMA_PATH.parents[2] / "package.json").read_text())
    stamp = f"{package['name']}@{package['version']}"
    assert (package["name"], package["version"]) == (u.SCHEMA_PACKAGE, u.SCHEMA_VERSION)
    for name in ("unstable.py", "unstable_methods.py"):
        assert stamp in (PROTOCOL / name).read_text().splitlines()[0]


def test_the_wire_check_validates_unstable_methods_against_the_unstable_schema(
    schema: dict[str, Any],
) -> None:
    wire = WireCheck(schema)
    fork = {"sessionId": SID, "cwd": "/w", "mcpServers": []}
    wire.record(
        "out", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/fork", "params": fork}).encode()
    )
    wire.record(
        "out", json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/archive", "params": {}}).encode()
    )
    title = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "session/set_title",
        "params": {"sessionId": SID, "title": 3},
    }
    wire.record("out", json.dumps(title).encode())
    assert len(wire.problems) == 2, wire.problems
    assert wire.problems[0].startswith("session/archive params: unstable schema: ArchiveSessionRequest")
    assert wire.problems[1].startswith("session/set_title params: unstable schema: SetSessionTitleRequest")

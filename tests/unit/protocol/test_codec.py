"""Tagged-union dispatch, lenient decoding and schema-valid encoding of the generated protocol types."""

from __future__ import annotations

import json
import logging
from typing import Any

import msgspec
import pytest

from acp_nvim.protocol import PROTOCOL_VERSION, codec
from acp_nvim.protocol import schema as acp
from tests.schema_check import assert_valid

SID = "sess-1"


def notification(update: dict[str, Any]) -> bytes:
    return json.dumps({"sessionId": SID, "update": update}).encode()


TEXT = {"type": "text", "text": "hi"}
UPDATES: list[tuple[dict[str, Any], type[Any]]] = [
    ({"sessionUpdate": "user_message_chunk", "content": TEXT}, acp.SessionUpdateUserMessageChunk),
    (
        {"sessionUpdate": "agent_message_chunk", "content": TEXT, "messageId": "m1"},
        acp.SessionUpdateAgentMessageChunk,
    ),
    ({"sessionUpdate": "agent_thought_chunk", "content": TEXT}, acp.SessionUpdateAgentThoughtChunk),
    (
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "c1",
            "title": "Read",
            "kind": "read",
            "status": "pending",
        },
        acp.SessionUpdateToolCall,
    ),
    (
        {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"},
        acp.SessionUpdateToolCallUpdate,
    ),
    (
        {"sessionUpdate": "plan", "entries": [{"content": "a", "priority": "high", "status": "pending"}]},
        acp.SessionUpdatePlan,
    ),
    (
        {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [{"name": "w", "description": "d"}],
        },
        acp.SessionUpdateAvailableCommandsUpdate,
    ),
    ({"sessionUpdate": "current_mode_update", "currentModeId": "ask"}, acp.SessionUpdateCurrentModeUpdate),
    (
        {
            "sessionUpdate": "config_option_update",
            "configOptions": [
                {"type": "boolean", "id": "fast", "name": "Fast", "currentValue": True},
                {
                    "type": "select",
                    "id": "model",
                    "name": "Model",
                    "category": "model",
                    "currentValue": "a",
                    "options": [{"value": "a", "name": "A"}],
                },
            ],
        },
        acp.SessionUpdateConfigOptionUpdate,
    ),
    ({"sessionUpdate": "session_info_update", "title": None}, acp.SessionUpdateSessionInfoUpdate),
    ({"sessionUpdate": "usage_update", "used": 10, "size": 100}, acp.SessionUpdateUsageUpdate),
    ({"sessionUpdate": "notice", "severity": "info", "title": "Heads up"}, acp.SessionUpdateNotice),
    (
        {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "completed"},
        acp.SessionUpdateCompactionUpdate,
    ),
    (
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": TEXT},
        acp.SessionUpdateCompactionSummaryChunk,
    ),
]


def test_every_session_update_kind_is_covered() -> None:
    assert {u["sessionUpdate"] for u, _ in UPDATES} == codec.SESSION_UPDATE_KINDS


@pytest.mark.parametrize(("update", "cls"), UPDATES, ids=[u["sessionUpdate"] for u, _ in UPDATES])
def test_session_update_dispatch(update: dict[str, Any], cls: type[Any], schema: dict[str, Any]) -> None:
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and decoded.session_id == SID
    assert type(decoded.update) is cls
    reencoded = json.loads(codec.encode(decoded))
    assert reencoded == {"sessionId": SID, "update": update}
    assert_valid(schema, "SessionNotification", reencoded)


def test_tool_call_subclasses_its_schema_type() -> None:
    decoded = codec.decode_session_update(notification(UPDATES[3][0]))
    assert decoded is not None
    assert isinstance(decoded.update, acp.ToolCall)
    assert decoded.update.tool_call_id == "c1" and decoded.update.title == "Read"


@pytest.mark.parametrize(
    ("block", "cls"),
    [
        (TEXT, acp.ContentBlockText),
        ({"type": "image", "data": "AA==", "mimeType": "image/png"}, acp.ContentBlockImage),
        ({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}, acp.ContentBlockAudio),
        ({"type": "resource_link", "name": "a.py", "uri": "file:///a.py"}, acp.ContentBlockResourceLink),
        ({"type": "resource", "resource": {"uri": "file:///a", "text": "x"}}, acp.ContentBlockResource),
        ({"type": "resource", "resource": {"uri": "file:///b", "blob": "AA=="}}, acp.ContentBlockResource),
    ],
)
def test_content_block_dispatch(block: dict[str, Any], cls: type[Any], schema: dict[str, Any]) -> None:
    decoded = codec.decode(json.dumps(block).encode(), acp.ContentBlock)
    assert type(decoded) is cls
    assert json.loads(codec.encode(decoded)) == block
    assert_valid(schema, "ContentBlock", block)


def test_embedded_resource_picks_text_or_blob_by_shape() -> None:
    text = codec.decode(b'{"type":"resource","resource":{"uri":"u","text":"x"}}', acp.ContentBlock)
    blob = codec.decode(b'{"type":"resource","resource":{"uri":"u","blob":"AA=="}}', acp.ContentBlock)
    assert isinstance(text, acp.ContentBlockResource) and isinstance(blob, acp.ContentBlockResource)
    assert isinstance(text.resource, acp.TextResourceContents)
    assert isinstance(blob.resource, acp.BlobResourceContents)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.resource"):
        codec.decode(b'{"type":"resource","resource":{"uri":"u"}}', acp.ContentBlock)


@pytest.mark.parametrize(
    ("content", "cls"),
    [
        ({"type": "content", "content": TEXT}, acp.ToolCallContentContent),
        ({"type": "diff", "path": "/a", "oldText": None, "newText": "x"}, acp.ToolCallContentDiff),
        ({"type": "diff", "path": "/a", "newText": "x"}, acp.ToolCallContentDiff),
        ({"type": "terminal", "terminalId": "t1"}, acp.ToolCallContentTerminal),
    ],
)
def test_tool_call_content_dispatch(content: dict[str, Any], cls: type[Any]) -> None:
    decoded = codec.decode(json.dumps(content).encode(), acp.ToolCallContent)
    assert type(decoded) is cls
    expected = {k: v for k, v in content.items() if v is not None}  # oldText null == omitted (new file)
    assert json.loads(codec.encode(decoded)) == expected


def test_permission_outcomes(schema: dict[str, Any]) -> None:
    selected = acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeSelected(option_id="allow"))
    cancelled = acp.RequestPermissionResponse(outcome=acp.RequestPermissionOutcomeCancelled())
    for value, wire in [
        (selected, {"outcome": {"outcome": "selected", "optionId": "allow"}}),
        (cancelled, {"outcome": {"outcome": "cancelled"}}),
    ]:
        encoded = codec.encode(value)
        assert json.loads(encoded) == wire
        assert_valid(schema, "RequestPermissionResponse", wire)
        assert codec.decode(encoded, acp.RequestPermissionResponse) == value


MCP = [
    (
        {"name": "fs", "command": "/bin/mcp", "args": ["-v"], "env": [{"name": "A", "value": "1"}]},
        acp.McpServerStdio,
    ),
    ({"type": "http", "name": "web", "url": "https://x", "headers": []}, acp.McpServerHttp),
    (
        {"type": "sse", "name": "ev", "url": "https://y", "headers": [{"name": "H", "value": "v"}]},
        acp.McpServerSse,
    ),
]


def test_mcp_servers_with_and_without_type(schema: dict[str, Any]) -> None:
    params = {"cwd": "/project", "mcpServers": [server for server, _ in MCP]}
    decoded = codec.decode(json.dumps(params).encode(), acp.NewSessionRequest)
    assert [type(s) for s in decoded.mcp_servers] == [cls for _, cls in MCP]
    encoded = json.loads(codec.encode(decoded))
    assert encoded == params  # stdio gets no "type" key: the schema's stdio variant has none
    assert_valid(schema, "NewSessionRequest", encoded)


def test_mcp_server_errors_name_the_field() -> None:
    bad_arg = b'{"cwd":"/","mcpServers":[{"name":"a","command":"x","args":[1],"env":[]}]}'
    with pytest.raises(
        msgspec.ValidationError, match=r"Expected `str`, got `int`.*args\[0\].*\$\.mcpServers\[0\]"
    ):
        codec.decode(bad_arg, acp.NewSessionRequest)
    with pytest.raises(msgspec.ValidationError, match=r"missing required field `url`.*\$\.mcpServers\[0\]"):
        codec.decode(
            b'{"cwd":"/","mcpServers":[{"type":"http","name":"a","headers":[]}]}', acp.NewSessionRequest
        )
    with pytest.raises(msgspec.ValidationError, match=r"`type` value 'ws'"):
        codec.decode(b'{"cwd":"/","mcpServers":[{"type":"ws","name":"a"}]}', acp.NewSessionRequest)


def test_auth_methods_with_and_without_type(schema: dict[str, Any]) -> None:
    result = {
        "protocolVersion": 1,
        "authMethods": [
            {"id": "login", "name": "Log in", "description": "browser"},
            {"type": "terminal", "id": "tty", "name": "Terminal", "args": ["--login"], "env": {"X": "1"}},
        ],
    }
    decoded = codec.decode(json.dumps(result).encode(), acp.InitializeResponse)
    agent, terminal = decoded.auth_methods
    assert isinstance(agent, acp.AuthMethodAgent) and agent.id == "login"
    assert isinstance(terminal, acp.AuthMethodTerminal) and terminal.args == ["--login"]
    encoded = json.loads(codec.encode(decoded))
    assert encoded["authMethods"] == result["authMethods"]
    assert_valid(schema, "InitializeResponse", encoded)


def test_config_option_select_groups_and_set_requests(schema: dict[str, Any]) -> None:
    grouped = {
        "type": "select",
        "id": "model",
        "name": "Model",
        "currentValue": "a",
        "options": [{"group": "g", "name": "G", "options": [{"value": "a", "name": "A"}]}],
    }
    option = codec.decode(json.dumps(grouped).encode(), acp.SessionConfigOption)
    assert isinstance(option, acp.SessionConfigOptionSelect)
    assert isinstance(option.options[0], acp.SessionConfigSelectGroup)
    assert json.loads(codec.encode(option)) == grouped
    for request, wire in [
        (
            acp.SetSessionConfigOptionRequestBoolean(session_id=SID, config_id="fast", value=True),
            {"sessionId": SID, "configId": "fast", "type": "boolean", "value": True},
        ),
        (
            acp.SetSessionConfigOptionRequestValue(session_id=SID, config_id="model", value="a"),
            {"sessionId": SID, "configId": "model", "value": "a"},
        ),
    ]:
        assert json.loads(codec.encode(request)) == wire
        assert_valid(schema, "SetSessionConfigOptionRequest", wire)
        assert codec.decode(json.dumps(wire).encode(), acp.SetSessionConfigOptionRequest) == request


def test_elicitation_form_and_response(schema: dict[str, Any]) -> None:
    params = {
        "message": "Pick",
        "mode": "form",
        "sessionId": SID,
        "requestedSchema": {
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "level": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
            },
            "required": ["name"],
        },
    }
    decoded = codec.decode(json.dumps(params).encode(), acp.CreateElicitationRequest)
    assert isinstance(decoded, acp.CreateElicitationRequestForm)
    props = decoded.requested_schema.properties
    assert isinstance(props["name"], acp.ElicitationPropertySchemaString)
    assert isinstance(props["tags"], acp.ElicitationPropertySchemaArray)
    assert isinstance(props["tags"].items, acp.MultiSelectItemsString)
    assert isinstance(props["level"], acp.ElicitationPropertySchemaArray)
    assert isinstance(props["level"].items, acp.TitledMultiSelectItems)
    assert json.loads(codec.encode(decoded)) == params
    assert_valid(schema, "CreateElicitationRequest", params)
    accept = acp.CreateElicitationResponseAccept(content={"name": "x", "tags": ["a"]})
    for response in (accept, acp.CreateElicitationResponseDecline(), acp.CreateElicitationResponseCancel()):
        assert_valid(schema, "CreateElicitationResponse", json.loads(codec.encode(response)))


def test_unknown_session_update_is_skipped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="acp_nvim.protocol"):
        assert codec.decode_session_update(notification({"sessionUpdate": "brand_new", "x": 1})) is None
    assert "brand_new" in caplog.text


@pytest.mark.parametrize(
    ("update", "message"),
    [
        (
            {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 1}},
            "$.update.content.text",
        ),
        ({"sessionUpdate": "tool_call", "title": "x"}, "toolCallId"),
        ({"content": TEXT}, "sessionUpdate"),
    ],
)
def test_malformed_known_update_raises_naming_the_field(update: dict[str, Any], message: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=message.replace("$", r"\$").replace(".", r"\.")):
        codec.decode_session_update(notification(update))


def test_unknown_enum_values_are_kept_raw() -> None:
    update = {
        "sessionUpdate": "tool_call",
        "toolCallId": "c",
        "title": "t",
        "kind": "teleport",
        "status": "odd",
    }
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and isinstance(decoded.update, acp.ToolCall)
    assert (decoded.update.kind, decoded.update.status) == ("teleport", "odd")
    response = codec.decode(b'{"stopReason":"exploded"}', acp.PromptResponse)
    assert response.stop_reason == "exploded"


def test_unknown_fields_are_ignored_and_meta_round_trips() -> None:
    raw = b'{"sessionId":"s","extra":{"deep":[1]},"_meta":{"traceparent":"00-1","x":[1,{"y":null}]}}'
    decoded = codec.decode(raw, acp.NewSessionResponse)
    assert decoded.meta == {"traceparent": "00-1", "x": [1, {"y": None}]}
    assert json.loads(codec.encode(decoded)) == {"sessionId": "s", "_meta": decoded.meta}


def test_result_null_means_empty_response() -> None:
    assert codec.decode_result(b"null", acp.LoadSessionResponse) == acp.LoadSessionResponse()
    assert codec.decode_result(None, acp.WriteTextFileResponse) == acp.WriteTextFileResponse()
    assert (
        codec.decode_result(msgspec.Raw(b" null "), acp.SetSessionModeResponse)
        == acp.SetSessionModeResponse()
    )
    assert codec.decode_result(b"{}", acp.AuthenticateResponse) == acp.AuthenticateResponse()
    with pytest.raises(msgspec.ValidationError, match="null"):
        codec.decode_result(b"null", acp.PromptResponse)


def test_missing_params_are_refused_like_null_params() -> None:
    """A request or notification without params is decoded as `null`: refused with a clear error, never
    taken for an empty object."""
    with pytest.raises(msgspec.ValidationError, match="null"):
        codec.decode(None, acp.PromptRequest)
    with pytest.raises(msgspec.ValidationError, match="null"):
        codec.decode_session_update(None)


def test_decode_accepts_raw_slices_of_an_envelope() -> None:
    class Envelope(msgspec.Struct):
        params: msgspec.Raw

    envelope = msgspec.json.decode(b'{"params":{"sessionId":"s","prompt":[]}}', type=Envelope)
    assert codec.decode(envelope.params, acp.PromptRequest) == acp.PromptRequest(session_id="s", prompt=[])


def test_tri_state_field_sends_null_only_when_asked() -> None:
    assert codec.encode(acp.SessionInfoUpdate()) == b"{}"
    assert codec.encode(acp.SessionInfoUpdate(title=None)) == b'{"title":null}'
    decoded = codec.decode(b"{}", acp.SessionInfoUpdate)
    assert decoded.title is msgspec.UNSET
    assert codec.decode(b'{"title":null}', acp.SessionInfoUpdate).title is None


def test_capability_presence_survives_a_round_trip() -> None:
    raw = b'{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"list":{},"close":{}}}}'
    decoded = codec.decode(raw, acp.InitializeResponse)
    caps = decoded.agent_capabilities.session_capabilities
    assert caps.list is not None and caps.close is not None and caps.resume is None
    assert decoded.agent_capabilities.load_session is False  # schema default when omitted
    again = json.loads(codec.encode(decoded))
    assert again["agentCapabilities"]["sessionCapabilities"] == {"list": {}, "close": {}}


def test_client_requests_we_build_are_schema_valid(schema: dict[str, Any]) -> None:
    text = acp.ContentBlockText(text="explain")
    link = acp.ContentBlockResourceLink(name="a.py", uri="file:///p/a.py")
    embedded = acp.ContentBlockResource(resource=acp.TextResourceContents(uri="file:///p/b.py", text="x"))
    requests: list[tuple[str, Any]] = [
        (
            "InitializeRequest",
            acp.InitializeRequest(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=acp.ClientCapabilities(
                    fs=acp.FileSystemCapabilities(read_text_file=True, write_text_file=True),
                    terminal=True,
                    elicitation=acp.ElicitationCapabilities(form=acp.ElicitationFormCapabilities()),
                ),
                client_info=acp.Implementation(name="acp.nvim", version="0.1.0", title="acp.nvim"),
            ),
        ),
        ("InitializeRequest", acp.InitializeRequest(protocol_version=1)),
        ("AuthenticateRequest", acp.AuthenticateRequest(method_id="login")),
        ("LogoutRequest", acp.LogoutRequest()),
        ("NewSessionRequest", acp.NewSessionRequest(cwd="/p", mcp_servers=[])),
        (
            "LoadSessionRequest",
            acp.LoadSessionRequest(session_id=SID, cwd="/p", mcp_servers=[], additional_directories=["/q"]),
        ),
        ("ResumeSessionRequest", acp.ResumeSessionRequest(session_id=SID, cwd="/p")),
        ("CloseSessionRequest", acp.CloseSessionRequest(session_id=SID)),
        ("ListSessionsRequest", acp.ListSessionsRequest(cwd="/p")),
        ("DeleteSessionRequest", acp.DeleteSessionRequest(session_id=SID)),
        ("SetSessionModeRequest", acp.SetSessionModeRequest(session_id=SID, mode_id="ask")),
        ("PromptRequest", acp.PromptRequest(session_id=SID, prompt=[text, link, embedded])),
        ("CancelNotification", acp.CancelNotification(session_id=SID)),
        ("CancelRequestNotification", acp.CancelRequestNotification(request_id=3)),
        ("ReadTextFileResponse", acp.ReadTextFileResponse(content="x")),
        ("WriteTextFileResponse", acp.WriteTextFileResponse()),
        ("CreateTerminalResponse", acp.CreateTerminalResponse(terminal_id="t")),
        (
            "TerminalOutputResponse",
            acp.TerminalOutputResponse(
                output="o", truncated=False, exit_status=acp.TerminalExitStatus(exit_code=0)
            ),
        ),
        ("WaitForTerminalExitResponse", acp.WaitForTerminalExitResponse(exit_code=None, signal="TERM")),
        ("KillTerminalResponse", acp.KillTerminalResponse()),
        ("ReleaseTerminalResponse", acp.ReleaseTerminalResponse()),
    ]
    for def_name, value in requests:
        encoded = json.loads(codec.encode(value))
        assert_valid(schema, def_name, encoded)
        assert codec.decode(codec.encode(value), type(value)) == value


def test_unknown_config_option_type_is_dropped_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    result = {
        "sessionId": "s",
        "configOptions": [
            {"type": "slider", "id": "temp", "name": "Temperature", "currentValue": 0.5},
            {"type": "boolean", "id": "fast", "name": "Fast", "currentValue": False},
        ],
    }
    with caplog.at_level(logging.INFO, logger="acp_nvim.protocol"):
        decoded = codec.decode(json.dumps(result).encode(), acp.NewSessionResponse)
    assert decoded.config_options is not None
    assert [option.id for option in decoded.config_options] == ["fast"]
    assert "SessionConfigOptionList" in caplog.text


def test_unknown_tool_call_content_is_dropped_and_the_update_kept() -> None:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": [{"type": "hologram"}, {"type": "terminal", "terminalId": "t"}],
    }
    decoded = codec.decode_session_update(notification(update))
    assert decoded is not None and isinstance(decoded.update, acp.SessionUpdateToolCallUpdate)
    assert decoded.update.content == [acp.ToolCallContentTerminal(terminal_id="t")]
    with pytest.raises(msgspec.ValidationError, match=r"Expected `array`.*\$\.update\.content"):
        codec.decode_session_update(notification({**update, "content": "nope"}))

"""The MCP server's protocol on a real JSON-RPC connection over in-memory streams: the handshake's version
negotiation, tools/list, tools/call, and which failures are JSON-RPC errors and which are tool errors."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_nvim.mcp.messages import (
    LATEST_PROTOCOL_VERSION,
    CallToolResult,
    Implementation,
    TextContent,
    Tool,
    ToolError,
)
from acp_nvim.mcp.server import McpServer, serve

pytestmark = pytest.mark.anyio

ECHO = Tool(name="echo", description="says it back", input_schema={"type": "object"})


async def call(name: str, arguments: dict[str, object]) -> CallToolResult:
    if "fail" in arguments:
        raise ToolError("refused: " + str(arguments["fail"]))
    return CallToolResult(content=[TextContent(text=json.dumps(arguments))])


async def exchange(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    """Each message sent in turn, and the server's answer to each request."""
    server = McpServer(Implementation(name="t", version="1"), [ECHO], call, "be nice")
    to_server_send, to_server = anyio.create_memory_object_stream[bytes](100)
    from_server, from_server_receive = anyio.create_memory_object_stream[bytes](100)
    answers: list[dict[str, Any]] = []

    class Receive(anyio.abc.ByteReceiveStream):
        async def receive(self, max_bytes: int = 65536) -> bytes:
            try:
                return await to_server.receive()
            except anyio.EndOfStream:
                raise anyio.EndOfStream from None

        async def aclose(self) -> None:
            pass

    class Send(anyio.abc.ByteSendStream):
        async def send(self, item: bytes) -> None:
            await from_server.send(item)

        async def aclose(self) -> None:
            pass

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve, server, Receive(), Send())
            buffer = b""
            for message in messages:
                await to_server_send.send(json.dumps(message).encode() + b"\n")
                if "id" not in message:
                    continue
                while b"\n" not in buffer:
                    buffer += await from_server_receive.receive()
                line, buffer = buffer.split(b"\n", 1)
                answers.append(json.loads(line))
            await to_server_send.aclose()
    return answers


def initialize(version: str, ident: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": params}


async def test_the_client_version_is_kept_when_known_else_the_newest_is_offered() -> None:
    known, unknown = await exchange(initialize("2025-06-18"), initialize("2030-01-01", 2))
    assert known["result"]["protocolVersion"] == "2025-06-18"
    assert unknown["result"]["protocolVersion"] == LATEST_PROTOCOL_VERSION == "2025-11-25"
    assert known["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert known["result"]["serverInfo"] == {"name": "t", "version": "1"}
    assert known["result"]["instructions"] == "be nice"


async def test_tools_are_listed_with_their_schemas_and_called() -> None:
    answers = await exchange(
        initialize("2025-11-25"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"a": 1}},
        },
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"fail": 2}},
        },
    )
    listed, called, refused = answers[1:]
    assert listed["result"] == {
        "tools": [{"name": "echo", "description": "says it back", "inputSchema": {"type": "object"}}]
    }
    assert called["result"] == {"content": [{"type": "text", "text": '{"a": 1}'}], "isError": False}
    assert refused["result"] == {"content": [{"type": "text", "text": "refused: 2"}], "isError": True}


async def test_what_the_spec_makes_json_rpc_errors() -> None:
    unknown_method, unknown_tool, no_name, ping = await exchange(
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "rm"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "ping"},
    )
    assert unknown_method["error"]["code"] == -32601
    assert unknown_tool["error"]["code"] == -32602 and "rm" in unknown_tool["error"]["message"]
    assert no_name["error"]["code"] == -32602
    assert ping["result"] == {}

"""The MCP server's protocol: the handshake, `tools/list` and `tools/call` on a JSON-RPC connection
(`acp_nvim/jsonrpc/`), with what the spec says of each error.

A tool the client did not get from `tools/list` and a `tools/call` whose params are not an object with a
`name` are JSON-RPC errors (-32602); everything a tool refuses or fails at, bad arguments included, is a
tool error (`isError: true`) the model reads. Any other method is -32601; requests are served before
`notifications/initialized` too (the spec asks clients to wait, not servers to refuse).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_nvim.jsonrpc import Connection, InvalidParams, MethodNotFound

from .messages import (
    CallToolParams,
    CallToolResult,
    EmptyResult,
    Implementation,
    InitializeParams,
    InitializeResult,
    ListToolsResult,
    ServerCapabilities,
    TextContent,
    Tool,
    ToolError,
    negotiate,
)

log = logging.getLogger("acp_nvim.mcp")

# A tool's call: its name and arguments (an object, maybe empty) -> its result; raise ToolError to refuse.
ToolCall = Callable[[str, dict[str, object]], Awaitable[CallToolResult]]
CANCELLED = "notifications/cancelled"


def tool_error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(text=message)], is_error=True)


class McpServer:
    def __init__(
        self, info: Implementation, tools: Sequence[Tool], call: ToolCall, instructions: str | None = None
    ) -> None:
        self._info = info
        self._tools = {tool.name: tool for tool in tools}
        self._call = call
        self._instructions = instructions
        self.version: str | None = None

    async def on_request(self, method: str, params: msgspec.Raw | None) -> object:
        if method == "initialize":
            request = msgspec.json.decode(params or b"null", type=InitializeParams)
            self.version = negotiate(request.protocol_version)
            result = InitializeResult(
                protocol_version=self.version, capabilities=ServerCapabilities(), server_info=self._info
            )
            if self._instructions:
                result.instructions = self._instructions
            return result
        if method == "ping":
            return EmptyResult()
        if method == "tools/list":
            return ListToolsResult(tools=list(self._tools.values()))
        if method == "tools/call":
            call = msgspec.json.decode(params or b"null", type=CallToolParams)
            if call.name not in self._tools:
                raise InvalidParams(f"unknown tool: {call.name!r} (tools/list names them)")
            try:
                return await self._call(call.name, call.arguments or {})
            except ToolError as err:
                return tool_error(str(err))
        raise MethodNotFound.for_method(method)

    def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        # notifications/initialized needs nothing; cancellations are the connection's (`cancel_method`).
        return None


async def serve(server: McpServer, receive: ByteReceiveStream, send: ByteSendStream) -> None:
    """Serves the client until its stream ends (it closed our stdin) or the caller cancels."""
    connection = Connection(
        receive,
        send,
        on_request=server.on_request,
        on_notification=server.on_notification,
        peer_name="MCP client",
        cancel_method=CANCELLED,
    )
    await connection.serve()

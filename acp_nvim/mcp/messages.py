"""The MCP messages this server reads and sends, as msgspec Structs (the spec's names, camelCase on the wire).

Only what a tools-only server needs: the `initialize` handshake, `tools/list`, `tools/call` and their results.
The versions are those negotiated through `initialize`; the stateless revision (2026-07-28, `server/discover`)
is not spoken, and a client that offers only it gets this server's newest handshake version, as the spec's
negotiation says.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from msgspec import UNSET, UnsetType

# Oldest to newest; the server answers the client's version when it knows it, else its newest.
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]


def negotiate(requested: str) -> str:
    return requested if requested in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION


class Implementation(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    version: str
    title: str | UnsetType = UNSET


class InitializeParams(msgspec.Struct, kw_only=True, rename="camel"):
    protocol_version: str
    capabilities: dict[str, object] = {}
    client_info: dict[str, object] | None = None


class ToolsCapability(msgspec.Struct, rename="camel"):
    list_changed: bool = False


class ServerCapabilities(msgspec.Struct):
    tools: ToolsCapability = msgspec.field(default_factory=ToolsCapability)


class InitializeResult(msgspec.Struct, kw_only=True, rename="camel"):
    protocol_version: str
    capabilities: ServerCapabilities
    server_info: Implementation
    instructions: str | UnsetType = UNSET


class ToolAnnotations(msgspec.Struct, kw_only=True, rename="camel"):
    """Hints for the client: every tool here reads and changes nothing, and stays inside this machine."""

    title: str | UnsetType = UNSET
    read_only_hint: bool = True
    destructive_hint: bool = False
    idempotent_hint: bool = True
    open_world_hint: bool = False


class Tool(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    name: str
    description: str
    input_schema: dict[str, object]
    title: str | UnsetType = UNSET
    output_schema: dict[str, object] | UnsetType = UNSET
    annotations: ToolAnnotations | UnsetType = UNSET


class ListToolsResult(msgspec.Struct, kw_only=True):
    tools: list[Tool]


class CallToolParams(msgspec.Struct, kw_only=True):
    name: str
    arguments: dict[str, object] | None = None


class TextContent(msgspec.Struct, kw_only=True, tag="text", tag_field="type"):
    text: str


class CallToolResult(msgspec.Struct, kw_only=True, rename="camel"):
    content: list[TextContent]
    structured_content: dict[str, object] | UnsetType = UNSET
    is_error: bool = False


class ToolError(Exception):
    """What a tool answers when it cannot do what was asked (a bad argument, a path outside the session's
    folders, no language server): an MCP tool error (`isError: true`), which the model reads and can act on,
    never a JSON-RPC error."""


class EmptyResult(msgspec.Struct):
    pass


ServerMethod = Literal["initialize", "ping", "tools/list", "tools/call"]

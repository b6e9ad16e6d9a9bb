"""TEMPORARY STUB (fork29, not committed): the unstable Structs fork29 uses, until unstable29 lands."""

from __future__ import annotations

import msgspec

from acp_nvim.protocol import schema as s
from acp_nvim.protocol.runtime import AcpStruct


class SessionForkCapabilities(AcpStruct, kw_only=True):
    pass


class SessionTitleCapabilities(AcpStruct, kw_only=True):
    pass


class SessionArchiveCapabilities(AcpStruct, kw_only=True):
    pass


class SessionCapabilities(AcpStruct, kw_only=True):
    fork: SessionForkCapabilities | None = None
    archive: SessionArchiveCapabilities | None = None
    title: SessionTitleCapabilities | None = None


class AgentCapabilities(AcpStruct, kw_only=True):
    session_capabilities: SessionCapabilities = msgspec.field(
        name="sessionCapabilities", default_factory=lambda: SessionCapabilities()
    )


class InitializeResponse(AcpStruct, kw_only=True):
    protocol_version: int = msgspec.field(name="protocolVersion")
    agent_capabilities: AgentCapabilities = msgspec.field(
        name="agentCapabilities", default_factory=lambda: AgentCapabilities()
    )


class ForkSessionRequest(AcpStruct, kw_only=True):
    session_id: str = msgspec.field(name="sessionId")
    cwd: str
    additional_directories: list[str] | None = msgspec.field(name="additionalDirectories", default=None)
    mcp_servers: list[s.McpServer] | None = msgspec.field(name="mcpServers", default=None)


class ForkSessionResponse(AcpStruct, kw_only=True):
    session_id: str = msgspec.field(name="sessionId")
    modes: s.SessionModeState | None = None
    config_options: s.SessionConfigOptionList | None = msgspec.field(name="configOptions", default=None)


class SetSessionTitleRequest(AcpStruct, kw_only=True):
    session_id: str = msgspec.field(name="sessionId")
    title: str


class SetSessionTitleResponse(AcpStruct, kw_only=True):
    title: str


class ArchiveSessionRequest(AcpStruct, kw_only=True):
    session_id: str = msgspec.field(name="sessionId")


class ArchiveSessionResponse(AcpStruct, kw_only=True):
    pass


class Usage(AcpStruct, kw_only=True):
    total_tokens: int = msgspec.field(name="totalTokens")
    input_tokens: int = msgspec.field(name="inputTokens")
    output_tokens: int = msgspec.field(name="outputTokens")
    thought_tokens: int | None = msgspec.field(name="thoughtTokens", default=None)
    cached_read_tokens: int | None = msgspec.field(name="cachedReadTokens", default=None)
    cached_write_tokens: int | None = msgspec.field(name="cachedWriteTokens", default=None)


class PromptResponse(AcpStruct, kw_only=True):
    stop_reason: str = msgspec.field(name="stopReason")
    usage: Usage | None = None

"""What an agent advertised decides what we may ask of it: a call it did not advertise is refused here with
`Unsupported` before anything is sent, and optional fields it does not know are left out of a request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.client")


class Unsupported(Exception):
    """A call the agent did not advertise; refused locally, nothing was sent."""


def session_capabilities(caps: s.AgentCapabilities) -> s.SessionCapabilities:
    return caps.session_capabilities or s.SessionCapabilities()


def additional_directories(caps: s.AgentCapabilities, directories: Sequence[str] | None) -> list[str] | None:
    # Sent only when advertised: an agent that does not know the field may reject the request.
    if not directories or session_capabilities(caps).additional_directories is None:
        return None
    return list(directories)


def mcp_left_out(caps: s.AgentCapabilities, servers: Sequence[s.McpServer]) -> list[tuple[str, str]]:
    """The servers a session request leaves out, with why: http/sse ones the agent did not advertise
    (stdio is always allowed)."""
    mcp = caps.mcp_capabilities or s.McpCapabilities()
    left_out: list[tuple[str, str]] = []
    for server in servers:
        if isinstance(server, s.McpServerHttp) and not mcp.http:
            left_out.append((server.name, "no http MCP support"))
        elif isinstance(server, s.McpServerSse) and not mcp.sse:
            left_out.append((server.name, "no sse MCP support"))
    return left_out


def allowed_mcp_servers(caps: s.AgentCapabilities, servers: Sequence[s.McpServer]) -> list[s.McpServer]:
    left_out = {name for name, _ in mcp_left_out(caps, servers)}
    for name in left_out:
        log.warning("MCP server %s left out: the agent does not support its transport", name)
    return [server for server in servers if server.name not in left_out]


def check_prompt(caps: s.AgentCapabilities, prompt: Sequence[s.ContentBlock], agent_name: str) -> None:
    prompt_caps = caps.prompt_capabilities or s.PromptCapabilities()
    for block in prompt:
        if isinstance(block, s.ContentBlockImage) and not prompt_caps.image:
            raise Unsupported(f"{agent_name} does not accept images")
        if isinstance(block, s.ContentBlockAudio) and not prompt_caps.audio:
            raise Unsupported(f"{agent_name} does not accept audio")
        if isinstance(block, s.ContentBlockResource) and not prompt_caps.embedded_context:
            raise Unsupported(f"{agent_name} does not accept embedded resources")

"""What an agent advertised decides what we may ask of it: a call it did not advertise is refused here with
`Unsupported` before anything is sent, and optional fields it does not know are left out of a request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

log = logging.getLogger("acp_nvim.client")


class Unsupported(Exception):
    """A call the agent did not advertise; refused locally, nothing was sent."""


def session_capabilities(caps: s.AgentCapabilities) -> s.SessionCapabilities:
    return caps.session_capabilities or s.SessionCapabilities()


class UnstableSession(NamedTuple):
    """The unstable session features (`protocol/unstable.py`) the agent advertised in `initialize`: each
    only to be used when true. All false for an agent that advertises none (gemini-cli, the SDK examples)."""

    fork: bool = False  # session/fork
    title: bool = False  # session/set_title
    archive: bool = False  # session/archive, session/unarchive, session/list's `archived`
    status: bool = False  # session/status
    system_prompt: bool = False  # `systemPrompt` in session/new, load, resume and fork
    # Not in the 2.4.0 schema (there `subagents` is a client capability): codex-acp 2.6 advertises
    # `sessionCapabilities.subagents`, read from the names the agent advertised.
    subagents: bool = False


def unstable_session_capabilities(caps: s.AgentCapabilities) -> u.SessionCapabilities:
    """The session capabilities as the unstable schema reads them; empty when they were not decoded so (an
    `AgentCapabilities` built as the stable type)."""
    session = caps.session_capabilities
    return session if isinstance(session, u.SessionCapabilities) else u.SessionCapabilities()


def unstable_session(caps: s.AgentCapabilities, names: frozenset[str] = frozenset()) -> UnstableSession:
    """What `caps` (and `names`, every key of the agent's `sessionCapabilities`: `session_capability_names`)
    allow of the unstable session methods."""
    session = unstable_session_capabilities(caps)
    return UnstableSession(
        fork=session.fork is not None,
        title=session.title is not None,
        archive=session.archive is not None,
        status=session.status is not None,
        system_prompt=session.system_prompt is not None,
        subagents="subagents" in names,
    )


class _AdvertisedSession(msgspec.Struct):
    session_capabilities: dict[str, object] | None = msgspec.field(name="sessionCapabilities", default=None)


class _Advertised(msgspec.Struct):
    agent_capabilities: _AdvertisedSession | None = msgspec.field(name="agentCapabilities", default=None)


_advertised = msgspec.json.Decoder(_Advertised)


def session_capability_names(raw: bytes | msgspec.Raw | None) -> frozenset[str]:
    """Every session capability the `initialize` answer `raw` advertises (an object, or true), those no schema
    of this build names included: decoding into the schema's types drops those."""
    if raw is None:
        return frozenset()
    try:
        found = _advertised.decode(raw).agent_capabilities
    except (msgspec.ValidationError, msgspec.DecodeError):
        return frozenset()
    session = (found.session_capabilities if found is not None else None) or {}
    return frozenset(name for name, value in session.items() if value is not None and value is not False)


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

"""Typed ACP v1 data: generated msgspec Structs (stable `schema`, `unstable` apart), the method tables and the
codec. No I/O."""

from __future__ import annotations

from acp_nvim.protocol import schema, unstable
from acp_nvim.protocol.codec import (
    SESSION_UPDATE_KINDS,
    UNSTABLE_SESSION_UPDATE_KINDS,
    convert,
    decode,
    decode_result,
    decode_session_update,
    decoder,
    encode,
    to_builtins,
)
from acp_nvim.protocol.methods import (
    AGENT_METHODS,
    CLIENT_METHODS,
    METHODS,
    PROTOCOL_VERSION,
    MethodSpec,
)

__all__ = [
    "AGENT_METHODS",
    "CLIENT_METHODS",
    "METHODS",
    "PROTOCOL_VERSION",
    "SESSION_UPDATE_KINDS",
    "UNSTABLE_SESSION_UPDATE_KINDS",
    "MethodSpec",
    "convert",
    "decode",
    "decode_result",
    "decode_session_update",
    "decoder",
    "encode",
    "schema",
    "to_builtins",
    "unstable",
]

"""Generic JSON-RPC 2.0 over anyio byte streams (newline-delimited JSON). Knows nothing of ACP."""

from __future__ import annotations

from .connection import Connection
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_CANCELLED,
    ConnectionClosed,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    RpcError,
)
from .framing import DEFAULT_MAX_MESSAGE_SIZE, LineSplitter, Oversized, format_size
from .wire import (
    ClosedReason,
    Direction,
    MessageHook,
    MessagesHook,
    NotificationHandler,
    ProtocolError,
    ProtocolErrorHook,
    ProtocolErrorKind,
    RequestHandler,
    RequestId,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "REQUEST_CANCELLED",
    "ClosedReason",
    "Connection",
    "ConnectionClosed",
    "Direction",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "LineSplitter",
    "MessageHook",
    "MessagesHook",
    "MethodNotFound",
    "NotificationHandler",
    "Oversized",
    "ParseError",
    "ProtocolError",
    "ProtocolErrorHook",
    "ProtocolErrorKind",
    "RequestCancelled",
    "RequestHandler",
    "RequestId",
    "RpcError",
    "format_size",
]

"""The JSON-RPC 2.0 messages as they are on the wire: the envelope every incoming line is decoded into, the
outgoing shapes, the hooks' types, and the short previews of a line that logs and reports quote.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias, get_args, get_origin

import msgspec
from msgspec import UNSET, UnsetType

from .peek import peek

RequestId: TypeAlias = int | str | None
# A parsed JSON value (what `json.loads` and `msgspec.json.decode` without a type return).
JsonValue: TypeAlias = str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None
RequestHandler: TypeAlias = Callable[[str, msgspec.Raw | None], Awaitable[object]]
# A notification is handled inline, in the order read: a handler done at once returns None (no coroutine per
# streamed message), one that waits returns what to await.
NotificationHandler: TypeAlias = Callable[[str, msgspec.Raw | None], Awaitable[None] | None]
Direction: TypeAlias = Literal["in", "out"]
MessageHook: TypeAlias = Callable[[Direction, bytes], None]
# The same lines, those of one read at once (in the order read): one call per read, not one per line. The
# list is the connection's: read it, keep it, never change it.
MessagesHook: TypeAlias = Callable[[Direction, list[bytes]], None]
ProtocolErrorKind: TypeAlias = Literal[
    "oversized", "not_utf8", "not_json", "invalid_message", "invalid_params", "malformed_error", "too_deep"
]
ProtocolErrorHook: TypeAlias = Callable[[str], None]
ClosedReason: TypeAlias = Callable[[], Awaitable[str]]

NULL = msgspec.Raw(b"null")
PREVIEW_LENGTH = 200
# How much of a line too deep for msgspec is scanned for its id: all of a message nested 100,000 deep, and
# bounded, since the scanner is Python: its worst input ("[1," repeated) costs about 0.1 s per 256 KiB here.
DEEP_SCAN_LIMIT = 256 << 10
TOO_DEEP = "nested too deeply to decode"


class ProtocolError(str):
    """What `on_protocol_error` receives: the message, readable as a plain `str`, plus its `kind`, so that a
    listener can group reports (one notice per kind, not per line) without parsing the text."""

    kind: ProtocolErrorKind

    def __new__(cls, kind: ProtocolErrorKind, message: str) -> ProtocolError:
        report = super().__new__(cls, message)
        report.kind = kind
        return report


class Envelope(msgspec.Struct):
    """Every incoming message. Payloads stay raw: the layer above decodes them with its own typed decoders."""

    id: RequestId | UnsetType = UNSET
    method: str | UnsetType = UNSET
    params: msgspec.Raw = msgspec.Raw()
    result: msgspec.Raw = msgspec.Raw()
    error: msgspec.Raw = msgspec.Raw()


class RoutedNotification(msgspec.Struct, kw_only=True):
    """The shape of a notification read through a `NotificationRoute`: a subclass narrows `method` to a
    `Literal` of the route's method (so that any other line fails at its method, before its params are read)
    and types `params`."""

    method: str
    params: object
    id: RequestId | UnsetType = UNSET


class NotificationRoute:
    """One notification method whose lines are decoded in a single pass, envelope and params together, by
    the layer above's decoder: the bulk of a stream. The params of consecutive such lines of one read are
    handed together, in order, to `handle` (which must not wait): one call for hundreds of streamed lines.

    A line that the decoder refuses for any reason (another method, a request, bad params, not JSON) takes
    the ordinary path, with its usual answers and reports, in its place in the order: the route only makes
    the valid lines cheaper. When `handle` raises, it is logged and the rest of that list is not handled.
    """

    __slots__ = ("decoder", "handle", "leading", "method")

    # `handle` takes the params of the decoder's `RoutedNotification` subclass: typing cannot tie the two
    # together (the Decoder's type parameter is invariant), so neither is typed here; the decoder's type is
    # checked below. `leading(lines)`, when given, takes a read's leading lines of the route instead of
    # `route_leading`: (what `handle` gets for them, how many lines they are); the layer above may read its
    # stream's bulk by a shape it knows, exactly as the decoder would.
    def __init__(
        self,
        method: str,
        decoder: msgspec.json.Decoder[Any],
        handle: Callable[[list[Any]], None],
        leading: Callable[[list[bytes]], tuple[list[object], int]] | None = None,
    ) -> None:
        routed = decoder.type
        if not (isinstance(routed, type) and issubclass(routed, RoutedNotification)):
            raise TypeError(f"a route decodes a RoutedNotification, not {routed!r}")
        declared = next(f.type for f in msgspec.structs.fields(routed) if f.name == "method")
        if get_origin(declared) is not Literal or get_args(declared) != (method,):
            raise TypeError(f"{routed.__name__}.method must be Literal[{method!r}], not {declared!r}")
        self.method = method
        self.decoder = decoder
        self.handle = handle
        self.leading = leading

    def take_leading(self, lines: list[bytes]) -> tuple[list[object], int]:
        """What `handle` gets for a read's leading lines of the route, and how many lines that is."""
        if self.leading is not None:
            return self.leading(lines)
        params = route_leading(self.decoder.decode, lines)
        return params, len(params)


class WireError(msgspec.Struct):
    code: int
    message: str
    data: object = None


class CancelParams(msgspec.Struct):
    request_id: RequestId = msgspec.field(name="requestId")


# Outgoing messages. `jsonrpc` has no default so that omit_defaults never drops it.
class OutRequest(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: int
    method: str
    params: object = None


class OutNotification(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: object = None


class OutResult(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: object


class OutErrorBody(msgspec.Struct, omit_defaults=True):
    code: int
    message: str
    data: object = None


class OutError(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    error: OutErrorBody


_ID = operator.attrgetter("id")
_PARAMS = operator.attrgetter("params")


def route_leading(decode: Callable[[bytes], RoutedNotification], lines: list[bytes]) -> list[object]:
    """The params of a read's leading lines of a route (all of them, read after read, in a stream), decoded
    with no Python work per line: C-level loops over the lines, one decode each. The rest, from the first line
    the route refuses (a response, a request, a bad line), take the per-line path, which says why; so do all
    of them when one of these is a request (a method of the route, with an id) or not UTF-8."""
    if not (all(map(bytes.isascii, lines)) or all(map(is_utf8, lines))):
        return []
    decoded: list[RoutedNotification] = []
    # `extend` keeps what was decoded before a line that fails: those are not decoded twice.
    with contextlib.suppress(Exception):
        decoded.extend(map(decode, lines))
    if not decoded or len(set(map(_ID, decoded))) != 1 or decoded[0].id is not UNSET:
        return []
    return list(map(_PARAMS, decoded))


def is_utf8(line: bytes) -> bool:
    """For a line that is not ASCII: whether its bytes are UTF-8 (JSON text must be; msgspec checks only the
    strings it keeps, not what it skips)."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def preview(line: bytes) -> str:
    text = line[:PREVIEW_LENGTH].decode("utf-8", "replace")
    return text + "…" if len(line) > PREVIEW_LENGTH else text


def usable_id(line: bytes) -> RequestId:
    """The id of a message that is JSON but not a valid JSON-RPC message, if it has one we can echo."""
    try:
        value = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return None
    except RecursionError:
        return peek(line[:DEEP_SCAN_LIMIT]).id
    if isinstance(value, dict):
        candidate = value.get("id")
        if isinstance(candidate, str) or (isinstance(candidate, int) and not isinstance(candidate, bool)):
            return candidate
    return None


def describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

"""JSON encoding and lenient decoding of ACP messages (no I/O).

Everything that turns bytes into ``schema`` types goes through here: the cached per-type decoders carry the
``dec_hook`` that resolves the unions msgspec cannot express natively (``runtime.UntaggedUnion``).
Validation errors are ``msgspec.ValidationError`` whose message names the field path, e.g.
``Expected `str`, got `int` - at `$.update.content.text```, so the JSON-RPC layer can answer -32602 with it.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from acp_nvim.protocol import schema, unstable
from acp_nvim.protocol.runtime import DefaultOnError, LenientList, UntaggedUnion

if TYPE_CHECKING:
    from acp_nvim.protocol.runtime import TypeForm

log = logging.getLogger("acp_nvim.protocol")

T = TypeVar("T")

Raw = bytes | bytearray | memoryview | str | msgspec.Raw

_encoder = msgspec.json.Encoder()
_PATH_SUFFIX = re.compile(r" - at `\$([^`]*)`$")


def encode(obj: object) -> bytes:
    """Encode a schema Struct (or any msgspec-encodable value) as compact JSON."""
    return _encoder.encode(obj)


def to_builtins(obj: object) -> object:
    """The JSON value (dicts, lists, scalars) an object encodes to, e.g. for nesting in an envelope."""
    return msgspec.to_builtins(obj)


def _nested_error(error: msgspec.ValidationError) -> ValueError:
    # msgspec appends the outer path to what a dec_hook raises; moving the inner path into the message
    # keeps the full location readable: "... - at `$.mcpServers[0]` (`.args[0]`)".
    message = str(error)
    match = _PATH_SUFFIX.search(message)
    if match is None:
        return ValueError(message)
    return ValueError(f"{message[: match.start()]} (at `{match.group(1)}` within)")


def _convert(obj: object, type_: object) -> object:
    try:
        return msgspec.convert(obj, type_, dec_hook=_dec_hook)
    except msgspec.ValidationError as error:
        raise _nested_error(error) from None


def _dispatch(union: type[UntaggedUnion], obj: object) -> object:
    """Pick the variant of an untagged or partly tagged union, like serde's internally tagged + untagged."""
    tag: object = None
    if union.tag_field is not None and isinstance(obj, dict):
        tag = obj.get(union.tag_field)
        variant = union.tagged.get(tag) if isinstance(tag, str) else None
        if variant is not None:
            return _convert(obj, variant)
    last: Exception | None = None
    for candidate in union.untagged:
        try:
            return msgspec.convert(obj, candidate, dec_hook=_dec_hook)
        except msgspec.ValidationError as error:
            last = error
    if tag is not None and union.tagged:
        raise ValueError(f"Invalid `{union.tag_field}` value {tag!r} for `{union.__name__}`")
    if isinstance(last, msgspec.ValidationError):
        raise _nested_error(last)
    raise ValueError(f"Expected `{union.__name__}`, got `{type(obj).__name__}`")


def _lenient_list(marker: type[LenientList], obj: object) -> list[object]:
    """Decode the items that are valid, drop the rest: one unknown config option or tool-call content kind
    from a newer agent must not make the whole response or update unusable."""
    if not isinstance(obj, list):
        raise ValueError(f"Expected `array`, got `{type(obj).__name__}`")
    items: list[object] = []
    for index, item in enumerate(obj):
        try:
            items.append(msgspec.convert(item, marker.item, dec_hook=_dec_hook))
        except msgspec.ValidationError as error:
            log.info("dropping invalid %s item [%d]: %s", marker.__name__, index, error)
    return items


def _default_on_error(marker: type[DefaultOnError], obj: object) -> object:
    if obj is None:
        return None
    try:
        return msgspec.convert(obj, marker.item, dec_hook=_dec_hook)
    except msgspec.ValidationError as error:
        log.info("dropping invalid %s: %s", marker.__name__, error)
        return None


def _dec_hook(type_: object, obj: object) -> object:
    if isinstance(type_, type):
        if issubclass(type_, UntaggedUnion):
            return _dispatch(type_, obj)
        if issubclass(type_, LenientList):
            return _lenient_list(type_, obj)
        if issubclass(type_, DefaultOnError):
            return _default_on_error(type_, obj)
    raise NotImplementedError


# Each decoder is typed by the type form it was built for, which a dict of them all cannot keep: `decoder`
# ties each to its type form again.
_decoders: dict[object, msgspec.json.Decoder[Any]] = {}


def decoder(type_: TypeForm[T]) -> msgspec.json.Decoder[T]:
    """The shared JSON decoder for a schema type (built once: building one is far costlier than using it)."""
    found = _decoders.get(type_)
    if found is None:
        found = _decoders[type_] = msgspec.json.Decoder(type_, dec_hook=_dec_hook)
    return found


def _as_bytes(raw: Raw) -> bytes | bytearray | memoryview | str:
    return bytes(raw) if isinstance(raw, msgspec.Raw) else raw


def decode(raw: Raw | None, type_: TypeForm[T]) -> T:
    """Decode JSON bytes (or a ``msgspec.Raw`` slice of an envelope) into ``type_``; ``None`` (a message
    without params) decodes as ``null``.

    Raises ``msgspec.ValidationError`` naming the field path, ``msgspec.DecodeError`` for invalid JSON.
    """
    return decoder(type_).decode(b"null" if raw is None else _as_bytes(raw))


def convert(obj: object, type_: TypeForm[T]) -> T:
    """Like ``decode`` for an already parsed JSON value (dicts, lists, scalars)."""
    converted: T = msgspec.convert(obj, type_, dec_hook=_dec_hook)
    return converted


def _accepts_null(type_: object) -> bool:
    """Response types made only of optional fields: their ``result: null`` means the empty object."""
    if not (isinstance(type_, type) and issubclass(type_, msgspec.Struct)):
        return False
    return len(type_.__struct_defaults__) == len(type_.__struct_fields__)


def decode_result(raw: Raw | None, type_: TypeForm[T]) -> T:
    """Decode a response ``result``; ``null`` (or absent) means the empty response where that can exist.

    The docs show ``"result": null`` for ``session/load`` and ``fs/write_text_file``, and Python SDK agents
    answer every empty response that way; the schema says ``{}``. Both are accepted for any response type
    whose fields are all optional. Other types keep the plain error for ``null``.
    """
    if raw is None or _is_null(raw):
        if _accepts_null(type_):
            return decode(b"{}", type_)
        raise msgspec.ValidationError(
            f"Expected `object`, got `null` for `{getattr(type_, '__name__', type_)}`"
        )
    return decode(raw, type_)


def _is_null(raw: Raw) -> bool:
    data = _as_bytes(raw)
    if len(data) > 16:  # only whitespace can surround a null; skip copying large results
        return False
    return (data.strip() == "null") if isinstance(data, str) else bytes(data).strip() == b"null"


class _UpdateKind(msgspec.Struct):
    session_update: object = msgspec.field(name="sessionUpdate", default=None)


class _PeekUpdate(msgspec.Struct):
    update: _UpdateKind | None = None


_peek = msgspec.json.Decoder(_PeekUpdate)
# The unstable notification: its update union is the stable one's variants and the unstable kinds
# (`subagent_update`, `plan_update`, ...), which only an agent using unstable features sends.
_session_notification = decoder(unstable.SessionNotification)

#: The stable ``sessionUpdate`` kinds.
SESSION_UPDATE_KINDS: frozenset[str] = frozenset(
    str(member.__struct_config__.tag) for member in schema.SessionUpdate.__args__
)
#: The ``sessionUpdate`` kinds only the unstable schema has (decoded as ``unstable`` types).
UNSTABLE_SESSION_UPDATE_KINDS: frozenset[str] = (
    frozenset(str(member.__struct_config__.tag) for member in unstable.SessionUpdate.__args__)
    - SESSION_UPDATE_KINDS
)
_KNOWN_KINDS = SESSION_UPDATE_KINDS | UNSTABLE_SESSION_UPDATE_KINDS


def decode_session_update(raw: Raw | None) -> unstable.SessionNotification | None:
    """Decode ``session/update`` params (``None``: the message had none, decoded as ``null``); ``None`` for an
    update kind this build does not know.

    Decoded as ``unstable.SessionNotification``: a stable kind is the same ``schema`` variant either way.
    The v1 schema has no catch-all ``sessionUpdate`` variant and newer agents add kinds: an unknown kind is
    logged and skipped so the stream goes on. A known kind that is malformed raises
    ``msgspec.ValidationError``. The full decode runs first; the cheap peek only runs when it failed.
    """
    if raw is None:
        raw = b"null"
    # A msgspec.Raw is a buffer: decoded in place, not copied to bytes first (this runs for every update).
    try:
        notification: unstable.SessionNotification = _session_notification.decode(raw)
        return notification
    except msgspec.ValidationError as error:
        try:
            kind = _peek.decode(_as_bytes(raw)).update
        except msgspec.ValidationError:
            raise error from None
        name = None if kind is None else kind.session_update
        if isinstance(name, str) and name not in _KNOWN_KINDS:
            log.info("skipping unknown session update kind %r", name)
            return None
        raise

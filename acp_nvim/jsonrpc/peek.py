"""Reads the top-level members of a JSON-RPC message from its first bytes, without decoding the rest.

For the lines the decoder cannot take — dropped for being over the size cap (only their head is kept), or
nested deeper than msgspec's recursion limit — the connection still needs to know whether the line was a
request, a notification or a response, and under which id to answer. A plain search for `"id"` would be
fooled by an `"id"` inside the params or inside a string; this scanner walks the top-level object only,
skips nested values by counting brackets outside strings, and trusts nothing that the end of the head cut
short (a number running into the end of the bytes may have lost digits).
"""

from __future__ import annotations

import re

import msgspec

# Ids outside int64 are no ACP `RequestId`; echoing one could not be decoded by the peer anyway.
_INT64 = range(-(1 << 63), 1 << 63)

_WHITESPACE = re.compile(rb"[ \t\r\n]*")
# A complete string token: an unterminated one (cut by the end of the head) does not match.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERAL = re.compile(rb"true|false|null")
# Inside a nested value: whole strings (an unterminated one runs to the end, so its brackets never count)
# and runs of brackets, counted by length, so a value nested 100,000 deep is a handful of matches.
_NESTED_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"?|[\[{]+|[\]}]+', re.DOTALL)
_OPENERS = frozenset(b"[{")


class Head(msgspec.Struct, frozen=True):
    """What the first bytes of a message tell. `has_id`: a top-level "id" member was read (`id` is its value
    when that is a usable id, an int64 or a string, else None); `method`/`response`: a top-level "method" /
    "result" or "error" key was read (its value may be cut short); `complete`: the whole top-level object
    was read, so members not seen are absent."""

    has_id: bool = False
    id: int | str | None = None
    method: bool = False
    response: bool = False
    complete: bool = False


def _skip_whitespace(data: bytes, pos: int) -> int:
    match = _WHITESPACE.match(data, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _nested_end(data: bytes, pos: int) -> int | None:
    """End of the array or object starting at `pos`, or None when it does not end within `data`."""
    depth = 0
    for match in _NESTED_TOKEN.finditer(data, pos):
        token = match.group()
        if token[0] == 0x22:  # a string: brackets inside it do not count
            continue
        if token[0] in _OPENERS:
            depth += len(token)
            continue
        if len(token) >= depth:
            # This run of closers may go on to close the enclosing object too: only `depth` of them are ours.
            return match.start() + depth
        depth -= len(token)
    return None


def _value_end(data: bytes, pos: int) -> int | None:
    """End of the JSON value starting at `pos`, or None when it is malformed or cut short by the end."""
    first = data[pos : pos + 1]
    if first == b'"':
        match = _STRING.match(data, pos)
        return match.end() if match is not None else None
    if first in (b"[", b"{"):
        return _nested_end(data, pos)
    match = _NUMBER.match(data, pos) or _LITERAL.match(data, pos)
    # A scalar touching the end of the bytes may be cut short: `12` of `123`.
    if match is None or match.end() >= len(data):
        return None
    return match.end()


def _usable_id(token: bytes) -> int | str | None:
    if token[:1] in (b"[", b"{"):
        # Never an id, and decoding it could hit the very recursion limit that brought us here.
        return None
    try:
        value = msgspec.json.decode(token)
    except msgspec.DecodeError:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value in _INT64:
        return value
    return None


def peek(data: bytes) -> Head:
    """The top-level members of the JSON object `data` starts with, as far as they can be read."""
    pos = _skip_whitespace(data, 0)
    if data[pos : pos + 1] != b"{":
        return Head()
    has_id = method = response = complete = False
    request_id: int | str | None = None
    pos = _skip_whitespace(data, pos + 1)
    if data[pos : pos + 1] == b"}":
        return Head(complete=True)
    while True:
        key_match = _STRING.match(data, pos)
        if key_match is None:
            break
        try:
            # Decoded, not compared as bytes: "\u0069d" is "id" too.
            key = msgspec.json.decode(key_match.group(), type=str)
        except msgspec.DecodeError:
            break
        pos = _skip_whitespace(data, key_match.end())
        if data[pos : pos + 1] != b":":
            break
        pos = _skip_whitespace(data, pos + 1)
        # The key alone tells what kind of message this is, even when its value runs past the end.
        if key == "method":
            method = True
        elif key in ("result", "error"):
            response = True
        end = _value_end(data, pos)
        if end is None:
            break
        if key == "id":
            # The last one wins, as when msgspec decodes an object with a repeated key.
            has_id = True
            request_id = _usable_id(data[pos:end])
        pos = _skip_whitespace(data, end)
        separator = data[pos : pos + 1]
        if separator == b"}":
            complete = True
            break
        if separator != b",":
            break
        pos = _skip_whitespace(data, pos + 1)
    return Head(has_id=has_id, id=request_id, method=method, response=response, complete=complete)

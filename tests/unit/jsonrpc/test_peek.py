"""peek: the top-level id, method and answer members of a message read from its first bytes, never fooled
by an "id" nested in the params or inside a string, and never trusting a value the cut made shorter."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from acp_nvim.jsonrpc.peek import Head, peek
from tests.unit.strategies import json_trees, property_settings

PROPERTIES = property_settings(max_examples=300)

# Keys and strings that look like the members the scanner looks for, with the characters that could fool a
# naive one: quotes, backslashes, brackets, colons.
tricky_text = st.sampled_from(['"id"', "id", '\\"id\\":1', "]}", "{[", '","id":7,"', "\\", ":", "method"])
keys = st.sampled_from(["id", "method", "result", "error", "params", "x"]) | tricky_text
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(1 << 70), 1 << 70)
    | st.floats(allow_nan=False, allow_infinity=False)
)
scalars |= st.text(max_size=8) | tricky_text
values = json_trees(scalars, keys, width=4, max_leaves=10)
ids = st.integers(-(1 << 63), (1 << 63) - 1) | st.text(max_size=12) | tricky_text


def deep(depth: int) -> Any:
    value: Any = "bottom"
    for level in range(depth):
        value = [value] if level % 2 else {"id": level, "v": value}
    return value


@st.composite
def messages(draw: st.DrawFn) -> dict[str, Any]:
    """Objects whose top-level members are drawn freely (id, method, result, error or none), in any order,
    each value any JSON (nested "id"s included)."""
    members: dict[str, Any] = {}
    for key in draw(st.permutations(["jsonrpc", "id", "method", "params", "result", "x"])):
        if draw(st.booleans()):
            members[key] = draw(ids if key == "id" else values)
    if draw(st.booleans()):
        members["params"] = deep(draw(st.integers(0, 50)))
    return members


def expected_head(message: dict[str, Any]) -> Head:
    request_id = message.get("id")
    usable = isinstance(request_id, str) or (
        isinstance(request_id, int)
        and not isinstance(request_id, bool)
        and -(1 << 63) <= request_id < 1 << 63
    )
    return Head(
        has_id="id" in message,
        id=request_id if usable else None,
        method="method" in message,
        response="result" in message or "error" in message,
        complete=True,
    )


@PROPERTIES
@given(message=messages(), spaced=st.booleans())
@example(message={"params": {"id": 1, "s": '"id":2'}, "id": "real"}, spaced=False)
def test_a_whole_message_is_read_like_a_json_decoder_reads_it(message: dict[str, Any], spaced: bool) -> None:
    separators = (", ", " : ") if spaced else (",", ":")
    data = json.dumps(message, separators=separators).encode()
    assert peek(data) == expected_head(message)


@PROPERTIES
@given(message=messages(), cut=st.integers(0, 10_000), ascii_only=st.booleans())
def test_a_cut_message_never_yields_a_wrong_id(message: dict[str, Any], cut: int, ascii_only: bool) -> None:
    """Whatever the cut, what is found is true of the whole message: the id read is its top-level id, and
    a member seen is really there at the top level."""
    data = json.dumps(message, ensure_ascii=ascii_only).encode()
    head = peek(data[: cut % (len(data) + 1)])
    truth = expected_head(message)
    if head.has_id:
        assert truth.has_id and head.id == truth.id
    assert not head.method or truth.method
    assert not head.response or truth.response
    if head.complete:
        assert head == truth


@PROPERTIES
@given(data=st.binary(max_size=300))
def test_any_bytes_are_read_without_error(data: bytes) -> None:
    peek(data)


def test_an_id_after_params_nested_100_000_deep_is_found() -> None:
    params = b"[" * 100_000 + b"]" * 100_000
    data = b'{"jsonrpc":"2.0","method":"m","params":' + params + b',"id":42}'
    assert peek(data) == Head(has_id=True, id=42, method=True, complete=True)


def test_what_the_cut_leaves_unsure_is_not_trusted() -> None:
    # 12 may be the start of 123; a string without its closing quote may go on.
    assert peek(b'{"id":12') == Head()
    assert peek(b'{"id":"ab') == Head()
    assert peek(b'{"id":12,') == Head(has_id=True, id=12)
    assert peek(b'{"jsonrpc":"2.0","method":"session/update","params":{"x":"') == Head(method=True)
    assert peek(b'{"id":5,"result":{"text":"xxx') == Head(has_id=True, id=5, response=True)


def test_ids_that_are_no_request_id_are_not_echoed() -> None:
    for raw in (b"1.5", b"true", b"null", b"[1]", b'{"a":1}', b"1e3", str(1 << 63).encode()):
        assert peek(b'{"id":' + raw + b',"method":"m"}') == Head(has_id=True, method=True, complete=True)


def test_escaped_keys_count_and_not_objects_are_nothing() -> None:
    assert peek(b'{"\\u0069d":3}') == Head(has_id=True, id=3, complete=True)
    assert peek(b"[1,2]") == Head()
    assert peek(b"") == Head()
    assert peek(b"  {}") == Head(complete=True)

"""The content of an accepted form, checked against the requested schema before it goes to the agent."""

from __future__ import annotations

from typing import Any

import pytest

from acp_nvim.client.elicitation_forms import openable, scope_label, validate_content
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s

SCHEMA = codec.convert(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[A-Z]", "maxLength": 5},
            "mail": {"type": "string", "format": "email"},
            "day": {"type": "string", "format": "date"},
            "n": {"type": "integer", "minimum": 1},
            "x": {"type": "number", "maximum": 1.5},
            "ok": {"type": "boolean"},
            "pick": {"type": "string", "enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "maxItems": 1},
        },
        "required": ["name"],
    },
    s.ElicitationSchema,
)


def test_valid_content_is_kept_and_unknown_keys_dropped() -> None:
    raw = {"name": "Ann", "n": 2.0, "x": 1, "ok": False, "pick": "b", "tags": ["a"], "extra": 1}
    content, errors = validate_content(SCHEMA, raw)
    assert errors == {}
    assert content == {"name": "Ann", "n": 2, "x": 1, "ok": False, "pick": "b", "tags": ["a"]}
    assert isinstance(content["n"], int)


@pytest.mark.parametrize(
    ("raw", "field", "error"),
    [
        ({}, "name", "is required"),
        ({"name": "ann"}, "name", "does not match ^[A-Z]"),
        ({"name": "Annabel"}, "name", "allows at most 5 characters"),
        ({"name": "A", "mail": "nope"}, "mail", "is not a valid e-mail address"),
        ({"name": "A", "day": "2024-13-01"}, "day", "is not a valid date, YYYY-MM-DD"),
        ({"name": "A", "n": 1.5}, "n", "is not a whole number"),
        ({"name": "A", "n": 0}, "n", "must be at least 1"),
        ({"name": "A", "n": True}, "n", "is not a number"),
        ({"name": "A", "x": 2}, "x", "must be at most 1.5"),
        ({"name": "A", "ok": "yes"}, "ok", "must be yes or no"),
        ({"name": "A", "pick": "c"}, "pick", "is not one of the choices"),
        ({"name": "A", "tags": ["a", "b"]}, "tags", "allows at most 1 choices"),
        ({"name": "A", "tags": ["z"]}, "tags", "has a choice that is not offered"),
    ],
)
def test_problems_are_named(raw: dict[str, Any], field: str, error: str) -> None:
    _, errors = validate_content(SCHEMA, raw)
    assert errors == {field: error}


def test_empty_lua_table_is_empty_content() -> None:
    assert validate_content(codec.convert({"type": "object"}, s.ElicitationSchema), []) == ({}, {})


def test_scope_and_urls() -> None:
    form = s.CreateElicitationRequestForm(
        message="m", requested_schema=s.ElicitationSchema(), session_id="abcdefghij", tool_call_id="t1"
    )
    assert scope_label(form) == "session abcdefgh, tool call t1"
    by_request = s.CreateElicitationRequestForm(
        message="m", requested_schema=s.ElicitationSchema(), request_id=4
    )
    assert scope_label(by_request) == "request 4"
    assert openable("https://x.test") and not openable("file:///etc/passwd") and not openable("javascript:1")

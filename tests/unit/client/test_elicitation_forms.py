"""The content of an accepted form, checked against the requested schema before it goes to the agent."""

from __future__ import annotations

import datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.client.elicitation_forms import (
    check_answer,
    field_view,
    form_view,
    openable,
    scope_label,
    validate_content,
)
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


# ---- one field's answer, checked as the user gives it (acp_elicitation_check) ------------------------

FIELDS = codec.convert(
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Name", "minLength": 2, "maxLength": 5},
            "mail": {"type": "string", "title": "Mail", "format": "email"},
            "site": {"type": "string", "title": "Site", "format": "uri"},
            "day": {"type": "string", "title": "Day", "format": "date"},
            "when": {"type": "string", "title": "When", "format": "date-time"},
            "count": {"type": "integer", "title": "Count", "minimum": 1, "maximum": 10},
            "ratio": {"type": "number", "title": "Ratio", "maximum": 1.5},
            "tags": {
                "type": "array",
                "title": "Tags",
                "items": {"type": "string", "enum": ["a", "b", "c"]},
                "minItems": 1,
                "maxItems": 2,
            },
        },
        "required": ["name", "count"],
    },
    s.ElicitationSchema,
)


def lua_check(name: str) -> object:
    """The field's `check` as Lua holds it and sends it back: the plain table of the view."""
    prop = FIELDS.properties[name]
    view = msgspec.to_builtins(field_view(name, prop, name in (FIELDS.required or [])))
    assert isinstance(view, dict)
    return view["check"]


def typed(name: str, answer: object) -> dict[str, object]:
    return check_answer(lua_check(name), answer)


@pytest.mark.parametrize(
    ("field", "text", "value"),
    [
        ("count", "7", 7),
        ("count", " 10 ", 10),
        ("count", "3.0", 3),
        ("ratio", "-2.5", -2.5),
        ("ratio", ".5", 0.5),
        ("ratio", "1e-3", 0.001),
        ("name", "Ann", "Ann"),
        ("name", "Åsa", "Åsa"),  # characters, not bytes
        ("mail", "a@b.c", "a@b.c"),
        ("site", "https://x.test/a", "https://x.test/a"),
        ("day", "2024-02-29", "2024-02-29"),
        ("when", "2025-01-31T14:30:00", "2025-01-31T14:30:00"),
        ("when", "2025-01-31 14:30", "2025-01-31 14:30"),
        ("when", "2025-01-31T14:30:00.25+02:00", "2025-01-31T14:30:00.25+02:00"),
        ("mail", "", None),  # optional: left empty
        ("tags", ["a", "c"], ["a", "c"]),
    ],
)
def test_a_good_answer_is_the_value_sent(field: str, text: object, value: object) -> None:
    assert typed(field, text) == {"value": value, "error": None}
    assert type(typed(field, text)["value"]) is type(value)


@pytest.mark.parametrize(
    ("field", "text", "error"),
    [
        ("name", "", "Name is required"),
        ("name", "x", "Name needs at least 2 characters"),
        ("name", "Annabel", "Name allows at most 5 characters"),
        ("count", "", "Count is required"),
        ("count", "seven", "Count is not a number"),
        ("count", "0x10", "Count is not a number"),
        ("count", "inf", "Count is not a number"),
        ("count", "1e999", "Count is not a number"),
        ("count", "1.5", "Count is not a whole number"),
        ("count", "0", "Count must be at least 1"),
        ("count", "11", "Count must be at most 10"),
        ("ratio", "2", "Ratio must be at most 1.5"),
        ("mail", "a@b@c", "Mail is not a valid e-mail address"),
        ("site", "x.test", "Site is not a valid URL"),
        # One date rule: a real day in the calendar, written YYYY-MM-DD.
        ("day", "2025-02-30", "Day is not a valid date, YYYY-MM-DD"),
        ("day", "20250101", "Day is not a valid date, YYYY-MM-DD"),
        ("day", "2025-1-1", "Day is not a valid date, YYYY-MM-DD"),
        ("when", "2025-01-31T14:30junk", "When is not a valid date and time, YYYY-MM-DDTHH:MM:SS"),
        ("when", "2025-01-31T25:00", "When is not a valid date and time, YYYY-MM-DDTHH:MM:SS"),
        ("when", "2025-01-31", "When is not a valid date and time, YYYY-MM-DDTHH:MM:SS"),
        ("tags", [], "Tags needs at least 1 choices"),
        ("tags", ["a", "b", "c"], "Tags allows at most 2 choices"),
        ("tags", "a", "Tags must be a list of choices"),
        ("name", 3, "Name must be text"),
    ],
)
def test_a_bad_answer_is_refused_with_its_reason(field: str, text: object, error: str) -> None:
    assert typed(field, text) == {"value": None, "error": error}


def test_an_empty_lua_table_is_no_choice() -> None:
    assert typed("tags", {}) == {"value": None, "error": "Tags needs at least 1 choices"}
    required = codec.convert(
        {
            "type": "object",
            "properties": {"t": {"type": "array", "items": {"type": "string", "enum": ["a"]}}},
        },
        s.ElicitationSchema,
    )
    check = msgspec.to_builtins(field_view("t", required.properties["t"], True)["check"])
    assert check_answer(check, []) == {"value": None, "error": "t is required"}


def test_a_check_lua_did_not_get_from_the_host_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError):
        check_answer({"kind": "colour", "title": "x"}, "red")


@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_whole_numbers_are_in_their_range_or_named(n: int) -> None:
    answer = typed("count", str(n))
    if n < 1:
        assert answer == {"value": None, "error": "Count must be at least 1"}
    elif n > 10:
        assert answer == {"value": None, "error": "Count must be at most 10"}
    else:
        assert answer == {"value": n, "error": None}


@given(st.floats(allow_nan=False, allow_infinity=False, max_value=1.5))
def test_a_number_typed_is_the_number_sent(x: float) -> None:
    answer = typed("ratio", repr(x))
    assert answer["error"] is None and answer["value"] == x


@given(st.integers(min_value=2**63, max_value=2**80))
def test_a_whole_number_beyond_what_lua_holds_goes_as_a_double(n: int) -> None:
    free = codec.convert({"type": "object", "properties": {"n": {"type": "integer"}}}, s.ElicitationSchema)
    check = msgspec.to_builtins(field_view("n", free.properties["n"], False)["check"])
    answer = check_answer(check, str(n))
    assert answer["error"] is None and answer["value"] == float(n)
    msgspec.msgpack.encode(answer)  # what pynvim sends Lua


@given(st.text(max_size=8))
def test_lengths_are_counted_in_characters(text: str) -> None:
    answer = typed("name", text)
    if text == "":
        assert answer["error"] == "Name is required"
    elif len(text) < 2:
        assert answer["error"] == "Name needs at least 2 characters"
    elif len(text) > 5:
        assert answer["error"] == "Name allows at most 5 characters"
    else:
        assert answer == {"value": text, "error": None}


@given(st.dates())
def test_every_calendar_day_is_a_date(day: datetime.date) -> None:
    assert typed("day", day.isoformat()) == {"value": day.isoformat(), "error": None}


@given(st.datetimes(), st.sampled_from(["T", " "]), st.sampled_from(["minutes", "seconds", "milliseconds"]))
def test_every_moment_is_a_date_time(moment: datetime.datetime, sep: str, timespec: str) -> None:
    text = moment.isoformat(sep=sep, timespec=timespec)
    assert typed("when", text) == {"value": text, "error": None}


@given(st.sampled_from(["name", "mail", "site", "day", "when", "count", "ratio"]), st.text(max_size=30))
def test_what_the_field_check_accepts_the_content_check_keeps(field: str, text: str) -> None:
    """One owner: a typed answer accepted is accepted again, as the same value, when the form is sent."""
    answer = typed(field, text)
    if answer["error"] is None and answer["value"] is not None:
        content, errors = validate_content(FIELDS, {"name": "Ann", "count": 2, field: answer["value"]})
        assert errors == {} and content[field] == answer["value"]


# ---- the labels ----------------------------------------------------------------------------------


def test_each_field_is_labelled_with_what_it_expects() -> None:
    request = s.CreateElicitationRequestForm(message="m", requested_schema=FIELDS)
    labels = {f["name"]: f["label"] for f in form_view(request)["fields"]}  # type: ignore[attr-defined]
    assert labels == {
        "name": "Name *",
        "mail": "Mail (e-mail address)",
        "site": "Site (URL)",
        "day": "Day (date, YYYY-MM-DD)",
        "when": "When (date and time, YYYY-MM-DDTHH:MM:SS)",
        "count": "Count * (whole number from 1 to 10)",
        "ratio": "Ratio (number ≤ 1.5)",
        "tags": "Tags",
    }
    again = form_view(request, {"count": "must be at least 1"}, {"count": 0})
    assert again["fields"][5]["label"] == "Count * (whole number from 1 to 10) [Count must be at least 1]"  # type: ignore[index]
    assert again["errors"] == {"count": "must be at least 1"} and again["values"] == {"count": 0}

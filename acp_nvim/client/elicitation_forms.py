"""An elicitation's form checked and described, Neovim-free, by one set of rules and messages: the fields as
Lua walks the user through them, each with its label and its `check` (`form_view`); one field's answer
checked while the user gives it (`check_answer`, the host's `acp_elicitation_check`: text turned into the
value, or the reason it is refused); the whole content checked against the requested schema before it goes
to the agent (`validate_content`); and which URLs may be opened (`openable`). The questions are asked by
`app/editor/elicitation.py`.
"""

from __future__ import annotations

import datetime
import logging
import math
import re
from collections.abc import Mapping, Sequence
from typing import Literal
from urllib.parse import urlparse

import msgspec

from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.elicitation")

Content = dict[str, s.ElicitationContentValue]

#: What each known string format expects, in the label and in the message that refuses a value.
FORMAT_WORDS = {
    "email": "e-mail address",
    "uri": "URL",
    "date": "date, YYYY-MM-DD",
    "date-time": "date and time, YYYY-MM-DDTHH:MM:SS",
}

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# RFC 3339's full-date and date-time, with the seconds and the offset optional (a person types
# "2025-01-31 14:30") and a space allowed for the "T"; the calendar and the clock are checked as well.
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?")
# A decimal number as people type it: no hex, no "inf", no digit separators.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# A whole number of a "number" field is an integer while a double holds it exactly, as Lua would send it.
_EXACT = 2**53
# What msgpack carries to Lua as an integer; a whole number beyond goes as the double Lua holds anyway.
_INT64 = 2**63

Kind = Literal["string", "number", "integer", "boolean", "multi"]


class FieldCheck(msgspec.Struct, frozen=True, kw_only=True):
    """What one field's answer is checked against: built from the requested schema, sent with the field
    and handed back by Lua unread with each answer, so the check needs none of the host's state."""

    kind: Kind
    title: str
    required: bool = False
    minimum: float | None = None
    maximum: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    min_items: int | None = None
    max_items: int | None = None


Checked = tuple[s.ElicitationContentValue | None, str | None]


def number_words(value: float) -> str:
    """A bound as the label and the messages write it: 3, 2.5, 1e+20."""
    return f"{value:.14g}"


def _number(check: FieldCheck, value: float) -> Checked:
    if not math.isfinite(value):
        return None, "is not a number"
    if check.kind == "integer" and not value.is_integer():
        return None, "is not a whole number"
    if check.minimum is not None and value < check.minimum:
        return None, f"must be at least {number_words(check.minimum)}"
    if check.maximum is not None and value > check.maximum:
        return None, f"must be at most {number_words(check.maximum)}"
    if value.is_integer() and (check.kind == "integer" or abs(value) <= _EXACT):
        return int(value), None
    return value, None


def format_ok(value: str, fmt: str) -> bool:
    """Whether `value` is of the string format `fmt`; an unknown format is the agent's business."""
    if fmt == "email":
        return _EMAIL.fullmatch(value) is not None
    if fmt == "uri":
        return _URI_SCHEME.match(value) is not None
    if fmt in ("date", "date-time"):
        shape, parse = (_DATE, datetime.date) if fmt == "date" else (_DATE_TIME, datetime.datetime)
        if shape.fullmatch(value) is None:
            return False
        try:
            parse.fromisoformat(value)
        except ValueError:
            return False  # 2025-02-30, 25:00
    return True


def _text(check: FieldCheck, value: str) -> Checked:
    if check.min_length is not None and len(value) < check.min_length:
        return None, f"needs at least {check.min_length} characters"
    if check.max_length is not None and len(value) > check.max_length:
        return None, f"allows at most {check.max_length} characters"
    if check.format is not None and not format_ok(value, check.format):
        return None, f"is not a valid {FORMAT_WORDS.get(check.format, check.format)}"
    return value, None


def _items(check: FieldCheck, values: list[str]) -> Checked:
    if check.required and not values:
        return None, "is required"
    if check.min_items is not None and len(values) < check.min_items:
        return None, f"needs at least {check.min_items} choices"
    if check.max_items is not None and len(values) > check.max_items:
        return None, f"allows at most {check.max_items} choices"
    return values, None


def _strings(value: object) -> list[str] | None:
    # An empty Lua table arrives as an empty list or an empty map.
    if isinstance(value, Mapping) and not value:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        strings = [v for v in value if isinstance(v, str)]
        return strings if len(strings) == len(value) else None
    return None


def _typed(check: FieldCheck, answer: object) -> Checked:
    if check.kind == "multi":
        values = _strings(answer)
        return (None, "must be a list of choices") if values is None else _items(check, values)
    if not isinstance(answer, str):
        return None, "must be text"
    if answer == "":
        return (None, "is required") if check.required else (None, None)
    if check.kind in ("number", "integer"):
        text = answer.strip()
        return _number(check, float(text)) if _NUMBER.fullmatch(text) else (None, "is not a number")
    return _text(check, answer)


def check_answer(check: object, answer: object) -> dict[str, object]:
    """One field's answer as the user gave it (the typed text, or the values chosen of a multi-select):
    `{value}` to send, or `{error}`, the message that says why not. The `pattern` is left to the whole
    content's check (`validate_content`), whose failure asks the form again with the reason by the field."""
    field = msgspec.convert(check, FieldCheck)
    value, error = _typed(field, answer)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= _INT64:
        value = float(value)
    return {"value": value, "error": None if error is None else f"{field.title} {error}"}


def scope_label(request: s.CreateElicitationRequest) -> str:
    """Which session (and tool call) or which request asks, for the prompt text."""
    if request.session_id is not None:
        label = f"session {request.session_id[:8]}"
        if request.tool_call_id is not None:
            label += f", tool call {request.tool_call_id}"
        return label
    if request.request_id is not None:
        return f"request {request.request_id}"
    return "no session"


def _options(prop: s.ElicitationPropertySchema) -> list[dict[str, str]] | None:
    if isinstance(prop, s.ElicitationPropertySchemaString):
        if prop.one_of:
            return [{"value": o.const, "title": o.title} for o in prop.one_of]
        if prop.enum:
            return [{"value": v, "title": v} for v in prop.enum]
        return None
    if isinstance(prop, s.ElicitationPropertySchemaArray):
        items = prop.items
        if isinstance(items, s.TitledMultiSelectItems):
            return [{"value": o.const, "title": o.title} for o in items.any_of]
        return [{"value": v, "title": v} for v in items.enum]
    return None


def field_check(name: str, prop: s.ElicitationPropertySchema, required: bool) -> FieldCheck:
    title = prop.title or name
    if isinstance(prop, s.ElicitationPropertySchemaString):
        return FieldCheck(
            kind="string",
            title=title,
            required=required,
            min_length=prop.min_length,
            max_length=prop.max_length,
            format=prop.format,
        )
    if isinstance(prop, s.ElicitationPropertySchemaArray):
        return FieldCheck(
            kind="multi", title=title, required=required, min_items=prop.min_items, max_items=prop.max_items
        )
    if isinstance(prop, s.ElicitationPropertySchemaBoolean):
        return FieldCheck(kind="boolean", title=title, required=required)
    kind: Kind = "integer" if isinstance(prop, s.ElicitationPropertySchemaInteger) else "number"
    return FieldCheck(kind=kind, title=title, required=required, minimum=prop.minimum, maximum=prop.maximum)


def _hints(check: FieldCheck, description: str | None) -> list[str]:
    """What is expected, after the title: the description, the format, the kind of number and its range."""
    hints = [description] if description else []
    if check.format is not None and check.format in FORMAT_WORDS:
        hints.append(FORMAT_WORDS[check.format])
    if check.kind in ("number", "integer"):
        kind = "whole number" if check.kind == "integer" else "number"
        low, high = check.minimum, check.maximum
        if low is not None and high is not None:
            kind = f"{kind} from {number_words(low)} to {number_words(high)}"
        elif low is not None:
            kind = f"{kind} ≥ {number_words(low)}"
        elif high is not None:
            kind = f"{kind} ≤ {number_words(high)}"
        hints.append(kind)
    return hints


def field_label(check: FieldCheck, description: str | None, error: str | None = None) -> str:
    """The field as its question shows it: title, "*" when required, what is expected, and the problem the
    whole content's check found, if any."""
    label = check.title + (" *" if check.required else "")
    hints = _hints(check, description)
    if hints:
        label += f" ({'; '.join(hints)})"
    if error is not None:
        label += f" [{check.title} {error}]"
    return label


def field_view(
    name: str, prop: s.ElicitationPropertySchema, required: bool, error: str | None = None
) -> dict[str, object]:
    """One form field as Lua asks it: its kind (`string`, `number`, `integer`, `boolean`, `enum` or
    `multi`: which question), label, default, choices, and the `check` Lua hands back with each answer."""
    options = _options(prop)
    check = field_check(name, prop, required)
    return {
        "name": name,
        "type": "enum" if options and check.kind == "string" else check.kind,
        "label": field_label(check, prop.description, error),
        "required": required,
        "default": prop.default,
        "options": options,
        "check": check,
    }


def form_view(
    request: s.CreateElicitationRequestForm,
    errors: Mapping[str, str] | None = None,
    values: object = None,
) -> dict[str, object]:
    """The form as Lua asks it; asked again, with the problems `validate_content` found and the answers
    given (`values`, the defaults this time)."""
    schema = request.requested_schema
    required = set(schema.required or [])
    problems = errors or {}
    view: dict[str, object] = {
        "mode": "form",
        "message": request.message,
        "source": scope_label(request),
        "title": schema.title,
        "fields": [
            field_view(name, prop, name in required, problems.get(name))
            for name, prop in schema.properties.items()
        ],
    }
    if errors is not None:
        view.update(errors=dict(errors), values=values)
    return view


def _check_value(name: str, prop: s.ElicitationPropertySchema, required: bool, value: object) -> Checked:
    """A value of the content as it goes on the wire, or the problem with it."""
    check = field_check(name, prop, required)
    if check.kind == "boolean":
        return (value, None) if isinstance(value, bool) else (None, "must be yes or no")
    if check.kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None, "is not a number"
        return _number(check, float(value))
    options = _options(prop)
    allowed = {option["value"] for option in options} if options else None
    if check.kind == "multi":
        values = _strings(value)
        if values is None:
            return None, "must be a list of choices"
        if allowed is not None and any(v not in allowed for v in values):
            return None, "has a choice that is not offered"
        return _items(check, values)
    if not isinstance(value, str):
        return None, "must be text"
    if allowed is not None and value not in allowed:
        return None, "is not one of the choices"
    checked, error = _text(check, value)
    if error is None and isinstance(prop, s.ElicitationPropertySchemaString) and prop.pattern is not None:
        try:
            if re.search(prop.pattern, value) is None:
                return None, f"does not match {prop.pattern}"
        except re.error:
            log.debug("unusable pattern %r from the agent ignored", prop.pattern)
    return checked, error


def validate_content(schema: s.ElicitationSchema, raw: object) -> tuple[Content, dict[str, str]]:
    """The content for the agent (known properties only) and the problems, by property name."""
    # An empty Lua table arrives as an empty list.
    given = raw if isinstance(raw, Mapping) else {}
    content: Content = {}
    errors: dict[str, str] = {}
    required = set(schema.required or [])
    for name, prop in schema.properties.items():
        value = given.get(name)
        if value is None or value == "":
            if name in required:
                errors[name] = "is required"
            continue
        checked, error = _check_value(name, prop, name in required, value)
        if error is not None:
            errors[name] = error
        elif checked is not None:
            content[name] = checked
    return content, errors


def openable(url: str) -> bool:
    """Only web pages are opened: the URL comes from the agent, and a `file:` or custom scheme could make
    the system run something."""
    return urlparse(url).scheme in ("http", "https")

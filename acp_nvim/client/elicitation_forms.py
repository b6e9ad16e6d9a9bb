"""An elicitation's form checked and described, Neovim-free: the fields as Lua walks the user through them
(`form_view`), the content the user gave validated against the requested schema before it goes to the agent
(`validate_content`), and which URLs may be opened (`openable`). The questions are asked by
`app/editor/elicitation.py`.
"""

from __future__ import annotations

import datetime
import logging
import math
import re
from typing import Any
from urllib.parse import urlparse

from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.elicitation")

Content = dict[str, s.ElicitationContentValue]


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


def field_view(name: str, prop: s.ElicitationPropertySchema, required: bool) -> dict[str, Any]:
    """One form field as Lua draws it: its kind (`string`, `number`, `integer`, `boolean`, `enum` or
    `multi`), labels, default, choices and the limits Lua checks while asking."""
    options = _options(prop)
    view: dict[str, Any] = {
        "name": name,
        "title": prop.title or name,
        "description": prop.description,
        "required": required,
        "default": prop.default,
        "options": options,
    }
    if isinstance(prop, s.ElicitationPropertySchemaString):
        view["type"] = "enum" if options else "string"
        view.update(format=prop.format, min_length=prop.min_length, max_length=prop.max_length)
    elif isinstance(prop, s.ElicitationPropertySchemaArray):
        view.update(type="multi", min_items=prop.min_items, max_items=prop.max_items)
    elif isinstance(prop, s.ElicitationPropertySchemaBoolean):
        view["type"] = "boolean"
    else:
        view.update(type="integer" if isinstance(prop, s.ElicitationPropertySchemaInteger) else "number")
        view.update(minimum=prop.minimum, maximum=prop.maximum)
    return view


def form_view(request: s.CreateElicitationRequestForm) -> dict[str, Any]:
    schema = request.requested_schema
    required = set(schema.required or [])
    return {
        "mode": "form",
        "message": request.message,
        "source": scope_label(request),
        "title": schema.title,
        "fields": [field_view(name, prop, name in required) for name, prop in schema.properties.items()],
    }


def _check_format(value: str, fmt: str) -> str | None:
    try:
        if fmt == "email":
            ok = re.fullmatch(r"[^@\s]+@[^@\s]+", value) is not None
        elif fmt == "uri":
            ok = bool(urlparse(value).scheme)
        elif fmt == "date":
            datetime.date.fromisoformat(value)
            ok = True
        elif fmt == "date-time":
            datetime.datetime.fromisoformat(value)
            ok = True
        else:
            ok = True  # an unknown format is the agent's business
    except ValueError:
        ok = False
    return None if ok else f"not a valid {fmt}"


def _check_value(prop: s.ElicitationPropertySchema, value: Any) -> tuple[Any, str | None]:
    """The value as it goes on the wire, or an error for the user."""
    if isinstance(prop, s.ElicitationPropertySchemaBoolean):
        return (value, None) if isinstance(value, bool) else (None, "must be yes or no")
    if isinstance(prop, s.ElicitationPropertySchemaInteger | s.ElicitationPropertySchemaNumber):
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return None, "must be a number"
        if isinstance(prop, s.ElicitationPropertySchemaInteger):
            if not float(value).is_integer():
                return None, "must be a whole number"
            value = int(value)
        if prop.minimum is not None and value < prop.minimum:
            return None, f"must be at least {prop.minimum:g}"
        if prop.maximum is not None and value > prop.maximum:
            return None, f"must be at most {prop.maximum:g}"
        return value, None
    options = _options(prop)
    allowed = {option["value"] for option in options} if options else None
    if isinstance(prop, s.ElicitationPropertySchemaArray):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None, "must be a list of choices"
        if allowed is not None and any(v not in allowed for v in value):
            return None, "has a choice that is not offered"
        if prop.min_items is not None and len(value) < prop.min_items:
            return None, f"needs at least {prop.min_items} choices"
        if prop.max_items is not None and len(value) > prop.max_items:
            return None, f"allows at most {prop.max_items} choices"
        return list(value), None
    if not isinstance(value, str):
        return None, "must be text"
    if allowed is not None and value not in allowed:
        return None, "is not one of the choices"
    if prop.min_length is not None and len(value) < prop.min_length:
        return None, f"needs at least {prop.min_length} characters"
    if prop.max_length is not None and len(value) > prop.max_length:
        return None, f"allows at most {prop.max_length} characters"
    if prop.pattern is not None:
        try:
            if re.search(prop.pattern, value) is None:
                return None, f"does not match {prop.pattern}"
        except re.error:
            log.debug("unusable pattern %r from the agent ignored", prop.pattern)
    if prop.format is not None:
        return value, _check_format(value, prop.format)
    return value, None


def validate_content(schema: s.ElicitationSchema, raw: Any) -> tuple[Content, dict[str, str]]:
    """The content for the agent (known properties only) and the problems, by property name."""
    # An empty Lua table arrives as an empty list.
    given: dict[str, Any] = raw if isinstance(raw, dict) else {}
    content: Content = {}
    errors: dict[str, str] = {}
    required = set(schema.required or [])
    for name, prop in schema.properties.items():
        value = given.get(name)
        if value is None or value == "":
            if name in required:
                errors[name] = "is required"
            continue
        checked, error = _check_value(prop, value)
        if error is not None:
            errors[name] = error
        else:
            content[name] = checked
    return content, errors


def openable(url: str) -> bool:
    """Only web pages are opened: the URL comes from the agent, and a `file:` or custom scheme could make
    the system run something."""
    return urlparse(url).scheme in ("http", "https")

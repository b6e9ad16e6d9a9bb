"""The output schema of each Neovim MCP tool: the shape of its `structuredContent`, declared in `tools/list`
so that a client can check what it gets (the MCP SDK's client does, on every successful call)."""

from __future__ import annotations

_INT = {"type": "integer"}
_STR = {"type": "string"}
_MAYBE_INT = {"type": ["integer", "null"]}
_MAYBE_STR = {"type": ["string", "null"]}
_ERRORS = {"type": "array", "items": _STR, "description": "what a language server answered with an error"}
_LEFT_OUT = {"type": "integer", "description": "results in files outside the session's folders, left out"}


def _object(properties: dict[str, object]) -> dict[str, object]:
    return {"type": "object", "properties": properties, "required": sorted(properties)}


def _list_of(name: str, item: dict[str, object], **more: object) -> dict[str, object]:
    return _object({name: {"type": "array", "items": item}, **more})


_DIAGNOSTIC = _object(
    {
        "path": _STR,
        "line": _INT,
        "column": _INT,
        "end_line": _INT,
        "end_column": _INT,
        "severity": {"enum": ["error", "warning", "info", "hint"]},
        "source": _MAYBE_STR,
        "code": _MAYBE_STR,
        "message": _STR,
    }
)
_LOCATION = _object(
    {
        "path": _STR,
        "line": _INT,
        "column": _INT,
        "end_line": _MAYBE_INT,
        "end_column": _MAYBE_INT,
        "text": _STR,
        "server": _STR,
    }
)
_SYMBOL = _object(
    {"path": _STR, "line": _INT, "column": _INT, "kind": _MAYBE_STR, "name": _STR, "server": _STR}
)
_BUFFER = _object(
    {
        "path": _STR,
        "loaded": {"type": "boolean"},
        "modified": {"type": "boolean"},
        "filetype": _STR,
        "language_servers": {"type": "array", "items": _STR},
        "lines": _MAYBE_INT,
    }
)
_LOCATIONS = _list_of("locations", _LOCATION, left_out=_LEFT_OUT, errors=_ERRORS)

OUTPUT_SCHEMAS: dict[str, dict[str, object]] = {
    "diagnostics": _list_of("diagnostics", _DIAGNOSTIC),
    "definition": _LOCATIONS,
    "references": _LOCATIONS,
    "hover": _list_of("hover", _object({"server": _STR, "text": _STR}), errors=_ERRORS),
    "document_symbols": _list_of("symbols", _SYMBOL, left_out=_LEFT_OUT, errors=_ERRORS),
    "workspace_symbols": _list_of("symbols", _SYMBOL, left_out=_LEFT_OUT, errors=_ERRORS),
    "open_buffers": _list_of("buffers", _BUFFER),
    "selection": _object(
        {
            "path": _STR,
            "modified": {"type": "boolean"},
            "mode": {"type": "string", "description": '"cursor", or the Visual mode: "v", "V", CTRL-V'},
            "line": _INT,
            "column": _INT,
            "end_line": _MAYBE_INT,
            "end_column": _MAYBE_INT,
            "text": _STR,
        }
    ),
}

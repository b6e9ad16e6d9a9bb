"""Validation of the user's `setup()` table against the Structs of `app/config/options.py`, naming every
offending field (in the words of a Lua user: "a number", "got table") and leaving it at its default.

msgspec's own errors stop at the first problem and speak of JSON paths; a user fixing their options wants all
of them at once, in their own terms. So the annotations of the Structs are walked here, one field at a time.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Literal, TypeVar

import msgspec

from acp_nvim.app.config import options as c
from acp_nvim.app.config.presets import PRESETS
from acp_nvim.app.mcp.tools import TOOL_NAMES
from acp_nvim.app.registry.options import valid_id
from acp_nvim.app.runs import McpServerConfig

AGENT_NAMES_MUST_BE_STRINGS = "`{field}`: agent names must be strings"

S = TypeVar("S", bound=msgspec.Struct)


def lua_type(value: object) -> str:
    """The Lua type name of a value that came from a Lua table."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | dict):
        return "table"
    return type(value).__name__


def inspect(value: object) -> str:
    """A value as `vim.inspect` shows it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if value is None:
        return "nil"
    return repr(value)


def as_table(value: object) -> dict[object, object] | None:
    """A Lua table by its keys: a list arrives for a table with keys 1..n (and for an empty one)."""
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {index: item for index, item in enumerate(value, 1)}
    return None


# ---- one value against one rule: (ok, description for the message) ---------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _string_map(value: object) -> bool:
    table = as_table(value)
    return table is not None and all(isinstance(k, str) and isinstance(v, str) for k, v in table.items())


def _session_defaults(value: object) -> bool:
    table = as_table(value)
    return table is not None and all(
        isinstance(k, str) and isinstance(v, str | bool) for k, v in table.items()
    )


def _key(value: object) -> bool:
    return value is False or (isinstance(value, str) and value != "")


def _mcp_server(entry: object) -> McpServerConfig | None:
    table = as_table(entry)
    if table is None or not isinstance(table.get("name"), str):
        return None
    kind = table.get("type", "stdio")
    if kind == "stdio":
        if not isinstance(table.get("command"), str):
            return None
    elif kind not in ("http", "sse") or not isinstance(table.get("url"), str):
        return None
    fixed = {k: (as_table(v) if k in ("env", "headers") and v == [] else v) for k, v in table.items()}
    try:
        return msgspec.convert(fixed, McpServerConfig)
    except msgspec.ValidationError:
        return None


def _mcp_servers(value: object) -> list[McpServerConfig] | None:
    if not isinstance(value, list):
        return None
    servers = [_mcp_server(entry) for entry in value]
    return None if any(server is None for server in servers) else typing.cast(list[McpServerConfig], servers)


Check = Callable[[object], bool]

SIMPLE: dict[object, tuple[Check, str]] = {
    bool: (lambda v: isinstance(v, bool), "a boolean"),
    float: (_is_number, "a number"),
    int: (_is_number, "a number"),
    str: (lambda v: isinstance(v, str), "a string"),
    list[str]: (_strings, "a list of strings"),
    dict[str, str]: (_string_map, "a table of strings"),
}
MARKED: dict[str, tuple[Check, str]] = {
    c.KEY: (_key, "a key (a non-empty string) or false"),
    c.SESSION_DEFAULTS: (_session_defaults, "a table of option id = string or boolean"),
    c.MCP_TOOLS: (
        lambda v: _strings(v) and all(name in TOOL_NAMES for name in typing.cast(list[str], v)),
        "a list of the Neovim MCP server's tools (" + ", ".join(TOOL_NAMES) + ")",
    ),
    c.MCP: (
        lambda v: _mcp_servers(v) is not None,
        "a list of MCP servers ({name, command} or {type = 'http'|'sse', name, url})",
    ),
}


_HINTS: dict[type[msgspec.Struct], dict[str, object]] = {}


def _hints(kind: type[msgspec.Struct]) -> dict[str, object]:
    # Resolving the annotations is most of a check's cost; the Structs never change.
    hints = _HINTS.get(kind)
    if hints is None:
        hints = _HINTS[kind] = typing.get_type_hints(kind, include_extras=True)
    return hints


def _without_none(hint: object) -> object:
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, type(int | str)) and type(None) in args:
        rest = [arg for arg in args if arg is not type(None)]
        return rest[0] if len(rest) == 1 else hint
    return hint


class Checker:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def struct(self, kind: type[S], raw: object, prefix: str) -> S:
        """An instance of the Struct `kind` from a Lua table: its valid fields, the defaults for the rest."""
        table = as_table(raw)
        assert table is not None
        hints = _hints(kind)
        valid: dict[str, object] = {}
        for key, value in table.items():
            field = prefix + str(key)
            if not isinstance(key, str) or key not in hints:
                self.errors.append(f"unknown option `{field}`")
                continue
            checked = self.value(key, hints[key], value, field)
            if checked is not _INVALID:
                valid[key] = checked
        return kind(**valid)

    def value(self, key: str, hint: object, value: object, field: str) -> object:
        if key == "agents" and field == "agents":
            return self.agents(value)
        hint = _without_none(hint)
        if typing.get_origin(hint) is typing.Annotated:
            check, described = MARKED[typing.get_args(hint)[1]]
            if not check(value):
                return self.wrong(field, described, value)
            marker = typing.get_args(hint)[1]
            if marker == c.MCP:
                return _mcp_servers(value)
            if marker == c.MCP_TOOLS:
                return list(typing.cast(list[str], value))
            return as_table(value) if marker == c.SESSION_DEFAULTS else value
        if typing.get_origin(hint) is Literal:
            allowed = typing.get_args(hint)
            if value not in allowed:
                listed = ", ".join(inspect(item) for item in allowed)
                self.errors.append(f"`{field}` must be one of {listed}, got {inspect(value)}")
                return _INVALID
            return value
        if isinstance(hint, type) and issubclass(hint, msgspec.Struct):
            if as_table(value) is None:
                self.errors.append(f"`{field}` must be a table, got {lua_type(value)}")
                return _INVALID
            return self.struct(hint, value, field + ".")
        check, described = SIMPLE[hint]
        if not check(value):
            return self.wrong(field, described, value)
        return as_table(value) if isinstance(value, list) and hint != list[str] else value

    def wrong(self, field: str, described: str, value: object) -> _Invalid:
        self.errors.append(f"`{field}` must be {described}, got {lua_type(value)}")
        return _INVALID

    def agents(self, raw: object) -> dict[str, c.AgentOptions | bool] | _Invalid:
        table = as_table(raw)
        if table is None:
            self.errors.append(f"`agents` must be a table, got {lua_type(raw)}")
            return _INVALID
        valid: dict[str, c.AgentOptions | bool] = {}
        for name, agent in table.items():
            field = f"agents.{name}"
            if not isinstance(name, str):
                self.errors.append(AGENT_NAMES_MUST_BE_STRINGS.format(field=field))
            elif agent is False:
                valid[name] = False
            elif as_table(agent) is None:
                self.errors.append(f"`{field}` must be a table, got {lua_type(agent)}")
            else:
                before = len(self.errors)
                options = self.struct(c.AgentOptions, agent, field + ".")
                if options.cmd is None and name not in PRESETS and "cmd" not in (as_table(agent) or {}):
                    self.errors.append(f"`{field}.cmd` is required")
                if len(self.errors) == before:
                    valid[name] = options
        return valid


class _Invalid:
    pass


_INVALID = _Invalid()


def check(raw: object) -> tuple[c.Config, list[str]]:
    """The normalized configuration of a `setup()` table (Lua's own options left out), and one message per
    offending field, sorted; an offending field keeps its default."""
    checker = Checker()
    table = as_table(raw if raw is not None else {})
    if table is None:
        checker.errors.append(f"setup() takes a table, got {lua_type(raw)}")
        table = {}
    config = checker.struct(c.Config, table, "")
    if config.attention.notify == "command" and not config.attention.command:
        checker.errors.append(
            '`attention.command` must name the program to run when `attention.notify` is "command"'
        )
        config = msgspec.structs.replace(config, attention=c.AttentionOptions())
    bad = [name for name in config.registry.preview if not valid_id(name)]
    if bad:
        checker.errors.append(
            f"`registry.preview` must list registry agent ids (lowercase letters, digits and '-'), got"
            f" {', '.join(inspect(name) for name in bad)}"
        )
        registry = msgspec.structs.replace(
            config.registry, preview=[n for n in config.registry.preview if n not in bad]
        )
        config = msgspec.structs.replace(config, registry=registry)
    return config, sorted(checker.errors)

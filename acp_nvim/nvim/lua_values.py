"""What crosses the Python<->Lua boundary, typed: the options and specs the host sends (msgspec Structs,
turned into the plain tables pynvim sends by `to_lua`) and the answers of `fs.*` and `terminal.*` (decoded by
`from_lua`; `LuaAnswerError` for one that is not what Lua declares). The calls themselves are `lua_api.py`'s.
The Structs of the editor mechanisms are declared with their port (`acp_nvim/app/editor/port.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias, TypeVar

import msgspec

from acp_nvim.app.editor.port import (  # the facts of the editor port, crossing here
    EditorAnswerError,
    ElicitationAnswer,
    FsReadAnswer,
    FsReadOptions,
    FsWriteAnswer,
    FsWriteOptions,
    SandboxQuestion,
    TerminalCreated,
    TerminalDone,
    TerminalEnvVar,
    TerminalExit,
    TerminalOutput,
    TerminalSpec,
    TerminalWait,
)

__all__ = [
    "ElicitationAnswer",
    "FsReadAnswer",
    "FsReadOptions",
    "FsWriteAnswer",
    "FsWriteOptions",
    "InputRequest",
    "LoginTerminalRequest",
    "LuaAnswerError",
    "LuaTable",
    "LuaValue",
    "PickerItem",
    "SandboxQuestion",
    "SelectRequest",
    "TerminalCreated",
    "TerminalDone",
    "TerminalEnvVar",
    "TerminalExit",
    "TerminalOutput",
    "TerminalSpec",
    "TerminalWait",
    "from_lua",
    "json_to_lua",
    "to_lua",
]

_T = TypeVar("_T")

# What msgpack carries between the host and Lua. Read-only containers, so a list[str] or a to_lua table is
# one; what comes back from Lua is narrowed with isinstance (lists and dicts) or decoded by `from_lua`.
LuaValue: TypeAlias = (
    bool | int | float | str | bytes | Sequence["LuaValue"] | Mapping[str, "LuaValue"] | None
)
LuaTable: TypeAlias = dict[str, LuaValue]


class PickerItem(msgspec.Struct, frozen=True):
    id: str
    label: str


class SelectRequest(msgspec.Struct, frozen=True):
    """A `ui.select` picker: the chosen item's id comes back."""

    prompt: str
    kind: str
    items: list[PickerItem]


class InputRequest(msgspec.Struct, frozen=True):
    """A `ui.input` question: the text typed comes back (nothing when dismissed)."""

    prompt: str
    default: str


class LoginTerminalRequest(msgspec.Struct, frozen=True):
    """A `ui.terminal` command (a login): its exit code comes back."""

    title: str
    argv: list[str]
    env: dict[str, str]


class LuaAnswerError(EditorAnswerError):
    """Lua answered with something other than what it declares (a bug on one side, never the agent's)."""


def to_lua(value: msgspec.Struct) -> LuaTable:
    """A Struct as the table Lua receives; a None field arrives as vim.NIL, as a None in a dict always did."""
    table = msgspec.to_builtins(value)
    assert isinstance(table, dict)
    return table


def json_to_lua(value: dict[str, object]) -> LuaTable:
    """A JSON object the application built (an elicitation form, :AcpLog's view) as the table Lua receives."""
    table = msgspec.to_builtins(value)
    assert isinstance(table, dict)
    return table


def _text(value: object) -> object:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _strings(raw: object) -> object:
    # pynvim hands Lua strings over as str, but bytes where they were not UTF-8 on some paths.
    if isinstance(raw, dict):
        return {k: _text(v) for k, v in raw.items()}
    return raw


def from_lua(raw: object, kind: type[_T]) -> _T:
    """A Lua answer as the Struct it is declared to be."""
    try:
        return msgspec.convert(_strings(raw), kind)
    except msgspec.ValidationError as err:
        raise LuaAnswerError(f"unexpected answer from Neovim: {err}") from None

"""What crosses the Python<->Lua boundary, typed: the options and specs the host sends (msgspec Structs,
turned into the plain tables pynvim sends by `to_lua`) and the answers of `fs.*` and `terminal.*` (decoded by
`from_lua`; `LuaAnswerError` for one that is not what Lua declares). The calls themselves are `lua_api.py`'s.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

_T = TypeVar("_T")


class PickerItem(msgspec.Struct, frozen=True):
    id: str
    label: str


class SelectRequest(msgspec.Struct, frozen=True):
    """A `ui.select` picker: the chosen item's id comes back."""

    prompt: str
    kind: str
    items: list[PickerItem]


class LoginTerminalRequest(msgspec.Struct, frozen=True):
    """A `ui.terminal` command (a login): its exit code comes back."""

    title: str
    argv: list[str]
    env: dict[str, str]


class TerminalEnvVar(msgspec.Struct, frozen=True):
    name: str
    value: str


class TerminalSpec(msgspec.Struct, frozen=True):
    """What `terminal.create` runs: env is merged over the editor's environment by jobstart."""

    command: str
    args: list[str]
    env: list[TerminalEnvVar]
    cwd: str
    output_byte_limit: int | None


class FsReadOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How `fs.read` reads: `max_bytes` of a buffer's text at most; `checked_path`: refuse a path that leads
    elsewhere than when checked ("path_changed"); the read becomes session `view`'s view (`fs/view.lua`)."""

    max_bytes: int
    checked_path: bool = True
    view: str | None = None


class FsReadAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.read`'s answer: a buffer's text, or `no_buffer` (the host reads the disk), or a fact."""

    ok: bool
    content: str | None = None
    from_buffer: bool = False
    no_buffer: bool = False
    fact: str | None = None
    detail: str | None = None
    size: int | None = None


class FsWriteOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.write` through the buffer, reviewed for `session_id`, merged over session `view`'s view."""

    session_id: str | None = None
    tool_call_id: str | None = None
    autocmds: bool = False
    checked_path: bool = True
    review: bool = True
    view: str | None = None


class FsWriteAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.write`'s answer: what the write did, or the fact that stopped it (`kind` of a non-regular file)."""

    ok: bool
    bufnr: int | None = None
    lines_touched: int = 0
    hunks: int = 0
    created: bool = False
    had_unsaved_edits: bool = False
    fact: str | None = None
    detail: str | None = None
    kind: str | None = None


class TerminalExit(msgspec.Struct, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class TerminalCreated(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.create`'s answer: the terminal's id, or the fact that it did not start."""

    ok: bool
    terminal_id: str | None = None
    bufnr: int | None = None
    pid: int | None = None
    fact: str | None = None
    detail: str | None = None


class TerminalOutput(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.output`'s answer: the bytes from `from_` to `total` of the whole stream (Lua keeps at most
    `limit` bytes), as a string with the non-UTF-8 bytes surrogate-escaped by pynvim."""

    ok: bool
    output: str = ""
    exit_status: TerminalExit | None = None
    from_: int = msgspec.field(default=0, name="from")
    total: int = 0
    limit: int = 0
    fact: str | None = None


class TerminalWait(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.wait_for_exit`'s answer: the exit status, or `pending` (it comes through `acp_reply`)."""

    ok: bool
    exit_status: TerminalExit | None = None
    pending: bool = False
    fact: str | None = None


class TerminalDone(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.kill`'s and `terminal.release`'s answer."""

    ok: bool
    fact: str | None = None


class LuaAnswerError(Exception):
    """Lua answered with something other than what it declares (a bug on one side, never the agent's)."""


def to_lua(value: msgspec.Struct) -> dict[str, Any]:
    """A Struct as the table Lua receives; a None field arrives as vim.NIL, as a None in a dict always did."""
    table = msgspec.to_builtins(value)
    assert isinstance(table, dict)
    return table


def _text(value: Any) -> Any:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


def _strings(raw: Any) -> Any:
    # pynvim hands Lua strings over as str, but bytes where they were not UTF-8 on some paths.
    if isinstance(raw, dict):
        return {k: _text(v) for k, v in raw.items()}
    return raw


def from_lua(raw: Any, kind: type[_T]) -> _T:
    """A Lua answer as the Struct it is declared to be."""
    try:
        return msgspec.convert(_strings(raw), kind)
    except msgspec.ValidationError as err:
        raise LuaAnswerError(f"unexpected answer from Neovim: {err}") from None

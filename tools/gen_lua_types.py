"""Write ``lua/acp_nvim/host/types.lua``: a LuaCATS declaration of the values that cross the Python<->Lua
boundary, from the msgspec Structs they are (their one owner), so that a Lua reader sees their shapes.

Usage: ``python tools/gen_lua_types.py [--check]``; ``--check`` exits 1 when the committed file differs.
"""

from __future__ import annotations

import argparse
import collections.abc
import sys
import types
import typing
from pathlib import Path

import msgspec
import msgspec.structs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generated_files import write_or_check  # noqa: E402

from acp_nvim.app import views  # noqa: E402
from acp_nvim.app.chat import ops as chat_ops  # noqa: E402
from acp_nvim.app.editor import port  # noqa: E402
from acp_nvim.app.review import note  # noqa: E402
from acp_nvim.nvim import host_methods, lua_values  # noqa: E402

OUTPUT = ROOT / "lua" / "acp_nvim" / "host" / "types.lua"
PREFIX = "acp."

# What Python sends (the chat's ops, the status, the questions), what Lua answers (fs, terminals, forms) and
# the tables Lua's calls send the host.
ROOTS: list[tuple[str, object]] = [
    ("ChatOp", chat_ops.ChatOp),
    ("Status", views.Status),
    ("ChatInfo", views.ChatInfo),
    ("PermissionView", views.PermissionView),
    ("QueueView", views.QueueView),
    ("Attention", views.Attention),
    ("SelectRequest", lua_values.SelectRequest),
    ("InputRequest", lua_values.InputRequest),
    ("LoginTerminalRequest", lua_values.LoginTerminalRequest),
    ("FsReadOptions", port.FsReadOptions),
    ("FsReadAnswer", port.FsReadAnswer),
    ("FsWriteOptions", port.FsWriteOptions),
    ("FsWriteAnswer", port.FsWriteAnswer),
    ("TerminalSpec", port.TerminalSpec),
    ("TerminalCreated", port.TerminalCreated),
    ("TerminalOutput", port.TerminalOutput),
    ("TerminalWait", port.TerminalWait),
    ("TerminalDone", port.TerminalDone),
    ("SandboxQuestion", port.SandboxQuestion),
    ("ElicitationAnswer", port.ElicitationAnswer),
    ("NoteMark", note.NoteMark),
    ("NoteItem", note.NoteItem),
    # The tables Lua sends the host (the positional arguments of each method: nvim/host_methods.py).
    ("StartRequest", host_methods.StartRequest),
    ("BootstrapOptions", host_methods.BootstrapOptions),
    ("ReviewRequest", note.ReviewRequest),
]


class Writer:
    """LuaCATS for Python annotations, walked by hand: msgspec's own inspection refuses the untagged unions of
    Structs that are only ever encoded (a config option's values or groups)."""

    def __init__(self) -> None:
        self.classes: dict[str, list[str]] = {}

    def lua_type(self, t: object) -> str:
        origin, args = typing.get_origin(t), typing.get_args(t)
        if origin is typing.Annotated:
            return self.lua_type(args[0])
        if t is str:
            return "string"
        if t is bool:
            return "boolean"
        if t is int:
            return "integer"
        if t is float:
            return "number"
        if t is None or t is type(None):
            return "nil"
        if origin is typing.Literal:
            return "|".join(f'"{v}"' if isinstance(v, str) else str(v).lower() for v in args)
        if origin in (list, tuple, set, frozenset, collections.abc.Sequence):
            items = [a for a in args if a is not Ellipsis]
            return f"{self.wrapped(items[0])}[]" if len(set(items)) == 1 else "any[]"
        if origin in (dict, collections.abc.Mapping):
            return f"table<{self.lua_type(args[0])}, {self.lua_type(args[1])}>"
        if origin in (typing.Union, types.UnionType):
            return "|".join(self.lua_type(member) for member in args)
        if isinstance(t, type) and issubclass(t, msgspec.Struct):
            return self.struct(t)
        if isinstance(t, type) and typing.is_typeddict(t):
            return self.typed_dict(t)
        return "any"

    def wrapped(self, t: object) -> str:
        text = self.lua_type(t)
        return f"({text})" if "|" in text else text

    def struct(self, cls: type[msgspec.Struct]) -> str:
        name = PREFIX + cls.__name__
        if name in self.classes:
            return name
        self.classes[name] = []  # placed first: a Struct that names itself ends here
        config = cls.__struct_config__
        lines = [f"---@class {name}"]
        if config.tag_field is not None:
            lines.append(f'---@field {config.tag_field} "{config.tag}"')
        hints = typing.get_type_hints(cls, include_extras=True)
        for field in msgspec.structs.fields(cls):
            optional = "" if field.required and not config.omit_defaults else "?"
            lines.append(f"---@field {field.encode_name}{optional} {self.lua_type(hints[field.name])}")
        self.classes[name] = lines
        return name

    def typed_dict(self, cls: type) -> str:
        """A TypedDict (the chat's lines: plain dicts, built by the thousand), as a class like a Struct's."""
        name = PREFIX + cls.__name__
        if name in self.classes:
            return name
        self.classes[name] = []
        required: frozenset[str] = getattr(cls, "__required_keys__", frozenset())
        lines = [f"---@class {name}"]
        for key, hint in typing.get_type_hints(cls, include_extras=True).items():
            optional = "" if key in required else "?"
            lines.append(f"---@field {key}{optional} {self.lua_type(hint)}")
        self.classes[name] = lines
        return name


def lua_types() -> str:
    writer = Writer()
    aliases = []
    for name, root in ROOTS:
        shown = writer.lua_type(root)
        if shown != PREFIX + name:
            aliases.append(f"---@alias {PREFIX}{name} {shown}")
    head = [
        "---@meta",
        "-- Generated by tools/gen_lua_types.py from the Structs that cross the boundary (app/chat/ops.py,",
        "-- app/views.py, nvim/lua_values.py, app/editor/port.py, nvim/host_methods.py); scripts/test",
        "-- checks it is current.",
        "-- Do not edit.",
        "",
    ]
    body = [line for name in sorted(writer.classes) for line in [*writer.classes[name], ""]]
    return "\n".join([*head, *aliases, "", *body]).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    wanted = lua_types()
    return write_or_check(
        {OUTPUT: wanted},
        parser.parse_args().check,
        lambda path: f"{path.relative_to(ROOT)} is stale: run python tools/gen_lua_types.py",
    )
    OUTPUT.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

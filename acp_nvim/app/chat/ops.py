"""The ops a `chat.apply` batch is made of: a tagged union of Structs (`op` names the kind), encoded to JSON
by `acp_nvim/nvim/render.py` into the tables `lua/acp_nvim/ui/chat/`'s `apply` reads (see `app/chat/view.py`
for the lines of an item).

Fields with a default are left out of the JSON when they hold it (`omit_defaults`): an append, the op of the
streaming path, stays `{"op":"append","id":..,"text":..}`. `gc=False`: the ops hold no cycles, and a replayed
history makes thousands of them at once.
"""

from __future__ import annotations

from typing import TypeAlias

import msgspec

from acp_nvim.app.chat.lines import Line


class ItemView(msgspec.Struct, omit_defaults=True, gc=False):
    """One item of the transcript as lines; `tight`: it follows the one before it without a blank line."""

    id: str
    kind: str
    lines: list[Line]
    tight: bool = False


class AddOp(msgspec.Struct, tag_field="op", tag="add", gc=False):
    item: ItemView


class ReplaceOp(msgspec.Struct, tag_field="op", tag="replace", gc=False):
    item: ItemView


class AppendOp(msgspec.Struct, tag_field="op", tag="append", gc=False):
    """`text` goes on at the end of the message `id`."""

    id: str
    text: str


class NoteOp(msgspec.Struct, tag_field="op", tag="note", gc=False):
    """The note `text` where the message `id` is cut (`file` holds it whole), and what follows it: `tail`."""

    id: str
    text: str
    tail: str
    file: str


class CommandView(msgspec.Struct, gc=False):
    """A slash command as the prompt's completion shows it."""

    word: str
    menu: str
    hint: str


class ModeView(msgspec.Struct, gc=False):
    id: str
    name: str


class ConfigView(msgspec.Struct, gc=False):
    """An agent's config option as `:AcpConfig` completes it: its id and the words the host accepts for it
    (`client/session/state.py`'s `config_value_words`); Lua reshapes nothing."""

    id: str
    values: list[str]


class MetaOp(msgspec.Struct, tag_field="op", tag="meta", gc=False):
    """What the chat shows and completes beside its items: the header (winbar), title, mode, commands."""

    header: str
    title: str | None
    mode: str | None
    modes: list[ModeView]
    commands: list[CommandView]
    config: list[ConfigView]


class TermOutputOp(msgspec.Struct, tag_field="op", tag="term_output", omit_defaults=True, gc=False):
    """Output of a command the agent runs itself, for the chat terminal `term`; `reset`: it starts afresh."""

    term: str
    text: str
    reset: bool = False


class TermStatus(msgspec.Struct, gc=False):
    exit_code: int | None
    signal: str | None


class TermExitOp(msgspec.Struct, tag_field="op", tag="term_exit", gc=False):
    term: str
    status: TermStatus


ChatOp: TypeAlias = AddOp | ReplaceOp | AppendOp | NoteOp | MetaOp | TermOutputOp | TermExitOp

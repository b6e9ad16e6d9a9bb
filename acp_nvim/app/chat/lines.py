"""The lines the chat's view models are made of (see `acp_nvim/app/chat/view.py` for their shape)."""

from __future__ import annotations

from typing import TypedDict

from acp_nvim.client.session.transcript import not_shown


class LineLocation(TypedDict):
    """Where `<CR>` on the line opens: a file and a line."""

    path: str
    lnum: int


class LineDiff(TypedDict):
    """A diff drawn in place of the line: the file, its old text (None: a new file) and its new text."""

    path: str
    old: str | None
    new: str


class Line(TypedDict, total=False):
    """One line of an item as Lua draws it (a plain dict at run time: the builders below make thousands).
    `s`: its segments, each [text, highlight group]; `f`: its fold level ('foldexpr''s "1", ">1", ...);
    `note`: the file holding a cut message whole; `term`: the terminal drawn under it, after `text`; `diff`,
    `loc`: see their types."""

    s: list[list[str]]
    f: str
    note: str
    term: str
    text: str
    diff: LineDiff
    loc: LineLocation


# Of a line (title, plan entry, path), shown at most.
MAX_LINE_CHARS = 2048

# The builders run for every item of a replayed history (5,000 items for 10,000 updates): they build the dicts
# and lists directly rather than through a helper per line (a fifth less of the time of `ops_for`).


def segments_line(*segments: tuple[str, str]) -> Line:
    return {"s": [[text, group] for text, group in segments]}


def text_lines(text: str, indent: str = "", group: str = "") -> list[Line]:
    return [{"s": [[indent + part, group]]} for part in text.split("\n")]


def clip_line(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + " " + not_shown(len(text) - MAX_LINE_CHARS)


def reply_header(agent_name: str) -> Line:
    """The line above a reply of the agent: one per reply, whatever it holds."""
    return {"s": [["▍ " + agent_name, "AcpChatAgent"]]}

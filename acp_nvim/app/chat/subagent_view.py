"""A subagent in the chat: under the tool call of its parent that started it, one line (its name and state)
over its own transcript (messages, tool calls, plan), which is a fold of its own, closed like a tool call's
details; open while the child asks the user something (what is asked must be seen)."""

from __future__ import annotations

from collections.abc import Callable

from acp_nvim.app.chat.lines import Line, clip_line
from acp_nvim.client.session.subagents import Subagent
from acp_nvim.client.session.transcript import Item, MessageItem, rough_size
from acp_nvim.client.session.unstable_updates import UnstableTranscript

# Of a child's transcript, the newest items shown, and of a message its last characters (it is drawn again
# whole when it changes).
MAX_CHILD_ITEMS = 60
MAX_CHILD_TEXT_CHARS = 8 * 1024
INDENT = "    "
WORD_GROUPS = {
    "running": "AcpChatStatusRunning",
    "requires action": "AcpChatStatusAwaiting",
    "awaiting permission": "AcpChatStatusAwaiting",
    "done": "AcpChatStatusDone",
    "cancelled": "AcpChatStatusCancelled",
    "failed": "AcpChatStatusFailed",
}
# How an item of the child's transcript is drawn: `app/chat/view.py`'s `item_view` lines of it.
RenderItem = Callable[[Item, str, str, list[Subagent]], list[Line]]


def _deeper(fold: str | None) -> str:
    """A line's fold level one deeper: the child's transcript is inside the child's fold."""
    if fold is None:
        return "1"
    if fold.startswith(">"):
        return ">" + str(int(fold[1:]) + 1)
    return str(int(fold) + 1)


def _nested(line: Line, folded: bool) -> Line:
    """A line of the child's transcript, indented under the child and a level deeper in the folds."""
    if "term" in line:
        # The live output of a child's terminal is not drawn here: the command is.
        text = str(line.get("text") or f"{INDENT}terminal {line['term']}")
        shown: Line = {"s": [[INDENT + text, "AcpChatTerminal"]]}
    elif "s" in line:
        shown = {"s": [[INDENT, ""], *line["s"]]}
        if "loc" in line:
            shown["loc"] = line["loc"]
    else:
        shown = line.copy()
        shown.pop("f", None)
    fold = line.get("f")
    if folded:
        shown["f"] = _deeper(fold if isinstance(fold, str) else None)
    elif isinstance(fold, str):
        shown["f"] = fold
    return shown


def _bounded(item: Item) -> Item:
    """A long message of the child as its end: the child is drawn again whole when it changes, so what it
    streams must cost a bounded redraw (the whole message stays in its transcript)."""
    if not isinstance(item, MessageItem) or item.size <= MAX_CHILD_TEXT_CHARS:
        return item
    text = item.text
    shown = f"… {rough_size(len(text) - MAX_CHILD_TEXT_CHARS)} before\n" + text[-MAX_CHILD_TEXT_CHARS:]
    return MessageItem(item.key, item.role, item.message_id, shown)


def _names_agent(line: Line) -> bool:
    segments = line.get("s")
    return segments is not None and len(segments) > 0 and segments[0][1] == "AcpChatAgent"


def subagent_lines(child: Subagent, render: RenderItem) -> list[Line]:
    words = child.status_words()
    group = WORD_GROUPS.get(words.split(":")[0], "AcpChatStatusPending")
    header: Line = {
        "s": [
            [INDENT + "↳ ", group],
            [clip_line("subagent " + child.name), "AcpChatToolTitle"],
            ["  " + clip_line(words), group],
        ]
    }
    state = child.state
    if not isinstance(state, UnstableTranscript):
        return [header]
    body: list[Line] = []
    if child.description and child.description != child.name:
        # What it was asked to do, whole under its line (its name may be the start of it).
        asked = child.description[:MAX_CHILD_TEXT_CHARS].strip("\n").split("\n")
        body.extend({"s": [[INDENT * 2 + clip_line(part), "AcpChatNotice"]]} for part in asked)
    items = state.items[-MAX_CHILD_ITEMS:]
    if len(state.items) > len(items):
        body.append(
            {"s": [[f"{INDENT * 2}… {len(state.items) - len(items)} earlier items", "AcpChatNotice"]]}
        )
    for item in items:
        grandchildren = state.children_under(item.key)
        lines = render(_bounded(item), child.name, child.session_id, grandchildren)
        # Its replies are under its own line: no header naming it again above each.
        body.extend(line for line in lines if not _names_agent(line))
    # While the child asks the user, its transcript is open; else a fold under its line.
    folded = child.asking == 0
    lines = [header, *(_nested(line, folded) for line in body)]
    if folded and body:
        header["f"] = ">1"
    return lines

"""Ready-made view models for the chat buffer: what Lua draws, so Lua never sees protocol data.

An item becomes a list of lines; a line is a dict with one of
  ``s``:    segments ``[[text, highlight_group], ...]`` (group ``""`` for none), optionally ``loc``
            ``{path, lnum}`` (the line jumps there with <CR>/gf),
  ``diff``: ``{path, old, new}`` (Lua expands it with `vim.diff`, which is C and fast on big files),
  ``term``: a terminal id (a placeholder line the terminal UI can attach live output to), with ``text`` the
            line's text when it is not the default (a command the agent runs itself: the command);
a line with ``note`` true is a message's last line, saying how much of it is not shown (a ``note`` op
rewrites it).
A batch of ops (`ops_for`) is what one `chat.apply` call receives.
"""

from __future__ import annotations

from typing import Any

import msgspec

from acp_nvim.client.session import SessionState
from acp_nvim.client.transcript import (
    Changes,
    CommandsItem,
    Item,
    MessageItem,
    NoticeItem,
    PlanItem,
    ToolCallItem,
    content_text,
    not_shown,
    rough_size,
)
from acp_nvim.protocol import schema as s

Line = dict[str, Any]
Op = dict[str, Any]

STATUS_ICONS = {
    "pending": "○",
    "in_progress": "◐",
    "completed": "✓",
    "failed": "✗",
    "cancelled": "⊘",
}
PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
HEADERS = {"user": ("You", "AcpChatUser"), "thought": ("Thinking", "AcpChatThoughtHeader")}
# Text crossing to Neovim in one op, at most (characters): Lua applies an op in one go, and the chat's drain
# keeps to its budget per tick only between ops. A larger message travels as an add and appends.
SLICE_CHARS = 32 * 1024
# Of a tool call, shown at most: its text content (re-sent whole on every update of the call), a diff's old
# plus new text (vim.diff works in one call), a line (title, plan entry), its locations, a plan's entries.
MAX_TOOL_TEXT_CHARS = 64 * 1024
MAX_DIFF_CHARS = 1024 * 1024
MAX_LINE_CHARS = 2048
MAX_LOCATIONS = 50
MAX_PLAN_ENTRIES = 100


STATUS_GROUPS = {
    "pending": "AcpChatStatusPending",
    "in_progress": "AcpChatStatusRunning",
    "completed": "AcpChatStatusDone",
    "failed": "AcpChatStatusFailed",
    "cancelled": "AcpChatStatusCancelled",
}
PLAN_GROUPS = {"completed": "AcpChatPlanDone", "in_progress": "AcpChatPlanRunning"}

# The builders below run for every item of a replayed history (5,000 items for 10,000 updates): they build
# the dicts and lists directly rather than through a helper per line (a fifth less of the time of `ops_for`).


def _line(*segments: tuple[str, str]) -> Line:
    return {"s": [[text, group] for text, group in segments]}


def _text_lines(text: str, indent: str = "", group: str = "") -> list[Line]:
    return [{"s": [[indent + part, group]]} for part in text.split("\n")]


def status_group(status: str) -> str:
    return STATUS_GROUPS.get(status, "AcpChatStatusPending")


def _clip_line(text: str) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    return text[:MAX_LINE_CHARS] + " " + not_shown(len(text) - MAX_LINE_CHARS)


def note_line(item: MessageItem) -> Line:
    return {"s": [[not_shown(item.hidden), "AcpChatNotice"]], "note": True}


def message_view(item: MessageItem, agent_name: str, text: str | None = None) -> list[Line]:
    """`text` (a beginning of the message's) in place of all of it: the rest follows as appends."""
    role = item.role
    title, group = HEADERS.get(role, (agent_name, "AcpChatAgent"))
    body_group = "AcpChatThought" if role == "thought" else ""
    lines = [
        {"s": [["▍ " + title, group]]},
        *_text_lines(item.text if text is None else text, group=body_group),
    ]
    if item.hidden and text is None:
        lines.append(note_line(item))
    return lines


def _tool_text_lines(text: str) -> list[Line]:
    note = None
    if len(text) > MAX_TOOL_TEXT_CHARS:
        note = not_shown(len(text) - MAX_TOOL_TEXT_CHARS)
        text = text[:MAX_TOOL_TEXT_CHARS]
    lines = _text_lines(text, indent="    ", group="AcpChatToolOutput")
    if note is not None:
        lines.append({"s": [["    " + note, "AcpChatNotice"]]})
    return lines


# Lines of a command (a script the agent runs) shown above its output.
MAX_COMMAND_LINES = 5


def shell_terminal_id(session_id: str, tool_call_id: str) -> str:
    """The chat terminal that shows a command the agent runs itself (not an ACP terminal: no `terminal/*`)."""
    return f"agent:{session_id}:{tool_call_id}"


def _command_lines(item: ToolCallItem, session_id: str) -> list[Line]:
    assert item.shell is not None
    parts = item.shell.command.split("\n")
    shown = [_clip_line(part) for part in parts[:MAX_COMMAND_LINES]]
    if len(parts) > MAX_COMMAND_LINES:
        shown.append(f"… {len(parts) - MAX_COMMAND_LINES} more lines")
    lines: list[Line] = [
        _line((("    $ " if n == 0 else "      ") + part, "AcpChatTerminal"))
        for n, part in enumerate(shown[:-1])
    ]
    # The last line of the command is where the output is drawn, under it, as for an ACP terminal.
    last = ("    $ " if len(shown) == 1 else "      ") + shown[-1]
    lines.append({"term": shell_terminal_id(session_id, item.tool_call_id), "text": last})
    return lines


def tool_call_view(item: ToolCallItem, session_id: str = "") -> list[Line]:
    status = "awaiting permission" if item.awaiting_permission else item.status
    group = "AcpChatStatusAwaiting" if item.awaiting_permission else status_group(item.status)
    icon = "?" if item.awaiting_permission else STATUS_ICONS.get(item.status, "•")
    title = _clip_line(item.title)
    if item.folded:
        # One highlight for the line: an extmark per segment was most of what an old tool call cost Neovim.
        return [
            {"s": [["  " + icon + " " + title + "  " + item.kind + "  " + status.replace("_", " "), group]]}
        ]
    lines: list[Line] = [
        {
            "s": [
                ["  " + icon + " ", group],
                [title, "AcpChatToolTitle"],
                ["  " + item.kind, "AcpChatToolKind"],
                ["  " + status.replace("_", " "), group],
            ]
        }
    ]
    if item.auto_allowed is not None:
        lines.append(_line(("    ✓ " + item.auto_allowed, "AcpChatNotice")))
    for location in item.locations[:MAX_LOCATIONS]:
        where = _clip_line(location.path) + (f":{location.line}" if location.line else "")
        line = _line(("    → ", "AcpChatToolKind"), (where, "AcpChatLocation"))
        line["loc"] = {"path": location.path, "lnum": location.line or 1}
        lines.append(line)
    if len(item.locations) > MAX_LOCATIONS:
        lines.append(_line((f"    … {len(item.locations) - MAX_LOCATIONS} more locations", "AcpChatNotice")))
    run = item.shell
    if run is not None:
        lines.extend(_command_lines(item, session_id))
    for content in item.content:
        if run is not None and (
            isinstance(content, s.ToolCallContentContent)
            or (isinstance(content, s.ToolCallContentTerminal) and content.terminal_id == run.terminal_id)
        ):
            # The command's output: drawn under the command line, from `output` ops.
            continue
        if isinstance(content, s.ToolCallContentDiff):
            size = len(content.old_text or "") + len(content.new_text)
            if size <= MAX_DIFF_CHARS:
                lines.append(
                    {"diff": {"path": content.path, "old": content.old_text, "new": content.new_text}}
                )
                continue
            # Too large to diff in one go on Neovim's main loop: the file can still be opened from here.
            line = _line(
                (f"    diff of {_clip_line(content.path)}: {rough_size(size)}, not shown", "AcpChatNotice")
            )
            line["loc"] = {"path": content.path, "lnum": 1}
            lines.append(line)
        elif isinstance(content, s.ToolCallContentTerminal):
            lines.append({"term": content.terminal_id})
        elif isinstance(content, s.ToolCallContentContent):
            lines.extend(_tool_text_lines(content_text(content.content)))
    return lines


def plan_view(item: PlanItem) -> list[Line]:
    lines: list[Line] = [{"s": [["▍ Plan", "AcpChatPlan"]]}]
    for entry in item.entries[:MAX_PLAN_ENTRIES]:
        group = PLAN_GROUPS.get(entry.status, "AcpChatPlanPending")
        mark = PLAN_MARKS.get(entry.status, "[ ]")
        segments = [["  " + mark + " ", group], [_clip_line(entry.content), group]]
        if entry.priority == "high":
            segments.append(["  !", "AcpChatPlanHigh"])
        lines.append({"s": segments})
    if len(item.entries) > MAX_PLAN_ENTRIES:
        lines.append(_line((f"  … {len(item.entries) - MAX_PLAN_ENTRIES} more entries", "AcpChatNotice")))
    return lines


def commands_view(item: CommandsItem) -> list[Line]:
    lines = [_line(("▍ Commands", "AcpChatCommands"))]
    for command in item.commands:
        hint = f" <{command.input.hint}>" if command.input is not None else ""
        lines.append(
            _line(("  /" + command.name + hint, "AcpChatCommandName"), ("  " + command.description, ""))
        )
    return lines


def notice_view(item: NoticeItem) -> list[Line]:
    group = {"error": "AcpChatError", "warning": "AcpChatWarning"}.get(item.level, "AcpChatNotice")
    text = item.text
    if len(text) > MAX_TOOL_TEXT_CHARS:
        text = text[:MAX_TOOL_TEXT_CHARS] + " " + not_shown(len(text) - MAX_TOOL_TEXT_CHARS)
    return _text_lines(text, indent="  ", group=group)


def item_view(item: Item, agent_name: str, session_id: str = "") -> dict[str, Any]:
    kind: str
    lines: list[Line]
    if isinstance(item, MessageItem):
        kind, lines = item.role, message_view(item, agent_name)
    elif isinstance(item, ToolCallItem):
        kind, lines = "tool_call", tool_call_view(item, session_id)
    elif isinstance(item, PlanItem):
        kind, lines = "plan", plan_view(item)
    elif isinstance(item, CommandsItem):
        kind, lines = "commands", commands_view(item)
    else:
        kind, lines = "notice", notice_view(item)
    return {"id": item.key, "kind": kind, "lines": lines}


def _short_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def header_text(state: SessionState, agent_name: str) -> str:
    """One line above the chat (winbar): session title or agent, mode, context usage."""
    parts = [_clip_line(state.title) if state.title else agent_name]
    if state.current_mode:
        parts.append(f"mode: {state.current_mode_name}")
    for option in state.config_options:
        if option.category == "model" and isinstance(option, s.SessionConfigOptionSelect):
            parts.append(f"model: {option.current_value}")
    if state.usage is not None:
        usage = f"ctx {_short_count(state.usage.used)}/{_short_count(state.usage.size)}"
        if state.usage.cost_amount is not None:
            usage += f" {state.usage.cost_amount:.2f} {state.usage.cost_currency}"
        parts.append(usage)
    return " │ ".join(parts)


def meta_op(state: SessionState, agent_name: str) -> Op:
    commands = [
        {
            "word": "/" + command.name,
            "menu": command.description,
            "hint": command.input.hint if command.input is not None else "",
        }
        for command in state.commands
    ]
    modes = [{"id": mode.id, "name": mode.name} for mode in state.modes]
    config = [msgspec.to_builtins(option) for option in state.config_options]
    return {
        "op": "meta",
        "header": header_text(state, agent_name),
        "title": _clip_line(state.title) if state.title else state.title,
        "mode": state.current_mode,
        "modes": modes,
        "commands": commands,
        "config": config,
    }


def _append_ops(key: str, text: str) -> list[Op]:
    return [
        {"op": "append", "id": key, "text": text[start : start + SLICE_CHARS]}
        for start in range(0, len(text), SLICE_CHARS)
    ]


def _add_ops(item: Item, agent_name: str, session_id: str) -> list[Op]:
    if not isinstance(item, MessageItem) or item.size <= SLICE_CHARS:
        return [{"op": "add", "item": item_view(item, agent_name, session_id)}]
    # A long message: its beginning as the item, the rest in slices, its note last.
    text = item.text
    lines = message_view(item, agent_name, text[:SLICE_CHARS])
    ops: list[Op] = [{"op": "add", "item": {"id": item.key, "kind": item.role, "lines": lines}}]
    ops.extend(_append_ops(item.key, text[SLICE_CHARS:]))
    if item.hidden:
        ops.append({"op": "note", "id": item.key, "text": not_shown(item.hidden)})
    return ops


def ops_for(state: SessionState, changes: Changes, agent_name: str) -> list[Op]:
    """The smallest batch that brings the chat from the previous flush to `state`."""
    item = state.item
    ops: list[Op] = []
    for key in changes.added:
        ops.extend(_add_ops(item(key), agent_name, state.session_id))
    for key in changes.replaced:
        ops.append({"op": "replace", "item": item_view(item(key), agent_name, state.session_id)})
    for key, pieces in changes.appended.items():
        text = "".join(pieces)
        if len(text) <= SLICE_CHARS:
            ops.append({"op": "append", "id": key, "text": text})
        else:
            ops.extend(_append_ops(key, text))
    for key in changes.noted:
        message = item(key)
        if isinstance(message, MessageItem):
            ops.append({"op": "note", "id": key, "text": not_shown(message.hidden)})
    if changes.output or changes.exits:
        ops.extend(_shell_ops(state, changes))
    if changes.meta:
        ops.append(meta_op(state, agent_name))
    return ops


def _shell_ops(state: SessionState, changes: Changes) -> list[Op]:
    """Output and exits of the commands the agent runs itself, for the chat terminals under them."""
    ops: list[Op] = []
    for key, outputs in changes.output.items():
        tool_call = state.item(key)
        if not isinstance(tool_call, ToolCallItem):
            continue
        term = shell_terminal_id(state.session_id, tool_call.tool_call_id)
        # Only the last fresh start matters; what followed it goes as one text (an op per update of a
        # frame was a Lua call per update).
        last_reset = max((n for n, output in enumerate(outputs) if output.reset), default=0)
        text = "".join(output.text for output in outputs[last_reset:])
        reset = outputs[last_reset].reset
        for start in range(0, max(len(text), 1), SLICE_CHARS):
            op: Op = {"op": "term_output", "term": term, "text": text[start : start + SLICE_CHARS]}
            if reset and start == 0:
                op["reset"] = True
            ops.append(op)
    for key, ended in changes.exits.items():
        tool_call = state.item(key)
        if isinstance(tool_call, ToolCallItem):
            term = shell_terminal_id(state.session_id, tool_call.tool_call_id)
            status = {"exit_code": ended.exit_code, "signal": ended.signal}
            ops.append({"op": "term_exit", "term": term, "status": status})
    return ops

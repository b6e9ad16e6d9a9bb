"""A tool call in the chat: its summary line (icon, title, kind, status) over its details (locations, the
command the agent runs, diffs, terminals, text output), which are a fold of their own."""

from __future__ import annotations

from acp_nvim.app.chat.lines import Line, clip_line, reply_header, segments_line
from acp_nvim.client.session.transcript import ToolCallItem, content_text, not_shown, rough_size
from acp_nvim.protocol import schema as s

STATUS_ICONS = {
    "pending": "○",
    "in_progress": "◐",
    "completed": "✓",
    "failed": "✗",
    "cancelled": "⊘",
}
# Lines of a tool call's text output shown when its details are opened; the rest is a fold of its own.
OUTPUT_LINES_SHOWN = 5
# Of a tool call, shown at most: its text content (re-sent whole on every update of the call), a diff's old
# plus new text (vim.diff works in one call), its locations.
MAX_TOOL_TEXT_CHARS = 64 * 1024
MAX_DIFF_CHARS = 1024 * 1024
MAX_LOCATIONS = 50
STATUS_GROUPS = {
    "pending": "AcpChatStatusPending",
    "in_progress": "AcpChatStatusRunning",
    "completed": "AcpChatStatusDone",
    "failed": "AcpChatStatusFailed",
    "cancelled": "AcpChatStatusCancelled",
}


def status_group(status: str) -> str:
    return STATUS_GROUPS.get(status, "AcpChatStatusPending")


def _tool_text_lines(text: str) -> list[Line]:
    note = None
    if len(text) > MAX_TOOL_TEXT_CHARS:
        note = not_shown(len(text) - MAX_TOOL_TEXT_CHARS)
        text = text[:MAX_TOOL_TEXT_CHARS]
    lines: list[Line] = [
        {"s": [["    " + part, "AcpChatToolOutput"]], "f": "1" if n < OUTPUT_LINES_SHOWN else "2"}
        for n, part in enumerate(text.split("\n"))
    ]
    if note is not None:
        lines.append(
            {"s": [["    " + note, "AcpChatNotice"]], "f": "1" if len(lines) < OUTPUT_LINES_SHOWN else "2"}
        )
    if len(lines) > OUTPUT_LINES_SHOWN:
        # A long output: its first lines, the rest folded once more.
        lines[OUTPUT_LINES_SHOWN]["f"] = ">2"
    return lines


# Lines of a command (a script the agent runs) shown above its output.
MAX_COMMAND_LINES = 5


def shell_terminal_id(session_id: str, tool_call_id: str) -> str:
    """The chat terminal that shows a command the agent runs itself (not an ACP terminal: no `terminal/*`)."""
    return f"agent:{session_id}:{tool_call_id}"


def _command_lines(item: ToolCallItem, session_id: str) -> list[Line]:
    assert item.shell is not None
    parts = item.shell.command.split("\n")
    shown = [clip_line(part) for part in parts[:MAX_COMMAND_LINES]]
    if len(parts) > MAX_COMMAND_LINES:
        shown.append(f"… {len(parts) - MAX_COMMAND_LINES} more lines")
    lines: list[Line] = [
        segments_line((("    $ " if n == 0 else "      ") + part, "AcpChatTerminal"))
        for n, part in enumerate(shown[:-1])
    ]
    # The last line of the command is where the output is drawn, under it, as for an ACP terminal.
    last = ("    $ " if len(shown) == 1 else "      ") + shown[-1]
    lines.append({"term": shell_terminal_id(session_id, item.tool_call_id), "text": last})
    return lines


def tool_call_view(item: ToolCallItem, session_id: str = "", agent_name: str = "") -> list[Line]:
    """One line (icon, title, kind, status) over its details, a fold closed until the user opens it; open
    while a permission request for it waits (what is asked must be seen)."""
    lines: list[Line] = [reply_header(agent_name)] if item.opens_reply else []
    status = "awaiting permission" if item.awaiting_permission else item.status
    group = "AcpChatStatusAwaiting" if item.awaiting_permission else status_group(item.status)
    icon = "?" if item.awaiting_permission else STATUS_ICONS.get(item.status, "•")
    title = clip_line(item.title)
    if item.folded:
        # One highlight for the line: an extmark per segment was most of what an old tool call cost Neovim.
        lines.append(
            {"s": [["  " + icon + " " + title + "  " + item.kind + "  " + status.replace("_", " "), group]]}
        )
        return lines
    summary: Line = {
        "s": [
            ["  " + icon + " ", group],
            [title, "AcpChatToolTitle"],
            ["  " + item.kind, "AcpChatToolKind"],
            ["  " + status.replace("_", " "), group],
        ]
    }
    lines.append(summary)
    details = _tool_call_details(item, session_id)
    # A request a rule answered says so under the summary, outside the fold: seen with the fold closed.
    fold_start = summary
    if item.auto_allowed is not None:
        lines.append(segments_line(("    ✓ " + item.auto_allowed, "AcpChatNotice")))
        fold_start = details[0] if details else summary
    if details and not item.awaiting_permission:
        for line in details:
            line.setdefault("f", "1")
        fold_start["f"] = ">1"
    elif details:
        for line in details:
            line.pop("f", None)
    lines.extend(details)
    return lines


def _plan_lines(plan: str) -> list[Line]:
    """A plan to approve, in full: what the user approves is all of it."""
    if len(plan) > MAX_TOOL_TEXT_CHARS:
        plan = plan[:MAX_TOOL_TEXT_CHARS] + "\n" + not_shown(len(plan) - MAX_TOOL_TEXT_CHARS)
    parts = plan.strip("\n").split("\n")
    return [segments_line(("    " + part if part else "", "AcpChatPlan")) for part in parts]


def _tool_call_details(item: ToolCallItem, session_id: str) -> list[Line]:
    lines: list[Line] = _plan_lines(item.plan) if item.plan else []
    for location in item.locations[:MAX_LOCATIONS]:
        where = clip_line(location.path) + (f":{location.line}" if location.line else "")
        line = segments_line(("    → ", "AcpChatToolKind"), (where, "AcpChatLocation"))
        line["loc"] = {"path": location.path, "lnum": location.line or 1}
        lines.append(line)
    if len(item.locations) > MAX_LOCATIONS:
        lines.append(
            segments_line((f"    … {len(item.locations) - MAX_LOCATIONS} more locations", "AcpChatNotice"))
        )
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
            line = segments_line(
                (f"    diff of {clip_line(content.path)}: {rough_size(size)}, not shown", "AcpChatNotice")
            )
            line["loc"] = {"path": content.path, "lnum": 1}
            lines.append(line)
        elif isinstance(content, s.ToolCallContentTerminal):
            lines.append({"term": content.terminal_id})
        elif isinstance(content, s.ToolCallContentContent):
            text = content_text(content.content)
            if item.plan and text.strip() in item.plan:
                # The plan, drawn above in full.
                continue
            lines.extend(_tool_text_lines(text))
    return lines

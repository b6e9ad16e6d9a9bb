"""Ready-made view models for the chat buffer: what Lua draws, so Lua never sees protocol data.

An item becomes a list of lines; a line is a dict with one of
  ``s``:    segments ``[[text, highlight_group], ...]`` (group ``""`` for none), optionally ``loc``
            ``{path, lnum}`` (the line jumps there with <CR>/gf),
  ``diff``: ``{path, old, new}`` (Lua expands it with `vim.diff`, which is C and fast on big files),
  ``term``: a terminal id (a placeholder line the terminal UI can attach live output to), with ``text`` the
            line's text when it is not the default (a command the agent runs itself: the command);
a line with ``note`` (the path of the file holding the whole message) is the cut in the middle of a long
message, saying how much is cut; the message's end follows it (a ``note`` op rewrites the note and what
follows it: ``tail``); ``f`` is a line's fold level as 'foldexpr' gives it (``">1"`` starts a fold,
``"1"`` is inside one; none: no fold), also for the lines a ``diff`` expands to. An item with ``tight``
true follows the one before it without a blank line.
A batch of ops (`ops_for`, the Structs of `app/chat/ops.py`) is what one `chat.apply` call receives.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp_nvim.app.chat.line_breaks import LineBreaker, broken
from acp_nvim.app.chat.lines import Line, clip_line, reply_header, segments_line, text_lines
from acp_nvim.app.chat.ops import (
    AddOp,
    AppendOp,
    ChatOp,
    CommandView,
    ConfigView,
    ItemView,
    MetaOp,
    ModeView,
    NoteOp,
    ReplaceOp,
    TermExitOp,
    TermOutputOp,
    TermStatus,
)
from acp_nvim.app.chat.plan_view import plan_view
from acp_nvim.app.chat.subagent_view import subagent_lines
from acp_nvim.app.chat.tool_call_view import MAX_TOOL_TEXT_CHARS, shell_terminal_id, tool_call_view
from acp_nvim.client.session.config_options import config_value_name, config_value_words
from acp_nvim.client.session.message_cut import MessageCut
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.subagents import Subagent
from acp_nvim.client.session.transcript import (
    Changes,
    CommandsItem,
    CompactionItem,
    Item,
    MessageItem,
    NoticeItem,
    PlanItem,
    ToolCallItem,
    not_shown,
    rough_size,
)
from acp_nvim.protocol import schema as s

# Each message's `LineBreaker`, by item key: where its last line stands for the next append.
LineBreaks = dict[str, LineBreaker]

USER_HEADER = "▍ You"
THOUGHT_TITLE = "  Thinking"
# Text crossing to Neovim in one op, at most (characters): Lua applies an op in one go, and the chat's drain
# keeps to its budget per tick only between ops. A larger message travels as an add and appends.
SLICE_CHARS = 32 * 1024
# And lines in one op, at most: Neovim's cost of a change is per line too (its folds, 'foldexpr' on each),
# ~20 ms for the 8,000 lines of 32 KiB of quoted lines or table rows.
SLICE_LINES = 1000


def cut_note(cut: MessageCut) -> str:
    if cut.hidden == 0:
        return "… cut here as the message grows"
    return f"… {rough_size(cut.hidden)} cut here"


def note_line(item: MessageItem, cut: MessageCut) -> Line:
    line: Line = {"s": [[cut_note(cut), "AcpChatNotice"]], "note": cut.whole.path}
    if item.role == "thought":
        line["f"] = "1"
    return line


def shown_text(text: str) -> str:
    """What the chat shows of a message's text: without the blank lines it starts or ends with."""
    return text.strip("\n")


def appended_text(text: str, newlines_before: int, size_before: int) -> str:
    """What the chat adds to a message for `text` appended to it, `newlines_before` the newlines it ended
    with, `size_before` its size before (of its tail, after a cut): the newlines it held back, now that text
    follows them (nothing before the first text shown)."""
    kept = text.rstrip("\n")
    if not kept:
        return ""
    if newlines_before == size_before:
        return kept.lstrip("\n")
    return "\n" * newlines_before + kept


def _body_lines(item: MessageItem, text: str) -> list[Line]:
    if item.role == "thought":
        return [{"s": [[part, "AcpChatThought"]], "f": "1"} for part in text.split("\n")]
    return text_lines(text)


def message_view(
    item: MessageItem, agent_name: str, text: str, *, whole: bool = True, tail: str = ""
) -> list[Line]:
    """`text`: what the message shows (`shown_text`, `broken`), `tail` what it shows after its cut; not
    `whole`: a beginning of it, the rest follows as appends, and its cut after them."""
    role = item.role
    lines: list[Line] = []
    if role == "user":
        lines.append({"s": [[USER_HEADER, "AcpChatUser"]]})
    elif item.opens_reply:
        lines.append(reply_header(agent_name))
    if role == "thought":
        # A thought is a fold of its own, closed (chat.fold_thoughts): its title line stays in view.
        lines.append({"s": [[THOUGHT_TITLE, "AcpChatThoughtHeader"]], "f": ">1"})
    lines.extend(_body_lines(item, text))
    if item.cut is not None and whole:
        lines.append(note_line(item, item.cut))
        lines.extend(_body_lines(item, tail))
    return lines


def commands_view(item: CommandsItem) -> list[Line]:
    lines = [segments_line(("▍ Commands", "AcpChatCommands"))]
    for command in item.commands:
        hint = f" <{command.input.hint}>" if command.input is not None else ""
        lines.append(
            segments_line(
                ("  /" + command.name + hint, "AcpChatCommandName"), ("  " + command.description, "")
            )
        )
    return lines


def notice_view(item: NoticeItem) -> list[Line]:
    group = {"error": "AcpChatError", "warning": "AcpChatWarning"}.get(item.level, "AcpChatNotice")
    text = item.text
    if len(text) > MAX_TOOL_TEXT_CHARS:
        text = text[:MAX_TOOL_TEXT_CHARS] + " " + not_shown(len(text) - MAX_TOOL_TEXT_CHARS)
    return text_lines(text, indent="  ", group=group)


COMPACTION_TITLES = {
    "in_progress": "compacting context…",
    "completed": "context compacted",
    "failed": "context compaction failed",
    "cancelled": "context compaction cancelled",
}


def compaction_view(item: CompactionItem) -> list[Line]:
    """One line, the summary folded under it (closed, like a tool call's details)."""
    title = COMPACTION_TITLES.get(item.status, "context compaction: " + item.status.replace("_", " "))
    if item.error:
        title += ": " + item.error
    group = "AcpChatWarning" if item.status in ("failed", "cancelled") else "AcpChatNotice"
    line: Line = {"s": [["  ↻ " + clip_line(title), group]]}
    summary = item.summary.strip("\n")
    if not summary:
        return [line]
    if len(summary) > MAX_TOOL_TEXT_CHARS:
        summary = summary[:MAX_TOOL_TEXT_CHARS] + " " + not_shown(len(summary) - MAX_TOOL_TEXT_CHARS)
    line["f"] = ">1"
    folded: list[Line] = [{"s": [["    " + part, ""]], "f": "1"} for part in summary.split("\n")]
    return [line, *folded]


def item_view(
    item: Item,
    agent_name: str,
    session_id: str = "",
    breaks: LineBreaks | None = None,
    children: Sequence[Subagent] = (),
) -> ItemView:
    """`breaks` keeps a message's `LineBreaker` for the appends that follow; `children`: the subagents a tool
    call started, drawn under it."""
    kind: str
    lines: list[Line]
    if isinstance(item, MessageItem):
        text, breaker = broken(shown_text(item.text))
        tail = ""
        if item.cut is not None:
            tail, breaker = broken(shown_text(item.cut.tail_text))
        if breaks is not None:
            breaks[item.key] = breaker
        kind, lines = item.role, message_view(item, agent_name, text, tail=tail)
    elif isinstance(item, ToolCallItem):
        kind, lines = "tool_call", tool_call_view(item, session_id, agent_name)
        for child in children:
            lines.extend(subagent_lines(child, _child_item_lines))
        if item.after_tool_call:
            return ItemView(item.key, kind, lines, tight=True)
    elif isinstance(item, PlanItem):
        kind, lines = "plan", plan_view(item, agent_name)
    elif isinstance(item, CommandsItem):
        kind, lines = "commands", commands_view(item)
    elif isinstance(item, CompactionItem):
        kind, lines = "compaction", compaction_view(item)
    else:
        kind, lines = "notice", notice_view(item)
    return ItemView(item.key, kind, lines)


def _child_item_lines(item: Item, agent_name: str, session_id: str, children: list[Subagent]) -> list[Line]:
    return item_view(item, agent_name, session_id, children=children).lines


def _short_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def header_text(state: SessionState, agent_name: str) -> str:
    """One line above the chat (winbar): session title or agent, mode, context usage."""
    parts = [clip_line(state.title) if state.title else agent_name]
    if state.current_mode:
        parts.append(f"mode: {state.current_mode_name}")
    for option in state.config_options:
        if option.category == "model" and isinstance(option, s.SessionConfigOptionSelect):
            parts.append(f"model: {config_value_name(option)}")
    if state.usage is not None:
        usage = f"ctx {_short_count(state.usage.used)}/{_short_count(state.usage.size)}"
        if state.usage.cost_amount is not None:
            usage += f" {state.usage.cost_amount:.2f} {state.usage.cost_currency}"
        parts.append(usage)
    return " │ ".join(parts)


def config_view(option: s.SessionConfigOption) -> ConfigView:
    """Of an agent's config option, what Lua completes `:AcpConfig` with: its id and the words the host
    parses (`app/sessions/modes.py`), so Lua reshapes nothing."""
    return ConfigView(option.id, config_value_words(option))


def meta_op(state: SessionState, agent_name: str) -> MetaOp:
    commands = [
        CommandView(
            "/" + command.name, command.description, command.input.hint if command.input is not None else ""
        )
        for command in state.commands
    ]
    return MetaOp(
        header=header_text(state, agent_name),
        title=clip_line(state.title) if state.title else state.title,
        mode=state.current_mode,
        modes=[ModeView(mode.id, mode.name) for mode in state.offered_modes],
        commands=commands,
        config=[config_view(option) for option in state.config_options],
    )


def _breaker_before(message: MessageItem, appended: int, on_tail: bool) -> LineBreaker:
    """Where the message's last line stood before its last `appended` characters (a batch of ops built
    without the chat's breaks: the text shown so far is all that was not appended since)."""
    if on_tail and message.cut is not None:
        cut = message.cut
        return broken(shown_text(cut.tail_text[: cut.tail_size - appended]))[1]
    return broken(shown_text(message.text[: message.size - appended]))[1]


def _slice_end(text: str, start: int = 0) -> int:
    """Where the slice of `text` from `start` ends: after SLICE_CHARS, or after its SLICE_LINES-th line."""
    end = min(start + SLICE_CHARS, len(text))
    if text.count("\n", start, end) < SLICE_LINES:
        return end
    for _ in range(SLICE_LINES):
        start = text.index("\n", start) + 1
    return start


def _append_ops(key: str, text: str) -> list[ChatOp]:
    ops: list[ChatOp] = []
    start = 0
    while start < len(text):
        end = _slice_end(text, start)
        ops.append(AppendOp(key, text[start:end]))
        start = end
    return ops


def _note_ops(item: MessageItem, cut: MessageCut, breaks: LineBreaks) -> list[ChatOp]:
    """The note of the message's cut and its tail (drawn again whole), the tail in slices."""
    tail, breaks[item.key] = broken(shown_text(cut.tail_text))
    end = _slice_end(tail)
    note = NoteOp(item.key, cut_note(cut), tail[:end], cut.whole.path)
    return [note, *_append_ops(item.key, tail[end:])]


def _add_ops(state: SessionState, item: Item, agent_name: str, breaks: LineBreaks) -> list[ChatOp]:
    if not isinstance(item, MessageItem) or (
        item.size <= SLICE_CHARS and item.cut is None and _slice_end(item.text) == item.size
    ):
        children = state.children_under(item.key) if state.children else ()
        return [AddOp(item_view(item, agent_name, state.session_id, breaks, children))]
    # A long message: its beginning as the item, the rest in slices, its cut and tail last.
    text, breaks[item.key] = broken(shown_text(item.text))
    end = _slice_end(text)
    # The item's lines end where the first append goes on: a slice that ends with a newline leaves an empty
    # last line for it.
    lines = message_view(item, agent_name, text[:end], whole=False)
    ops: list[ChatOp] = [AddOp(ItemView(item.key, item.role, lines))]
    ops.extend(_append_ops(item.key, text[end:]))
    if item.cut is not None:
        ops.extend(_note_ops(item, item.cut, breaks))
    return ops


def ops_for(
    state: SessionState, changes: Changes, agent_name: str, breaks: LineBreaks | None = None
) -> list[ChatOp]:
    """The smallest batch that brings the chat from the previous flush to `state`. `breaks`: the chat's
    `LineBreaks`, kept from one flush to the next (without them each append finds its line's state again)."""
    item = state.item
    if breaks is None:
        breaks = {}
    ops: list[ChatOp] = []
    for key in changes.added:
        ops.extend(_add_ops(state, item(key), agent_name, breaks))
    for key in changes.replaced:
        children = state.children_under(key) if state.children else ()
        ops.append(ReplaceOp(item_view(item(key), agent_name, state.session_id, breaks, children)))
    noted = set(changes.noted)
    for key, pieces in changes.appended.items():
        message = item(key)
        text = "".join(pieces)
        if isinstance(message, MessageItem):
            cut = message.cut
            # After a cut that did not move in this batch, what is appended goes on its tail.
            on_tail = cut is not None and key not in noted
            if cut is not None and on_tail:
                before = cut.newlines_before(len(text), len(pieces)), cut.tail_size - len(text)
            else:
                before = message.newlines_before(len(text), len(pieces)), message.size - len(text)
            breaker = breaks.get(key) or _breaker_before(message, len(text), on_tail)
            breaks[key] = breaker
            text = breaker.feed(appended_text(text, *before))
        if not text:
            continue
        if len(text) <= SLICE_CHARS and _slice_end(text) == len(text):
            ops.append(AppendOp(key, text))
        else:
            ops.extend(_append_ops(key, text))
    for key in changes.noted:
        message = item(key)
        if isinstance(message, MessageItem) and message.cut is not None:
            ops.extend(_note_ops(message, message.cut, breaks))
    if changes.output or changes.exits:
        ops.extend(_shell_ops(state, changes))
    if changes.meta:
        ops.append(meta_op(state, agent_name))
    return ops


def _shell_ops(state: SessionState, changes: Changes) -> list[ChatOp]:
    """Output and exits of the commands the agent runs itself, for the chat terminals under them."""
    ops: list[ChatOp] = []
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
            ops.append(TermOutputOp(term, text[start : start + SLICE_CHARS], reset=reset and start == 0))
    for key, ended in changes.exits.items():
        tool_call = state.item(key)
        if isinstance(tool_call, ToolCallItem):
            term = shell_terminal_id(state.session_id, tool_call.tool_call_id)
            ops.append(TermExitOp(term, TermStatus(ended.exit_code, ended.signal)))
    return ops

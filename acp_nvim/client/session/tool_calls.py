"""The tool calls of a session's transcript: created, restated and updated from `session/update`s, cut short
by a cancel, marked while a permission request is open, the commands the agent runs itself followed
(`client/session/shell.py`), and the old ones folded to their summary line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import msgspec

from acp_nvim.client.session import shell
from acp_nvim.client.session.shell import OutputChange, ShellRun
from acp_nvim.client.session.transcript import ToolCallItem, Transcript, rough_size
from acp_nvim.protocol import schema as s

# The tool kinds the protocol names (`ToolKind`); an agent may send others.
TOOL_KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
# Statuses after which a tool call will not change by itself; anything else is cut short by a cancel.
FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})
CANCELLED = "cancelled"

# Tool calls that keep their details (content, locations, raw input and output) in memory and in the chat:
# the newest ones. An older one, once finished, is folded to its summary line: a turn of 100,000 tool calls
# cost Neovim ~2.5 KB and the host ~1 KB per call.
KEEP_TOOL_DETAILS = 100
# Every update brings its kind and status as new strings: a call keeps the one shared copy of a known one
# (two copies of "read" and "completed" were ~15% of what each of 20,000 folded calls kept).
_KNOWN_WORDS = {word: word for word in (*TOOL_KINDS, "pending", "in_progress", *FINISHED_STATUSES)}
# rawInput / rawOutput are not shown; kept up to this size (as JSON) for whoever needs them, else dropped.
MAX_KEPT_RAW_CHARS = 64 * 1024


class ToolCallTranscript(Transcript):
    """A transcript whose tool calls follow their updates (the session reducer builds on it)."""

    def __init__(self) -> None:
        super().__init__()
        self._tool_calls: dict[str, ToolCallItem] = {}
        # Tool calls with their details, oldest first; and older ones waiting to finish before they fold.
        self._detailed: deque[ToolCallItem] = deque()
        self._fold_when_finished: set[str] = set()

    def tool_call(self, tool_call_id: str) -> ToolCallItem | None:
        return self._tool_calls.get(tool_call_id)

    def cancel_unfinished(self) -> None:
        """Marks tool calls still pending or running as cancelled (a later update may still finish them)."""
        for item in self._tool_calls.values():
            if item.status not in FINISHED_STATUSES or item.awaiting_permission:
                item.status = CANCELLED
                item.awaiting_permission = False
                self._replace(item.key)
                if item.key in self._fold_when_finished:
                    self._fold_when_finished.discard(item.key)
                    self._fold(item)

    def set_awaiting_permission(self, tool_call: s.ToolCallUpdate, awaiting: bool) -> ToolCallItem:
        """A permission request is open (or answered) for this tool call; its fields update the item."""
        item = self.update_tool_call(tool_call)
        item.awaiting_permission = awaiting
        self._replace(item.key)
        return item

    def _tool_call(self, update: s.ToolCall) -> None:
        item = self._tool_calls.get(update.tool_call_id)
        if item is None:
            item = ToolCallItem(key=self._new_key(), tool_call_id=update.tool_call_id, title=update.title)
            self._tool_calls[update.tool_call_id] = item
            self._add(item)
            self._detailed.append(item)
        else:
            # A repeated tool_call is taken as a full restatement of it.
            item.title = update.title
            self._replace(item.key)
        item.kind = _shared(update.kind or "other")
        item.status = _shared(update.status or "pending")
        if not item.folded:
            item.content = tuple(update.content or ())
            item.locations = tuple(update.locations or ())
            item.raw_input = _bounded_raw(update.raw_input)
            item.raw_output = _bounded_raw(update.raw_output)
        self._follow_shell(item, update.meta, update.raw_input)
        self._fold_old_tool_calls(item)

    def update_tool_call(self, update: s.ToolCallUpdate) -> ToolCallItem:
        item = self._tool_calls.get(update.tool_call_id)
        if item is None:
            # Lenient: an update for a call we never saw creates it rather than being lost.
            item = ToolCallItem(
                key=self._new_key(),
                tool_call_id=update.tool_call_id,
                title=update.title or update.tool_call_id,
            )
            self._tool_calls[update.tool_call_id] = item
            self._add(item)
            self._detailed.append(item)
        elif not _only_output(item, update):
            # A command's output is drawn from `output` changes: resending it leaves the item as it is.
            self._replace(item.key)
        if update.title is not None:
            item.title = update.title
        if update.kind is not None:
            item.kind = _shared(update.kind)
        if update.status is not None:
            item.status = _shared(update.status)
        if not item.folded:
            # Collections are replaced, not merged (protocol rule).
            if update.content is not None:
                item.content = tuple(update.content)
            if update.locations is not None:
                item.locations = tuple(update.locations)
            if update.raw_input is not None:
                item.raw_input = _bounded_raw(update.raw_input)
            if update.raw_output is not None:
                item.raw_output = _bounded_raw(update.raw_output)
        self._follow_shell(item, update.meta, update.raw_input)
        self._fold_old_tool_calls(item)
        return item

    def _follow_shell(
        self, item: ToolCallItem, meta: dict[str, object] | None, raw_input: object = None
    ) -> None:
        """A command the agent runs itself: records what is new of its output and how it ended, and the
        command it now says it runs (`raw_input`: the update's, whole, even when too large to keep)."""
        if item.folded:
            return
        terminal_id, terminal_output, ended = shell.meta_terminal(meta)
        run = item.shell
        if terminal_id is None and run is not None:
            terminal_id = run.terminal_id
        if shell.embeds_acp_terminal(item.content, terminal_id):
            # It runs in one of our terminals (`terminal/*`), which shows it already.
            if run is not None:
                item.shell = None
                self._replace(item.key)
            return
        stated = shell.command_of(raw_input) if raw_input is not None else None
        if stated is not None:
            stated = stated[:MAX_KEPT_RAW_CHARS]
        if run is None:
            command = stated or shell.command_of(item.raw_input)
            # Whatever its kind: a "read" or "search" that runs a command (codex-acp's) shows the command.
            if terminal_id is None and command is None:
                return
            run = item.shell = ShellRun(command or item.title)
            self._replace(item.key)
        elif stated is not None and stated != run.command:
            # A later update (or the permission request) says another command: the chat shows that one.
            run.command = stated
            self._replace(item.key)
        if terminal_id is not None:
            run.terminal_id = terminal_id
        change: OutputChange | None = None
        if run.terminal_id is not None:
            change = run.terminal_output(terminal_output) if terminal_output is not None else None
        else:
            text = shell.output_of(item.content)
            change = run.whole_output(text) if text is not None else None
        if change is not None:
            pending = self._changes.output.get(item.key)
            if pending is None or change.reset:
                self._changes.output[item.key] = [change]
            else:
                pending.append(change)
        if ended is None and item.status in FINISHED_STATUSES:
            ended = shell.exit_of(item.raw_output)
        if ended is not None and ended != run.exit:
            run.exit = ended
            self._changes.exits[item.key] = ended

    def _fold_old_tool_calls(self, changed: ToolCallItem) -> None:
        """Folds the finished tool calls older than the newest KEEP_TOOL_DETAILS (`changed` may be one)."""
        detailed = self._detailed
        while len(detailed) > KEEP_TOOL_DETAILS:
            oldest = detailed.popleft()
            if self._finished(oldest):
                self._fold(oldest)
            else:
                self._fold_when_finished.add(oldest.key)
        if changed.key in self._fold_when_finished and self._finished(changed):
            self._fold_when_finished.discard(changed.key)
            self._fold(changed)

    @staticmethod
    def _finished(item: ToolCallItem) -> bool:
        return item.status in FINISHED_STATUSES and not item.awaiting_permission

    def _fold(self, item: ToolCallItem) -> None:
        item.folded = True
        item.content, item.locations = (), ()
        item.raw_input = item.raw_output = None
        self._replace(item.key)


def _only_output(item: ToolCallItem, update: s.ToolCallUpdate) -> bool:
    """Whether `update` of a command the agent runs changes nothing the chat shows of it but its output."""
    run = item.shell
    if run is None or item.folded or item.awaiting_permission:
        return False
    if update.title not in (None, item.title) or update.kind not in (None, item.kind):
        return False
    if update.status not in (None, item.status):
        return False
    if update.locations is not None and tuple(update.locations) != item.locations:
        return False
    if update.raw_input is not None and shell.command_of(update.raw_input) not in (None, run.command):
        return False
    if update.content is None:
        return True
    return _not_output(update.content, run) == _not_output(item.content, run)


def _not_output(content: Sequence[s.ToolCallContent], run: ShellRun) -> list[s.ToolCallContent]:
    return [
        block
        for block in content
        if not isinstance(block, s.ToolCallContentContent)
        and not (isinstance(block, s.ToolCallContentTerminal) and block.terminal_id == run.terminal_id)
    ]


def _shared(word: str) -> str:
    return _KNOWN_WORDS.get(word, word)


def _bounded_raw(value: object) -> object:
    """`value`, or a short note in its place when its JSON is larger than MAX_KEPT_RAW_CHARS."""
    if value is None or isinstance(value, bool | int | float):
        return value
    size = len(value) if isinstance(value, str) else len(msgspec.json.encode(value))
    if size <= MAX_KEPT_RAW_CHARS:
        return value
    return f"({rough_size(size)} not kept)"

"""The state of one ACP session as a user sees it, reduced from the `session/update` stream.

Neovim-free on purpose: the chat view renders from this state, and tests drive it with plain updates. The
transcript is an ordered list of items (messages, thoughts, tool calls, plans, notices); the reducer also
records *what changed* since the last `take_changes()`, so a renderer can push only that: a streamed chunk is
an append of its text (O(chunk)), a tool call update a replacement of that one item, never a full re-render.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from msgspec import UnsetType

from acp_nvim.client import shell
from acp_nvim.client.shell import ExitStatus, OutputChange, ShellRun
from acp_nvim.protocol import schema as s

MessageRole = Literal["user", "agent", "thought"]
MetaField = Literal["commands", "modes", "mode", "config", "title", "usage"]

# Statuses after which a tool call will not change by itself; anything else is cut short by a cancel.
FINISHED_STATUSES = frozenset({"completed", "failed", "cancelled"})
CANCELLED = "cancelled"

# What the chat shows of one streamed chunk and of one message (or thought), in characters; the rest is
# counted, not kept, and a note says how much. Pushing a 50 MiB chunk into Neovim froze it for seconds and
# cost it a gigabyte; no one reads that far in a chat. A cut chunk's note is part of the text, so what the
# agent sends next still follows it; past the message's limit only the note (kept up to date) is shown.
MAX_SHOWN_CHUNK_CHARS = 256 * 1024
MAX_SHOWN_MESSAGE_CHARS = 1024 * 1024
# Tool calls that keep their details (content, locations, raw input and output) in memory and in the chat:
# the newest ones. An older one, once finished, is folded to its summary line: a turn of 100,000 tool calls
# cost Neovim ~2.5 KB and the host ~1 KB per call.
KEEP_TOOL_DETAILS = 100
# rawInput / rawOutput are not shown; kept up to this size (as JSON) for whoever needs them, else dropped.
MAX_KEPT_RAW_CHARS = 64 * 1024


class MessageItem:
    """A message or thought. Its text arrives in many small chunks: they are kept as pieces and joined when
    the text is read, because growing one string with `+=` copies all of it every time (quadratic: 12 s of the
    host's time for 100,000 streamed words)."""

    __slots__ = ("_pieces", "hidden", "key", "local", "message_id", "role", "size")

    def __init__(
        self, key: str, role: MessageRole, message_id: str | None, text: str = "", local: bool = False
    ) -> None:
        self.key = key
        self.role: MessageRole = role
        self.message_id = message_id
        # A prompt the user typed here: never extended by the agent's chunks (an agent echoing the prompt
        # must not glue its text onto ours).
        self.local = local
        self._pieces = [text]
        self.size = len(text)
        # Characters the agent sent past MAX_SHOWN_MESSAGE_CHARS: counted for the chat's note, not kept.
        self.hidden = 0

    @property
    def text(self) -> str:
        if len(self._pieces) != 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0]

    @text.setter
    def text(self, value: str) -> None:
        self._pieces = [value]
        self.size = len(value)

    def append(self, text: str) -> None:
        self._pieces.append(text)
        self.size += len(text)

    def clip(self, text: str) -> str:
        """What of the chunk `text` this message shows (a local prompt shows all); the rest is counted."""
        if self.local:
            return text
        if self.hidden:
            self.hidden += len(text)
            return ""
        if len(text) > MAX_SHOWN_CHUNK_CHARS:
            text = f"{text[:MAX_SHOWN_CHUNK_CHARS]}\n{not_shown(len(text) - MAX_SHOWN_CHUNK_CHARS)}\n"
        room = MAX_SHOWN_MESSAGE_CHARS - self.size
        if len(text) > room:
            self.hidden = len(text) - room
            return text[:room]
        return text

    def __repr__(self) -> str:
        return (
            f"MessageItem(key={self.key!r}, role={self.role!r}, message_id={self.message_id!r}, "
            f"text={self.text!r}, local={self.local!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MessageItem):
            return NotImplemented
        return (self.key, self.role, self.message_id, self.text, self.local) == (
            other.key,
            other.role,
            other.message_id,
            other.text,
            other.local,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the Structs beside it


class ToolCallItem(msgspec.Struct):
    key: str
    tool_call_id: str
    title: str
    kind: str = "other"
    status: str = "pending"
    content: list[s.ToolCallContent] = msgspec.field(default_factory=list)
    locations: list[s.ToolCallLocation] = msgspec.field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    awaiting_permission: bool = False
    # A command the agent runs itself (kind `execute`, see client/shell.py): shown like a terminal.
    shell: ShellRun | None = None
    # Only its summary is kept (see KEEP_TOOL_DETAILS); updates still change its title and status.
    folded: bool = False


class PlanItem(msgspec.Struct):
    key: str
    entries: list[s.PlanEntry]


class CommandsItem(msgspec.Struct):
    key: str
    commands: list[s.AvailableCommand]


NoticeLevel = Literal["info", "warning", "error"]


class NoticeItem(msgspec.Struct):
    key: str
    text: str
    level: NoticeLevel = "info"


Item = MessageItem | ToolCallItem | PlanItem | CommandsItem | NoticeItem


class Changes(msgspec.Struct):
    """What changed since the previous `take_changes()`, in a form a renderer applies directly."""

    # Keys of items created, in transcript order; render them whole.
    added: list[str] = msgspec.field(default_factory=list)
    # Text appended to items that existed before (in arrival order per item).
    appended: dict[str, list[str]] = msgspec.field(default_factory=dict)
    # Items to re-render whole (not in `added`).
    replaced: list[str] = msgspec.field(default_factory=list)
    # Messages whose note of what is not shown changed (after their appends; not in `added`/`replaced`).
    noted: list[str] = msgspec.field(default_factory=list)
    meta: set[MetaField] = msgspec.field(default_factory=set)
    # Output of commands the agent runs itself (tool call key -> in order), and their exits.
    output: dict[str, list[OutputChange]] = msgspec.field(default_factory=dict)
    exits: dict[str, ExitStatus] = msgspec.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(
            self.added
            or self.appended
            or self.replaced
            or self.noted
            or self.meta
            or self.output
            or self.exits
        )


class Usage(msgspec.Struct):
    used: int
    size: int
    cost_amount: float | None = None
    cost_currency: str | None = None


def content_text(block: s.ContentBlock) -> str:
    """A content block as the markdown text shown in a message."""
    if isinstance(block, s.ContentBlockText):
        return block.text
    if isinstance(block, s.ContentBlockResourceLink):
        return f"[{block.title or block.name}]({block.uri})"
    if isinstance(block, s.ContentBlockResource):
        resource = block.resource
        if isinstance(resource, s.TextResourceContents):
            return f"\n[{resource.uri}]\n```\n{resource.text}\n```\n"
        return f"[{resource.uri}]"
    if isinstance(block, s.ContentBlockImage):
        return f"[image {block.mime_type}]"
    if isinstance(block, s.ContentBlockAudio):
        return f"[audio {block.mime_type}]"
    return ""


class SessionState:
    """Reduces `session/update`s (and the client's own events: prompts, turn ends) to a transcript."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.items: list[Item] = []
        self._by_key: dict[str, Item] = {}
        self._tool_calls: dict[str, ToolCallItem] = {}
        self._messages: dict[tuple[MessageRole, str], MessageItem] = {}
        self._plan: PlanItem | None = None
        # Tool calls with their details, oldest first; and older ones waiting to finish before they fold.
        self._detailed: deque[ToolCallItem] = deque()
        self._fold_when_finished: set[str] = set()
        self._commands_item: CommandsItem | None = None
        # The message the next chunk of its role continues. Items that are not part of the conversation
        # (commands, plan, notices of a mode or option change) may come between its chunks: an agent sends
        # those whenever they change, also in the middle of a sentence, and the sentence stays one message.
        self._streaming: MessageItem | None = None
        self._counter = 0
        self.commands: list[s.AvailableCommand] = []
        self.modes: list[s.SessionMode] = []
        self.current_mode: str | None = None
        self.config_options: list[s.SessionConfigOption] = []
        self.title: str | None = None
        self.updated_at: str | None = None
        self.usage: Usage | None = None
        self._changes = Changes()
        # Keys in `_changes.added` or `_changes.replaced`: those render whole, so appends to them are not
        # recorded. A set, because a replayed history adds thousands of items per frame and a list lookup per
        # chunk made that quadratic (1.5 s of 2 s for 10,000 replayed updates).
        self._whole: set[str] = set()

    # ---- reading ---------------------------------------------------------------------------------

    def item(self, key: str) -> Item:
        return self._by_key[key]

    def tool_call(self, tool_call_id: str) -> ToolCallItem | None:
        return self._tool_calls.get(tool_call_id)

    @property
    def current_mode_name(self) -> str | None:
        for mode in self.modes:
            if mode.id == self.current_mode:
                return mode.name
        return self.current_mode

    def only_output_pending(self) -> bool:
        """Whether all that changed since the last `take_changes()` is output of commands still running."""
        changes = self._changes
        return bool(changes.output) and not (
            changes.added
            or changes.appended
            or changes.replaced
            or changes.noted
            or changes.meta
            or changes.exits
        )

    def take_changes(self) -> Changes:
        changes, self._changes = self._changes, Changes()
        self._whole = set()
        return changes

    # ---- the update stream -----------------------------------------------------------------------

    def apply(self, update: s.SessionUpdate) -> None:
        if isinstance(update, s.SessionUpdateAgentMessageChunk):
            self._chunk("agent", update.content, update.message_id)
        elif isinstance(update, s.SessionUpdateAgentThoughtChunk):
            self._chunk("thought", update.content, update.message_id)
        elif isinstance(update, s.SessionUpdateUserMessageChunk):
            self._chunk("user", update.content, update.message_id)
        elif isinstance(update, s.SessionUpdateToolCall):
            self._tool_call(update)
        elif isinstance(update, s.SessionUpdateToolCallUpdate):
            self.update_tool_call(update)
        elif isinstance(update, s.SessionUpdatePlan):
            self._plan_update(update.entries)
        elif isinstance(update, s.SessionUpdateAvailableCommandsUpdate):
            self._commands_update(update.available_commands)
        elif isinstance(update, s.SessionUpdateCurrentModeUpdate):
            self.set_current_mode(update.current_mode_id)
        elif isinstance(update, s.SessionUpdateConfigOptionUpdate):
            self.set_config_options(update.config_options)
        elif isinstance(update, s.SessionUpdateSessionInfoUpdate):
            self._session_info(update)
        elif isinstance(update, s.SessionUpdateUsageUpdate):
            cost = update.cost
            self.usage = Usage(
                used=update.used,
                size=update.size,
                cost_amount=cost.amount if cost else None,
                cost_currency=cost.currency if cost else None,
            )
            self._changes.meta.add("usage")
        elif isinstance(update, s.SessionUpdateNotice):
            level: NoticeLevel = "warning" if update.severity == "warning" else "info"
            if update.severity == "error":
                level = "error"
            text = update.title + (f": {update.description}" if update.description else "")
            self.add_notice(text, level)
        # Other kinds (compaction, future ones) are not shown: skipped quietly.

    # ---- the client's own events -----------------------------------------------------------------

    def add_user_prompt(self, text: str) -> MessageItem:
        item = MessageItem(key=self._new_key(), role="user", message_id=None, text=text, local=True)
        self._add(item)
        return item

    def add_notice(self, text: str, level: NoticeLevel = "info") -> NoticeItem:
        item = NoticeItem(key=self._new_key(), text=text, level=level)
        self._add(item)
        return item

    def begin_turn(self) -> None:
        # Each turn shows its own plan; an update within the turn replaces it in place.
        self._plan = None

    def end_turn(self, stop_reason: str) -> None:
        self._streaming = None
        if stop_reason == CANCELLED:
            self.cancel_unfinished()
        if stop_reason != "end_turn":
            self.add_notice(f"Turn ended: {stop_reason.replace('_', ' ')}", "warning")

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

    def set_modes(self, modes: s.SessionModeState | None) -> None:
        if modes is None:
            return
        self.modes = list(modes.available_modes)
        self._changes.meta.add("modes")
        self.set_current_mode(modes.current_mode_id, announce=False)

    def set_current_mode(self, mode_id: str, *, announce: bool = True) -> None:
        if mode_id == self.current_mode:
            return
        self.current_mode = mode_id
        self._changes.meta.add("mode")
        if announce:
            self.add_notice(f"Mode: {self.current_mode_name}")

    def set_config_options(
        self, options: Sequence[s.SessionConfigOption] | None, *, announce: bool = True
    ) -> None:
        if options is None:
            return
        before = {option.id: _config_value(option) for option in self.config_options}
        self.config_options = list(options)
        self._changes.meta.add("config")
        if not announce:
            return
        for option in options:
            value = _config_value(option)
            if option.id in before and before[option.id] != value:
                self.add_notice(f"{option.name}: {_config_value_name(option)}")

    # ---- internals -------------------------------------------------------------------------------

    def _new_key(self) -> str:
        self._counter += 1
        return str(self._counter)

    def _add(self, item: Item) -> None:
        if isinstance(item, MessageItem):
            self._streaming = item
        elif isinstance(item, ToolCallItem):
            # A tool call is a step of the conversation: the text after it is a message of its own.
            self._streaming = None
        self.items.append(item)
        self._by_key[item.key] = item
        self._changes.added.append(item.key)
        self._whole.add(item.key)

    def _replace(self, key: str) -> None:
        if key in self._whole:
            return
        self._whole.add(key)
        self._changes.replaced.append(key)
        # A replacement renders the whole item: earlier appends are contained in it.
        self._changes.appended.pop(key, None)

    def _append(self, item: MessageItem, text: str) -> None:
        key = item.key
        # The streaming hot path: a chunk that `clip` would keep whole is not handed to it.
        if (
            item.hidden
            or len(text) > MAX_SHOWN_CHUNK_CHARS
            or item.size + len(text) > MAX_SHOWN_MESSAGE_CHARS
        ):
            hidden = item.hidden
            text = item.clip(text)
            if item.hidden != hidden and key not in self._whole and key not in self._changes.noted:
                self._changes.noted.append(key)
            if not text:
                return
        item.append(text)
        if key in self._whole:
            return
        appended = self._changes.appended.get(key)
        if appended is None:
            self._changes.appended[key] = [text]
        else:
            appended.append(text)

    def _chunk(self, role: MessageRole, block: s.ContentBlock, message_id: str | None) -> None:
        text = content_text(block)
        if message_id is not None:
            known = self._messages.get((role, message_id))
            if known is not None:
                self._append(known, text)
                return
        last = self._streaming
        if (
            last is not None
            and last.role == role
            and not last.local
            and (message_id is None or last.message_id is None or last.message_id == message_id)
        ):
            if last.message_id is None and message_id is not None:
                last.message_id = message_id
                self._messages[(role, message_id)] = last
            self._append(last, text)
            return
        item = MessageItem(key=self._new_key(), role=role, message_id=message_id)
        item.append(item.clip(text))
        if message_id is not None:
            self._messages[(role, message_id)] = item
        if role == "user":
            # A user message starts a turn (a replayed history has no prompts of ours): its plan is new.
            self.begin_turn()
        self._add(item)

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
        item.kind = update.kind or "other"
        item.status = update.status or "pending"
        if not item.folded:
            item.content = list(update.content or [])
            item.locations = list(update.locations or [])
            item.raw_input = _bounded_raw(update.raw_input)
            item.raw_output = _bounded_raw(update.raw_output)
        self._follow_shell(item, update.meta)
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
            item.kind = update.kind
        if update.status is not None:
            item.status = update.status
        if not item.folded:
            # Collections are replaced, not merged (protocol rule).
            if update.content is not None:
                item.content = list(update.content)
            if update.locations is not None:
                item.locations = list(update.locations)
            if update.raw_input is not None:
                item.raw_input = _bounded_raw(update.raw_input)
            if update.raw_output is not None:
                item.raw_output = _bounded_raw(update.raw_output)
        self._follow_shell(item, update.meta)
        self._fold_old_tool_calls(item)
        return item

    def _follow_shell(self, item: ToolCallItem, meta: dict[str, Any] | None) -> None:
        """A command the agent runs itself: records what is new of its output and how it ended."""
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
        if run is None:
            command = shell.command_of(item.raw_input)
            if terminal_id is None and (item.kind != "execute" or command is None):
                return
            run = item.shell = ShellRun(command or item.title)
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
        item.content, item.locations = [], []
        item.raw_input = item.raw_output = None
        self._replace(item.key)

    def _plan_update(self, entries: Sequence[s.PlanEntry]) -> None:
        if self._plan is None:
            self._plan = PlanItem(key=self._new_key(), entries=list(entries))
            self._add(self._plan)
        else:
            self._plan.entries = list(entries)
            self._replace(self._plan.key)

    def _commands_update(self, commands: Sequence[s.AvailableCommand]) -> None:
        self.commands = list(commands)
        self._changes.meta.add("commands")
        if self._commands_item is None:
            self._commands_item = CommandsItem(key=self._new_key(), commands=list(commands))
            self._add(self._commands_item)
        else:
            self._commands_item.commands = list(commands)
            self._replace(self._commands_item.key)

    def _session_info(self, update: s.SessionInfoUpdate) -> None:
        if not isinstance(update.title, UnsetType):
            self.title = update.title
            self._changes.meta.add("title")
        if not isinstance(update.updated_at, UnsetType):
            self.updated_at = update.updated_at


def _only_output(item: ToolCallItem, update: s.ToolCallUpdate) -> bool:
    """Whether `update` of a command the agent runs changes nothing the chat shows of it but its output."""
    run = item.shell
    if run is None or item.folded or item.awaiting_permission:
        return False
    if update.title not in (None, item.title) or update.kind not in (None, item.kind):
        return False
    if update.status not in (None, item.status):
        return False
    if update.locations is not None and list(update.locations) != item.locations:
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


def _bounded_raw(value: Any) -> Any:
    """`value`, or a short note in its place when its JSON is larger than MAX_KEPT_RAW_CHARS."""
    if value is None or isinstance(value, bool | int | float):
        return value
    size = len(value) if isinstance(value, str) else len(msgspec.json.encode(value))
    if size <= MAX_KEPT_RAW_CHARS:
        return value
    return f"({rough_size(size)} not kept)"


def not_shown(chars: int) -> str:
    return f"… {rough_size(chars)} more not shown"


def rough_size(chars: int) -> str:
    """A size for the user: KiB under a MiB, else MiB (characters of text, close to bytes)."""
    if chars >= 1 << 20:
        return f"{chars / (1 << 20):.1f} MiB"
    return f"{max(chars >> 10, 1)} KiB"


def _config_value(option: s.SessionConfigOption) -> str | bool:
    return option.current_value


def _config_value_name(option: s.SessionConfigOption) -> str:
    if isinstance(option, s.SessionConfigOptionBoolean):
        return "on" if option.current_value else "off"
    for choice in _select_choices(option):
        if choice.value == option.current_value:
            return choice.name
    return option.current_value


def _select_choices(option: s.SessionConfigOptionSelect) -> list[s.SessionConfigSelectOption]:
    choices: list[s.SessionConfigSelectOption] = []
    for entry in option.options:
        if isinstance(entry, s.SessionConfigSelectGroup):
            choices.extend(entry.options)
        else:
            choices.append(entry)
    return choices

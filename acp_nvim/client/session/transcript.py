"""The transcript of one ACP session: its items (messages, thoughts, tool calls, plans, notices, compactions)
and the record of *what changed* since the last `take_changes()`, so a renderer can push only that: a
streamed chunk is an append of its text (O(chunk)), a tool call update a replacement of that one item, never
a full re-render.

`Transcript` keeps the items and that record; the reducers built on it (`client/session/tool_calls.py`,
`client/session/state.py`) decide what each update does to them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from acp_nvim.client.session.message_cut import HEAD_CHARS, MessageCut, newlines_before
from acp_nvim.client.session.shell import ExitStatus, OutputChange, ShellRun
from acp_nvim.protocol import schema as s

MessageRole = Literal["user", "agent", "thought"]
MetaField = Literal["commands", "modes", "mode", "config", "title", "usage"]


class MessageItem:
    """A message or thought. Its text arrives in many small chunks: they are kept as pieces and joined when
    the text is read, because growing one string with `+=` copies all of it every time (quadratic: 12 s of the
    host's time for 100,000 streamed words)."""

    __slots__ = (
        "_pieces",
        "cut",
        "key",
        "local",
        "message_id",
        "opens_reply",
        "role",
        "size",
    )

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
        # Past HEAD_CHARS: what the chat shows after the cut, and the whole message
        # (client/session/message_cut.py).
        self.cut: MessageCut | None = None
        # It opens a reply of the agent (see Transcript._place).
        self.opens_reply = False

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

    @property
    def hidden(self) -> int:
        """Characters of the message the chat does not show (between its beginning and its tail)."""
        return 0 if self.cut is None else self.cut.hidden

    def newlines_before(self, chars: int, last_pieces: int = 0) -> int:
        """The newlines the text (its beginning shown) ended with before its last `chars` characters (see
        `message_cut.newlines_before`)."""
        return newlines_before(self._pieces, chars, last_pieces)

    def clip(self, text: str) -> tuple[str, str, bool]:
        """Where the chunk `text` goes: what of it goes on the message's beginning, what on its tail after the
        cut, and whether the cut moved (its note and tail are then drawn again, the tail holding the chunk). A
        prompt typed here shows all."""
        cut = self.cut
        if cut is not None:
            return "", text, cut.add(text)
        room = HEAD_CHARS - self.size
        if self.local or len(text) <= room:
            return text, "", False
        head = text[:room]
        self.cut = MessageCut(self.text + head)
        self.cut.add(text[room:])
        return head, "", True

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
    # Tuples: a folded call (most calls of a long turn) shares the one empty tuple, not two empty lists.
    content: tuple[s.ToolCallContent, ...] = ()
    locations: tuple[s.ToolCallLocation, ...] = ()
    raw_input: object = None
    raw_output: object = None
    awaiting_permission: bool = False
    # A permission rule answered its request (acp_nvim/app/permissions/service.py): which one, for the chat.
    auto_allowed: str | None = None
    # A command the agent runs itself (kind `execute`, see client/session/shell.py): shown like a terminal.
    shell: ShellRun | None = None
    # Only its summary is kept (see KEEP_TOOL_DETAILS); updates still change its title and status.
    folded: bool = False
    # A plan it asks the user to approve (app/permissions/plan_review.py): shown in full under it.
    plan: str = ""
    # Where it stands in the conversation (see Transcript._add).
    opens_reply: bool = False
    after_tool_call: bool = False


class PlanItem(msgspec.Struct):
    key: str
    entries: list[s.PlanEntry]
    opens_reply: bool = False
    # A plan the agent sent as markdown (or a file's link) instead of entries (unstable `plan_update`).
    text: str = ""
    # The agent removed it (unstable `plan_removed`): shown so, no longer updated.
    removed: bool = False


class CommandsItem(msgspec.Struct):
    key: str
    commands: list[s.AvailableCommand]


NoticeLevel = Literal["info", "warning", "error"]


class NoticeItem(msgspec.Struct):
    key: str
    text: str
    level: NoticeLevel = "info"


class CompactionItem(msgspec.Struct):
    """A compaction of the agent's context (`compaction_update`, `compaction_summary_chunk`): where the first
    update put it in the conversation, its status and summary as the later ones patch them."""

    key: str
    compaction_id: str
    status: str = "in_progress"
    summary: str = ""
    error: str | None = None


Item = MessageItem | ToolCallItem | PlanItem | CommandsItem | NoticeItem | CompactionItem


class Changes(msgspec.Struct):
    """What changed since the previous `take_changes()`, in a form a renderer applies directly."""

    # Keys of items created, in transcript order; render them whole.
    added: list[str] = msgspec.field(default_factory=list)
    # Text appended to items that existed before (in arrival order per item).
    appended: dict[str, list[str]] = msgspec.field(default_factory=dict)
    # Items to re-render whole (not in `added`).
    replaced: list[str] = msgspec.field(default_factory=list)
    # Messages whose cut moved: their note and tail are drawn again (after their appends; not in
    # `added`/`replaced`).
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


def not_shown(chars: int) -> str:
    return f"… {rough_size(chars)} more not shown"


def rough_size(chars: int) -> str:
    """A size for the user: KiB under a MiB, else MiB (characters of text, close to bytes)."""
    if chars >= 1 << 20:
        return f"{chars / (1 << 20):.1f} MiB"
    return f"{max(chars >> 10, 1)} KiB"


class Transcript:
    """The items in order, by key, and what changed since the last `take_changes()`."""

    def __init__(self) -> None:
        self.items: list[Item] = []
        self._by_key: dict[str, Item] = {}
        # The message the next chunk of its role continues. Items that are not part of the conversation
        # (commands, plan, notices of a mode or option change) may come between its chunks: an agent sends
        # those whenever they change, also in the middle of a sentence, and the sentence stays one message.
        self._streaming: MessageItem | None = None
        self._counter = 0
        # Who speaks in the chat's last block: a reply of the agent is one block under one header, whatever
        # messages, thoughts, tool calls and plan it holds (notices speak for no one).
        self._speaker: Literal["user", "agent", "commands"] | None = None
        self._changes = Changes()
        # Keys in `_changes.added` or `_changes.replaced`: those render whole, so appends to them are not
        # recorded. A set, because a replayed history adds thousands of items per frame and a list lookup per
        # chunk made that quadratic (1.5 s of 2 s for 10,000 replayed updates).
        self._whole: set[str] = set()

    def item(self, key: str) -> Item:
        return self._by_key[key]

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

    def _new_key(self) -> str:
        self._counter += 1
        return str(self._counter)

    def _add(self, item: Item) -> None:
        if isinstance(item, MessageItem):
            self._streaming = item
        elif isinstance(item, ToolCallItem):
            # A tool call is a step of the conversation: the text after it is a message of its own.
            self._streaming = None
            # A run of tool calls reads as one list.
            item.after_tool_call = bool(self.items) and isinstance(self.items[-1], ToolCallItem)
        elif isinstance(item, CompactionItem):
            # What the agent says after it, it says with its context compacted: not the message before.
            self._streaming = None
        self._place(item)
        self.items.append(item)
        self._by_key[item.key] = item
        self._changes.added.append(item.key)
        self._whole.add(item.key)

    def _place(self, item: Item) -> None:
        """Whether `item` opens a reply of the agent (the chat names the agent above it)."""
        if isinstance(item, NoticeItem | CompactionItem):
            return
        if isinstance(item, CommandsItem):
            self._speaker = "commands"
            return
        if isinstance(item, MessageItem) and item.role == "user":
            self._speaker = "user"
            return
        if self._speaker != "agent":
            item.opens_reply = True
            self._speaker = "agent"

    def _replace(self, key: str) -> None:
        if key in self._whole:
            return
        self._whole.add(key)
        self._changes.replaced.append(key)
        # A replacement renders the whole item: earlier appends are contained in it.
        self._changes.appended.pop(key, None)

"""The state of one ACP session as a user sees it, reduced from the `session/update` stream.

Neovim-free on purpose: the chat view renders from this state, and tests drive it with plain updates. The
transcript and its record of changes are `client/session/transcript.py`'s, the tool calls
`client/session/tool_calls.py`'s; here are the update stream's dispatch, the streamed messages (the hot path:
each chunk is handled here with no call more than it needs), plans, commands, modes, config options, title and
usage.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
from msgspec import UnsetType

from acp_nvim.client.session.config_options import (
    config_value,
    config_value_name,
    config_value_words,
    select_choice_names,
)
from acp_nvim.client.session.message_cut import HEAD_CHARS
from acp_nvim.client.session.text_run import TextRun
from acp_nvim.client.session.tool_calls import CANCELLED
from acp_nvim.client.session.transcript import (
    CommandsItem,
    CompactionItem,
    MessageItem,
    MessageRole,
    NoticeItem,
    NoticeLevel,
    PlanItem,
    Usage,
    content_text,
)
from acp_nvim.client.session.unstable_updates import UNSTABLE_UPDATES, UnstableTranscript
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u


class SessionState(UnstableTranscript):
    """Reduces `session/update`s (and the client's own events: prompts, turn ends) to a transcript."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self._messages: dict[tuple[MessageRole, str], MessageItem] = {}
        self._plan: PlanItem | None = None
        self._compactions: dict[str, CompactionItem] = {}
        self._commands_item: CommandsItem | None = None
        self.commands: list[s.AvailableCommand] = []
        self.modes: list[s.SessionMode] = []
        self._legacy_mode: str | None = None
        self.config_options: list[s.SessionConfigOption] = []
        self.title: str | None = None
        self.updated_at: str | None = None
        self.usage: Usage | None = None
        # The last turn's tokens (the unstable `PromptResponse.usage`), where the agent gave them.
        self.turn_usage: u.Usage | None = None

    @property
    def mode_option(self) -> s.SessionConfigOptionSelect | None:
        """The config option that is the session's mode (category "mode"), when the agent offers one: the
        protocol asks clients to prefer it to the legacy modes."""
        for option in self.config_options:
            if isinstance(option, s.SessionConfigOptionSelect) and option.category == "mode":
                return option
        return None

    @property
    def offered_modes(self) -> list[s.SessionMode]:
        """The modes `:AcpMode` offers: the mode option's choices (a grouped one "Group / Name"), else the
        legacy modes."""
        option = self.mode_option
        if option is None:
            return self.modes
        return [
            s.SessionMode(id=value, name=name, description=description)
            for value, name, description in select_choice_names(option)
        ]

    @property
    def current_mode(self) -> str | None:
        option = self.mode_option
        return option.current_value if option is not None else self._legacy_mode

    @property
    def current_mode_name(self) -> str | None:
        option = self.mode_option
        if option is not None:
            return config_value_name(option)
        for mode in self.modes:
            if mode.id == self._legacy_mode:
                return mode.name
        return self._legacy_mode

    def apply(self, update: u.SessionUpdate) -> None:
        """One update (the unstable schema's kinds included: those it does not show are skipped)."""
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
        elif isinstance(update, s.SessionUpdateCompactionUpdate):
            self._compaction_update(update)
        elif isinstance(update, s.SessionUpdateCompactionSummaryChunk):
            item = self._compaction(update.compaction_id)
            item.summary += content_text(update.content)
            self._replace(item.key)
        elif isinstance(update, UNSTABLE_UPDATES):
            self.apply_unstable(update)
        # Other kinds (future ones) are not shown: skipped quietly.

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
            self.children_cancelled()
        if stop_reason != "end_turn":
            self.add_notice(f"Turn ended: {stop_reason.replace('_', ' ')}", "warning")

    def set_modes(self, modes: s.SessionModeState | None) -> None:
        if modes is None:
            return
        self.modes = list(modes.available_modes)
        self._changes.meta.add("modes")
        self.set_current_mode(modes.current_mode_id, announce=False)

    def set_current_mode(self, mode_id: str, *, announce: bool = True) -> None:
        """The legacy mode (`current_mode_update`, `session/set_mode`). An agent that offers the mode as a
        config option too reports the change both ways: the option follows here, so whichever comes second
        says nothing."""
        option = self.mode_option
        follows = (
            option is not None and option.current_value != mode_id and mode_id in config_value_words(option)
        )
        if mode_id == self._legacy_mode and not follows:
            return
        self._legacy_mode = mode_id
        self._changes.meta.add("mode")
        if option is not None and follows:
            changed = msgspec.structs.replace(option, current_value=mode_id)
            self.config_options = [changed if other is option else other for other in self.config_options]
            self._changes.meta.add("config")
        if announce:
            self.add_notice(f"Mode: {self.current_mode_name}")

    def set_config_options(
        self, options: Sequence[s.SessionConfigOption] | None, *, announce: bool = True
    ) -> None:
        if options is None:
            return
        before = {option.id: config_value(option) for option in self.config_options}
        self.config_options = list(options)
        self._changes.meta.add("config")
        mode = self.mode_option
        if mode is not None and mode.current_value != self._legacy_mode:
            # The legacy mode follows the option (quietly: the option's own line below says the change).
            if any(legacy.id == mode.current_value for legacy in self.modes):
                self._legacy_mode = mode.current_value
            self._changes.meta.add("mode")
        if not announce:
            return
        for option in options:
            value = config_value(option)
            if option.id in before and before[option.id] != value:
                self.add_notice(f"{option.name}: {config_value_name(option)}")

    def apply_chunks(self, chunks: Sequence[ChunkUpdate | TextRun]) -> None:
        """Consecutive message chunks, in order (the stream's bulk, read together): the run of them that
        goes on with the message being streamed is appended to it in one piece; what starts or switches a
        message, or needs clipping, takes `apply`'s path chunk by chunk. The same transcript as `apply` of
        each in turn (a `TextRun`'s texts: its chunks, plain text without a message id)."""
        run: list[str] = []
        streaming = self._continued()
        for update in chunks:
            if isinstance(update, TextRun):
                if streaming is not None and _ROLE_OF[update.kind] == streaming.role:
                    run.extend(update.texts)
                    continue
                # Its first chunk starts or switches a message: chunk by chunk, as they would have come.
                if streaming is not None and run:
                    self._append_run(streaming, run)
                    run = []
                self.apply_chunks([notification.update for notification in update.notifications()])  # type: ignore[misc]
                streaming = self._continued()
                continue
            block = update.content
            message_id = update.message_id
            if (
                streaming is not None
                and _ROLE_OF[type(update)] == streaming.role
                and type(block) is s.ContentBlockText
                and (message_id is None or message_id == streaming.message_id)
            ):
                run.append(block.text)
                continue
            if streaming is not None and run:
                self._append_run(streaming, run)
                run = []
            self.apply(update)
            streaming = self._continued()
        if streaming is not None and run:
            self._append_run(streaming, run)

    def _continued(self) -> MessageItem | None:
        """The message the agent's next chunks of its role go on with (never a prompt typed here)."""
        last = self._streaming
        return None if last is None or last.local else last

    def _append_run(self, item: MessageItem, texts: list[str]) -> None:
        if item.cut is not None or item.size + sum(map(len, texts)) > HEAD_CHARS:
            # At the message's cut: clipped where chunk by chunk would clip it.
            cut = item.cut
            if cut is not None:
                cut.whole.hold()
            try:
                for text in texts:
                    self._append(item, text)
            finally:
                if cut is not None:
                    cut.whole.release()
            return
        self._record_append(item, texts[0] if len(texts) == 1 else "".join(texts))

    def _append(self, item: MessageItem, text: str) -> None:
        # The streaming hot path: a chunk that `clip` would keep whole is not handed to it.
        if item.cut is not None or item.size + len(text) > HEAD_CHARS:
            head, tail, moved = item.clip(text)
            if head:
                self._record_append(item, head)
            key = item.key
            if key in self._whole:
                return
            noted = self._changes.noted
            if moved:
                if key not in noted:
                    noted.append(key)
            elif tail and key not in noted:
                # On the tail, drawn after the note: not part of the beginning's pieces.
                self._changes.appended.setdefault(key, []).append(tail)
            return
        self._record_append(item, text)

    def _record_append(self, item: MessageItem, text: str) -> None:
        item.append(text)
        key = item.key
        if key in self._whole:
            return
        try:
            self._changes.appended[key].append(text)
        except KeyError:
            # Its first chunk of the frame: once per frame, where a lookup per chunk would cost every chunk.
            self._changes.appended[key] = [text]

    def _chunk(self, role: MessageRole, block: s.ContentBlock, message_id: str | None) -> None:
        # Text is nearly every chunk: its text without a call.
        text = block.text if type(block) is s.ContentBlockText else content_text(block)
        last = self._streaming
        if (
            last is not None
            and last.role == role
            and (message_id is None or message_id == last.message_id)
            and not last.local
        ):
            # The stream's bulk, tested first: the next chunk of the message being streamed (a message id of
            # its own is registered for it, so the lookup below would find this same message).
            self._append(last, text)
            return
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
        item.append(item.clip(text)[0])
        if message_id is not None:
            self._messages[(role, message_id)] = item
        if role == "user":
            # A user message starts a turn (a replayed history has no prompts of ours): its plan is new.
            self.begin_turn()
        self._add(item)

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

    def _compaction(self, compaction_id: str) -> CompactionItem:
        """The compaction of that id; the first update of an id puts it where the conversation is."""
        item = self._compactions.get(compaction_id)
        if item is None:
            item = CompactionItem(key=self._new_key(), compaction_id=compaction_id)
            self._compactions[compaction_id] = item
            self._add(item)
        return item

    def _compaction_update(self, update: s.CompactionUpdate) -> None:
        item = self._compaction(update.compaction_id)
        item.status = update.status
        if update.summary is not None:
            item.summary = "".join(content_text(block) for block in update.summary)
        if update.error is not None:
            item.error = update.error
        self._replace(item.key)

    def _session_info(self, update: s.SessionInfoUpdate) -> None:
        if not isinstance(update.title, UnsetType):
            self.title = update.title
            self._changes.meta.add("title")
        if not isinstance(update.updated_at, UnsetType):
            self.updated_at = update.updated_at


ChunkUpdate = (
    s.SessionUpdateAgentMessageChunk | s.SessionUpdateAgentThoughtChunk | s.SessionUpdateUserMessageChunk
)
_ROLE_OF: dict[type[ChunkUpdate], MessageRole] = {
    s.SessionUpdateAgentMessageChunk: "agent",
    s.SessionUpdateAgentThoughtChunk: "thought",
    s.SessionUpdateUserMessageChunk: "user",
}

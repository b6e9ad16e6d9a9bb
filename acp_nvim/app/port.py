"""What the application layer needs of Neovim, declared once: `NeovimPort`.

The application decides; Neovim shows and asks. Everything here is a fact to show (a notification, the
status, a chat's transcript) or a question whose answer comes back (a picker, a login terminal, a permission).
`acp_nvim/nvim/port.py` implements it on the bridge; the unit tests implement it in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Protocol

import msgspec

from acp_nvim.app.review.note import NoteItem, NoteMark
from acp_nvim.app.views import Attention, ChatInfo, PermissionView, QueueView, Status
from acp_nvim.client.session.state import SessionState
from acp_nvim.jsonrpc.wire import JsonValue
from acp_nvim.protocol import schema as s

#: vim.log.levels, the severity of a notification.
ERROR, WARN, INFO = 4, 3, 2

#: How the application starts a background task: on the host's loop, whose task group owns it.
Spawn = Callable[[Callable[[], Coroutine[object, object, None]]], None]


class Choice(msgspec.Struct, frozen=True):
    """One item of a picker: `id` comes back when chosen, `label` is what the user reads."""

    id: str
    label: str


class CheckpointBuffers(msgspec.Struct, frozen=True):
    """The files of a restore whose loaded buffers Lua prepares (`before`) or shows restored (`after`)."""

    paths: list[str]


class QuickfixItem(msgspec.Struct, frozen=True):
    """A file a restore would change: `path` (the file now) is diffed against `theirs` (the checkpoint's
    version, None when the restore removes it); `filename` is the one the list opens."""

    filename: str
    lnum: int
    text: str
    path: str
    theirs: str | None


class CheckpointQuickfix(msgspec.Struct, frozen=True):
    """What a restore would change, as a quickfix list (`quickfix`)."""

    title: str
    items: list[QuickfixItem]


class ChatView(Protocol):
    """How a session's transcript reaches its chat: coalesced, so a stream costs one call per frame."""

    def changed(self) -> None:
        """The state changed: show it within a frame."""

    def shows_at_once(self) -> bool:
        """Whether the next `changed()` is shown at once (nothing was shown in the last frame, or the last
        was a caller's `flush`), not at a frame's end."""

    def flush(self) -> None:
        """Show what changed now (a turn's end, a notice)."""

    def discard(self) -> None:
        """Show nothing more of this transcript (the chat is about to be reset)."""


class NeovimPort(Protocol):
    def notify(self, message: str, level: int) -> None:
        """A one-line message to the user (the port names the plugin)."""

    def show_status(self, status: Status) -> None: ...

    def attention(self, fact: Attention) -> None:
        """A turn ended, a question waits, an agent failed (`app/attention.py`): Lua's `User` event and, as
        the user chose, a notification. After what was shown before it (the status, the chat)."""

    async def sent(self) -> None:
        """Returns once what was shown so far has left for Neovim (a chat's flush, a status)."""

    def chat_create(self, session_id: str, info: ChatInfo, *, reset: bool = False) -> None:
        """A chat for the session; `reset`: the chat it still has is emptied and reused."""

    def chat_destroy(self, session_id: str) -> None: ...

    def chat_open(self, session_id: str) -> None: ...

    def chat_view(self, state: SessionState, agent_name: str) -> ChatView: ...

    def prompt_refused(self, message: str, text: str, attachments: list[JsonValue]) -> None:
        """The prompt was not sent: its text and attachments (the tables Lua sent) go back to the user."""

    def show_queue(self, session_id: str, view: QueueView) -> None:
        """The chat's queued prompts, drawn under its last item (an empty view: none)."""

    def session_ended(self, session_id: str) -> None:
        """What the editor services hold for the session (its terminals, its sandbox) ends."""

    def review_marks(self, marks: list[NoteMark]) -> None:
        """The review's notes shown (or shown anew) as virtual text on their lines."""

    def review_drop(self, ids: list[int]) -> None:
        """The marks of these notes go."""

    def review_list(self, title: str, items: list[NoteItem]) -> None:
        """The review's notes in the quickfix list, opened."""

    def prompt_draft(self, session_id: str, text: str, attachments: list[JsonValue]) -> None:
        """A prompt made for the user (`:AcpReview send`): its text and attachments into the session's prompt
        window, shown and focused, for the user to edit and send."""

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        """The id picked, or None when the picker was dismissed."""

    async def ask_text(self, prompt: str, default: str) -> str | None:
        """Free text from the user (`vim.ui.input`), or None when dismissed."""

    async def run_login(self, title: str, argv: Sequence[str], env: dict[str, str]) -> int:
        """Runs a login command in a terminal; its exit code (-1 when it could not start)."""

    async def ask_permission(
        self, request: s.RequestPermissionRequest, view: PermissionView
    ) -> s.RequestPermissionOutcome: ...

    def cancel_permissions(self, session_id: str) -> None:
        """Every permission question of the session, open or queued, is answered `cancelled`."""

    async def checkpoint(self, action: str, payload: CheckpointBuffers | CheckpointQuickfix) -> object:
        """A restore's buffers (`before`: those with unsaved edits keep their file's text as the merge's base;
        `after`: the loaded ones show the restored files) or its diff (`quickfix`)."""

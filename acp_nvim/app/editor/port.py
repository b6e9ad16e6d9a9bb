"""The editor mechanisms the agent's requests run on, declared once: `EditorPort`, and the facts crossing it.

Facts in, facts out, no policy: read a buffer's slice (or report that no buffer holds the file), write through
a buffer, create / poll / wait for / kill a terminal, ask the user a question and return the answer. What an
agent may ask and which error it gets is decided by the services beside this module (`files.py`,
`terminals.py`, `sandbox.py`, `permission.py`, `elicitation.py`); `acp_nvim/nvim/editor.py` implements the
port on Neovim's Lua (`lua/acp_nvim/editor/`, `ui/`), the unit tests in memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import anyio
import msgspec

from acp_nvim.app.views import PermissionView


class EditorAnswerError(Exception):
    """The editor answered other than it declares (a bug on one side, never the agent's)."""


# ---- files (lua/acp_nvim/editor/fs/) -------------------------------------------------------------------


class FsReadOptions(msgspec.Struct, frozen=True, kw_only=True):
    """How `fs.read` reads: `max_bytes` of a buffer's text at most; `checked_path`: refuse a path that leads
    elsewhere than when checked ("path_changed"); the read becomes session `view`'s view (`fs/view.lua`)."""

    max_bytes: int
    checked_path: bool = True
    view: str | None = None


class FsReadAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.read`'s answer: a buffer's text, or `no_buffer` (the host reads the disk), or a fact."""

    ok: bool
    content: str | None = None
    from_buffer: bool = False
    no_buffer: bool = False
    fact: str | None = None
    detail: str | None = None
    size: int | None = None


class FsWriteOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.write` through the buffer, reviewed for `session_id`, merged over session `view`'s view."""

    session_id: str | None = None
    tool_call_id: str | None = None
    autocmds: bool = False
    checked_path: bool = True
    review: bool = True
    view: str | None = None


class FsWriteAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """`fs.write`'s answer: what the write did, or the fact that stopped it (`kind` of a non-regular file)."""

    ok: bool
    bufnr: int | None = None
    lines_touched: int = 0
    hunks: int = 0
    created: bool = False
    had_unsaved_edits: bool = False
    fact: str | None = None
    detail: str | None = None
    kind: str | None = None


# ---- terminals (lua/acp_nvim/editor/terminal.lua) -------------------------------------------------------


class TerminalEnvVar(msgspec.Struct, frozen=True):
    name: str
    value: str


class TerminalSpec(msgspec.Struct, frozen=True):
    """What `terminal.create` runs: env is merged over the editor's environment by jobstart."""

    command: str
    args: list[str]
    env: list[TerminalEnvVar]
    cwd: str
    output_byte_limit: int


class TerminalExit(msgspec.Struct, frozen=True, kw_only=True):
    exit_code: int | None = None
    signal: str | None = None


class TerminalCreated(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.create`'s answer: the terminal's id, or the fact that it did not start."""

    ok: bool
    terminal_id: str | None = None
    bufnr: int | None = None
    pid: int | None = None
    fact: str | None = None
    detail: str | None = None


class TerminalOutput(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.output`'s answer: the bytes from `from_` to `total` of the whole stream (Lua keeps at most
    `limit` bytes), as a string with the non-UTF-8 bytes surrogate-escaped by pynvim."""

    ok: bool
    output: str = ""
    exit_status: TerminalExit | None = None
    from_: int = msgspec.field(default=0, name="from")
    total: int = 0
    limit: int = 0
    fact: str | None = None


class TerminalWait(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.wait_for_exit`'s answer: the exit status, or `pending` (it comes through `acp_reply`)."""

    ok: bool
    exit_status: TerminalExit | None = None
    pending: bool = False
    fact: str | None = None


class TerminalDone(msgspec.Struct, frozen=True, kw_only=True):
    """`terminal.kill`'s and `terminal.release`'s answer."""

    ok: bool
    fact: str | None = None


# ---- questions to the user (lua/acp_nvim/ui/sandbox.lua, permission.lua, elicitation.lua) ---------------


class SandboxQuestion(msgspec.Struct, frozen=True, kw_only=True):
    """May the agent `action` the path it wrote (`path`), which really is `real`, outside the project?"""

    path: str
    real: str
    action: str
    session_id: str


class ElicitationAnswer(msgspec.Struct, frozen=True, kw_only=True):
    """What the user did with a form or a URL: "accept", "decline" or "cancel", and the form's values."""

    action: str = "cancel"
    content: object = None


class EditorPort(Protocol):
    """The mechanisms; every method reports facts and decides nothing."""

    @property
    def pickers(self) -> anyio.Lock:
        """The one queue of pickers: held while a question is open, whoever asks (pickers do not stack)."""

    def notify(self, message: str, level: int) -> None: ...

    async def read_buffer(
        self, path: str, line: int | None, limit: int | None, options: FsReadOptions
    ) -> FsReadAnswer:
        """The slice of the buffer holding `path`, or `no_buffer`, or the fact that stopped the read."""

    async def write_buffer(self, path: str, content: str, options: FsWriteOptions) -> FsWriteAnswer:
        """`content` written through the buffer of `path` (loaded if need be) and saved atomically."""

    async def find_buffer(self, path: str) -> int | None:
        """The buffer holding `path`, if one does."""

    def file_written(self, path: str) -> None:
        """The host wrote `path` itself: what shows it refreshes."""

    def forget_views(self, session_id: str) -> None:
        """The texts the session saw of its files go."""

    def show_where(self, path: str, line: int | None, bufnr: int | None) -> None:
        """Follow the agent: show `path` (at `line`, or in `bufnr`)."""

    async def terminal_create(self, spec: TerminalSpec) -> TerminalCreated: ...

    async def terminal_output(self, terminal_id: str, known_total: int) -> TerminalOutput:
        """The stream's bytes after the `known_total` already taken (when still kept)."""

    async def terminal_wait(self, terminal_id: str) -> TerminalWait:
        """Returns when the command has ended, with its exit status (never `pending`)."""

    async def terminal_kill(self, terminal_id: str) -> TerminalDone: ...

    async def terminal_release(self, terminal_id: str) -> TerminalDone: ...

    def terminal_kill_many(self, terminal_ids: Sequence[str]) -> None: ...

    async def ask_sandbox(self, question: SandboxQuestion) -> str | None:
        """ "once", "always", "noui" (nobody can answer) or anything else for no; hold `pickers` around it."""

    async def ask_permission(self, view: PermissionView) -> str | None:
        """The option id picked, or None when dismissed; cancelling the call closes nothing (a late pick is
        dropped). Hold `pickers` around it."""

    async def ask_elicitation(self, view: dict[str, object]) -> ElicitationAnswer:
        """The user's action on a form or a URL; cancelling the call closes the picker. Hold `pickers`."""

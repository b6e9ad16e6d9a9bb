"""`fs/read_text_file` and `fs/write_text_file` through the editor's buffers (the port's `read_buffer`,
`write_buffer`: `lua/acp_nvim/editor/fs/init.lua` in Neovim).

Each request is: the sandbox check (`sandbox.py`), which resolves the agent's path once, then one call of the
port with that real path (never the agent's spelling, which Lua would read otherwise). What the request may
ask and which error the agent gets is decided here and in `fs_rules.py`; the editor answers with facts
(`port.FsReadAnswer`, `FsWriteAnswer`). Writes are recorded for review per session; a write
that follows an allowed permission request showing a diff for that path is linked to that tool call. With
`follow = true` the editor then shows where the agent is reading or writing.

Who does the I/O: Lua reads and writes buffers (a write is saved atomically by temp file and rename in
`fs/save.lua`: a failed one leaves the file, the buffer and the user's unsaved text as they were). The host
reads and writes the files no buffer holds (`client/files/disk.py`): a read of such a file never passes its
text through Neovim, and neither does a write larger than `fs.max_buffer_bytes` (or to a file larger than
that), which would hold the editor longer than a frame; it is as atomic as the buffer path.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio.to_thread

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.editor import fs_rules
from acp_nvim.app.editor.port import (
    EditorAnswerError,
    EditorPort,
    FsReadAnswer,
    FsReadOptions,
    FsWriteAnswer,
    FsWriteOptions,
)
from acp_nvim.app.editor.sandbox import SessionSandboxes
from acp_nvim.app.editor.sandbox_rules import PathRefused, resolve
from acp_nvim.app.permissions.rules import ALLOW_KINDS
from acp_nvim.app.port import WARN
from acp_nvim.client.agent.quirks import missing_file_reads_empty
from acp_nvim.client.files.disk import (
    NotRegular,
    PathChanged,
    ReadRefused,
    read_text,
    slice_lines,
    write_atomically,
)
from acp_nvim.jsonrpc import INTERNAL_ERROR, RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND

log = logging.getLogger("acp_nvim.files")


# The merge base of an agent's write is the text its session last saw of the file: its last whole read after
# its last write (a slice read counts for the lines it showed), else that write's text, else the disk. Lua
# keeps those texts (`editor/fs/view.lua`, a few dozen per session); they go when the session ends.


_T = TypeVar("_T")
# How the host runs its blocking disk I/O: in a worker thread, off the anyio loop.
Offload = Callable[..., Awaitable[_T]]


async def read_file(
    editor: EditorPort,
    path: str,
    line: int | None,
    limit: int | None,
    max_bytes: int,
    *,
    checked: bool = True,
    offload: Offload[str] = anyio.to_thread.run_sync,
    view: str | None = None,
) -> FsReadAnswer:
    """The agent's read of `path` (the real path the sandbox checked): a buffer's text from the editor, else
    the file's from disk by the host. Raises the agent's error otherwise. A buffer's text read for `view` (a
    session) becomes that session's view of the file: the base its next write of it derives from."""
    path = fs_rules.checked_path(path)
    fs_rules.check_slice(line, limit)
    try:
        answer = await editor.read_buffer(
            path,
            line,
            limit,
            FsReadOptions(max_bytes=max_bytes, checked_path=checked, view=view),
        )
    except EditorAnswerError as err:
        raise RpcError(INTERNAL_ERROR, f"fs/read_text_file: {err}") from None
    if not answer.ok:
        raise fs_rules.read_refusal(path, answer.fact, answer.detail, answer.size, max_bytes)
    if answer.no_buffer:
        try:
            text = await offload(read_text, path, max_bytes)
        except ReadRefused as err:
            raise RpcError(err.code, err.message, {"uri": fs_rules.uri_of(path)}) from None
        return FsReadAnswer(ok=True, content=slice_lines(text, line, limit))
    content = fs_rules.buffer_text(path, answer.content)
    return FsReadAnswer(ok=True, content=content, from_buffer=True)


def _size_on_disk(path: str) -> int:
    """The size of the regular file at `path` (0 for anything else: Lua refuses those without opening)."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


async def write_file(
    editor: EditorPort,
    path: str,
    content: str,
    options: FsWriteOptions,
    max_buffer_bytes: int,
    *,
    offload: Offload[bool] = anyio.to_thread.run_sync,
) -> FsWriteAnswer:
    """The agent's write of `path` (the real path the sandbox checked): through its buffer by the editor, or
    to disk by the host when no buffer holds it and either text is too large for one. Raises the agent's
    error."""
    path = fs_rules.checked_path(path)
    data = fs_rules.content_bytes(path, content)
    large = len(data) > max_buffer_bytes or _size_on_disk(path) > max_buffer_bytes
    if large and await editor.find_buffer(path) is None:
        # Loading it would hold Neovim for as long as the read and the line split take, and keep its text.
        existed = await _write_to_disk(path, data, offload)
        editor.file_written(path)
        return FsWriteAnswer(ok=True, created=not existed)
    try:
        answer = await editor.write_buffer(path, content, options)
    except EditorAnswerError as err:
        raise RpcError(INTERNAL_ERROR, f"fs/write_text_file: {err}") from None
    if answer.ok:
        return answer
    if answer.fact == fs_rules.CHANGED_ON_DISK:
        # The user must hear of it too: the buffer stays as it is until they reload or save it.
        editor.notify("acp: " + fs_rules.changed_on_disk_message(path, answer.detail), WARN)
    raise fs_rules.write_refusal(path, answer.fact, answer.detail, answer.kind)


async def _write_to_disk(path: str, data: bytes, offload: Offload[bool]) -> bool:
    """The write of a file no buffer holds, by the host (not reviewable: the review lives in buffers)."""
    try:
        return bool(await offload(write_atomically, path, data))
    except (PathChanged, NotRegular, OSError) as err:
        raise fs_rules.disk_write_refusal(path, err) from None


AgentOf = Callable[[str], "s.Implementation | None"]


class FileService:
    def __init__(
        self,
        editor: EditorPort,
        sandboxes: SessionSandboxes,
        options: Callable[[], EditorOptions],
        agent_of: AgentOf = lambda session_id: None,
    ) -> None:
        # The agentInfo of the agent running a session: a few agents need a quirk (client/agent/quirks.py).
        self._agent_of = agent_of
        self._sandboxes = sandboxes
        self._editor = editor
        self._options = options
        # (session id, real path) -> tool call whose diff the user allowed, for the next write there.
        self._edits: dict[tuple[str, str], str] = {}
        # One `fs/*` request in Neovim at a time: each runs on its loop in one call (a write of a new file
        # ~4 ms), and 500 sent at once were queued ahead of every key and request that came after them (2 s
        # held); one at a time, what arrives meanwhile goes between them.
        self._in_neovim = anyio.Lock()

    async def read(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        real = await self._sandboxes.check(params.session_id, params.path, "read")
        try:
            content = await self._read_checked(real, params)
        except RpcError as err:
            agent = self._agent_of(params.session_id)
            if err.code != RESOURCE_NOT_FOUND or not missing_file_reads_empty(agent):
                raise
            content = ""
        return s.ReadTextFileResponse(content=content)

    async def _read_checked(self, real: str, params: s.ReadTextFileRequest) -> str:
        opts = self._options()
        # Lua gets the real path the sandbox checked and refuses it if a symlink appeared on it since.
        async with self._in_neovim:
            answer = await read_file(
                self._editor, real, params.line, params.limit, opts.max_read_bytes, view=params.session_id
            )
        if opts.follow:
            self._editor.show_where(real, params.line or 1, None)
        return answer.content or ""

    async def write(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        real = await self._sandboxes.check(params.session_id, params.path, "write")
        opts = self._options()
        tool_call_id = self._edits.pop((params.session_id, real), None)
        options = FsWriteOptions(
            session_id=params.session_id,
            tool_call_id=tool_call_id,
            autocmds=opts.autocmds,
            view=params.session_id,
        )
        async with self._in_neovim:
            answer = await write_file(self._editor, real, params.content, options, opts.max_buffer_bytes)
        if opts.follow:
            self._editor.show_where(real, None, answer.bufnr)
        return s.WriteTextFileResponse()

    def forget(self, session_id: str) -> None:
        """The session ended: the texts it saw go."""
        self._editor.forget_views(session_id)
        for key in [key for key in self._edits if key[0] == session_id]:
            del self._edits[key]

    def permission_answered(
        self, request: s.RequestPermissionRequest, outcome: s.RequestPermissionOutcome
    ) -> None:
        """Remember an allowed edit's tool call by path, so the write that follows is linked to it."""
        if not isinstance(outcome, s.RequestPermissionOutcomeSelected):
            return
        kinds = {option.option_id: option.kind for option in request.options}
        if kinds.get(outcome.option_id) not in ALLOW_KINDS:
            return
        call = request.tool_call
        paths = [c.path for c in call.content or [] if isinstance(c, s.ToolCallContentDiff)]
        if not paths and call.kind == "edit":
            paths = [loc.path for loc in call.locations or []]
        for path in paths:
            try:
                real = resolve(path)
            except PathRefused:
                continue  # its write will be refused too
            self._edits[(request.session_id, real)] = call.tool_call_id

"""`fs/read_text_file` and `fs/write_text_file` through Neovim's buffers (`lua/acp_nvim/editor/fs/init.lua`).

Each request is: the sandbox check here, which resolves the agent's path once, then one `exec_lua` into
`fs.read` / `fs.write` with that real path (never the agent's spelling, which Lua would read otherwise), whose
`{ok = false, code, message, data}` becomes the JSON-RPC error the agent gets. Writes are recorded for review
per session; a write that follows an allowed permission request showing a diff for that path is linked to
that tool call. With `follow = true` the editor then shows where the agent is reading or writing.
Writes are atomic on disk (temp file and rename, in `fs.write_buffer`): a failed one leaves the file, the
buffer and the user's unsaved text as they were, and its message is the agent's error. A write larger than
`fs.max_buffer_bytes` to a file no buffer holds never reaches Neovim: passing its text to Neovim alone would
hold the editor longer than a frame, so the host writes it to disk itself (`client/disk.py`), as atomically.
For the same reason a read of a file no buffer holds is answered by the host from disk (Lua says that no
buffer holds it): only buffers' text comes from Neovim.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread

from acp_nvim.client.disk import (
    NotRegular,
    PathChanged,
    ReadRefused,
    read_text,
    slice_lines,
    write_atomically,
)
from acp_nvim.client.editor import RESOURCE_NOT_FOUND
from acp_nvim.client.quirks import missing_file_reads_empty
from acp_nvim.client.sandbox import PathRefused, resolve
from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from acp_nvim.nvim import lua_api
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.options import EditorOptions
from acp_nvim.nvim.sandbox import SessionSandboxes
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.files")

READ = lua_api.FS_READ
# Answered through `acp_reply`: a large write without a buffer answers once it is on disk, Neovim going on.
WRITE = lua_api.FS_WRITE_FOR_HOST
FOLLOW = lua_api.FOLLOW_SHOW
FIND_BUFFER = lua_api.FS_FIND_BUFFER
FILE_WRITTEN = lua_api.FS_FILE_WRITTEN

ALLOW_KINDS = ("allow_once", "allow_always")


def unwrap(result: Any, what: str) -> dict[str, Any]:
    """A Lua answer `{ok = true, ...}` as a dict, or its `{ok = false, ...}` raised as the agent's error."""
    if not isinstance(result, dict):
        raise RpcError(INTERNAL_ERROR, f"{what}: unexpected answer from Neovim")
    if result.get("ok") is True:
        return result
    code = result.get("code")
    message = result.get("message")
    data = result.get("data")
    raise RpcError(
        code if isinstance(code, int) else INTERNAL_ERROR,
        message if isinstance(message, str) else f"{what} failed",
        data if isinstance(data, dict) else None,
    )


def clean_text(value: Any, path: str) -> str:
    """Text that is exactly valid UTF-8, or an error: never half-decoded content for the agent."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            pass
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            # pynvim decodes with surrogateescape: a surrogate means the bytes were not UTF-8.
            pass
    raise RpcError(INVALID_PARAMS, f"{path} is not valid UTF-8 text")


AgentOf = Callable[[str], "s.Implementation | None"]


class FileService:
    def __init__(
        self,
        bridge: Bridge,
        sandboxes: SessionSandboxes,
        options: Callable[[], EditorOptions],
        ui: Ui,
        agent_of: AgentOf = lambda session_id: None,
    ) -> None:
        self._bridge = bridge
        # The agentInfo of the agent running a session: a few agents need a quirk (client/quirks.py).
        self._agent_of = agent_of
        self._ui = ui
        self._sandboxes = sandboxes
        self._options = options
        # (session id, real path) -> tool call whose diff the user allowed, for the next write there.
        self._edits: dict[tuple[str, str], str] = {}

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
        # Lua validates line >= 1 and limit >= 0 (the generated types accept any int) and answers -32602.
        # Lua gets the real path the sandbox checked and refuses it if a symlink appeared on it since.
        result = unwrap(
            await self._bridge.lua_result(
                READ,
                real,
                params.line,
                params.limit,
                {"max_bytes": opts.max_read_bytes, "checked_path": True, "buffer_only": True},
            ),
            "fs/read_text_file",
        )
        if result.get("no_buffer"):
            content = await self._read_from_disk(real, params.line, params.limit, opts.max_read_bytes)
        else:
            content = clean_text(result.get("content"), real)
        if opts.follow:
            self._bridge.lua(FOLLOW, real, params.line or 1, None)
        return content

    async def write(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        real = await self._sandboxes.check(params.session_id, params.path, "write")
        opts = self._options()
        tool_call_id = self._edits.pop((params.session_id, real), None)
        if (
            len(params.content) > opts.max_buffer_bytes
            and await self._bridge.lua_result(FIND_BUFFER, real) is None
        ):
            await self._write_to_disk(real, params.content)
            if opts.follow:
                self._bridge.lua(FOLLOW, real, None, None)
            return s.WriteTextFileResponse()
        result = unwrap(
            await self._ui.ask(
                WRITE,
                real,
                params.content,
                {
                    "session_id": params.session_id,
                    "tool_call_id": tool_call_id,
                    "autocmds": opts.autocmds,
                    "checked_path": True,
                    "max_buffer_bytes": opts.max_buffer_bytes,
                },
            ),
            "fs/write_text_file",
        )
        if opts.follow:
            self._bridge.lua(FOLLOW, real, None, result.get("bufnr"))
        return s.WriteTextFileResponse()

    async def _read_from_disk(self, real: str, line: int | None, limit: int | None, max_bytes: int) -> str:
        """The read of a file no buffer holds, by the host: its text never passes through Neovim."""
        try:
            text = await anyio.to_thread.run_sync(read_text, real, max_bytes)
        except ReadRefused as err:
            raise RpcError(err.code, err.message, {"uri": Path(real).as_uri()}) from None
        return slice_lines(text, line, limit)

    async def _write_to_disk(self, real: str, content: str) -> None:
        """The write of a file no buffer holds, by the host (not reviewable: the review lives in buffers)."""
        uri = "file://" + real
        if "\0" in content:
            raise RpcError(INVALID_PARAMS, f"refusing to write binary content (NUL byte) to {real}")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise RpcError(INVALID_PARAMS, f"the content for {real} is not valid UTF-8 text") from None
        try:
            await anyio.to_thread.run_sync(write_atomically, real, data)
        except PathChanged as err:
            raise RpcError(INVALID_PARAMS, str(err), {"uri": uri, "reason": "path_changed"}) from None
        except NotRegular as err:
            raise RpcError(INVALID_PARAMS, str(err), {"uri": uri}) from None
        except OSError as err:
            raise RpcError(
                INTERNAL_ERROR, f"cannot write {real}: {err.strerror or err}", {"uri": uri}
            ) from None
        self._bridge.lua(FILE_WRITTEN, real)

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

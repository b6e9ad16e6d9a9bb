"""`fs/read_text_file` and `fs/write_text_file` through Neovim's buffers (`lua/acp_nvim/fs.lua`).

Each request is: the sandbox check here, which resolves the agent's path once, then one `exec_lua` into
`fs.read` / `fs.write` with that real path (never the agent's spelling, which Lua would read otherwise), whose
`{ok = false, code, message, data}` becomes the JSON-RPC error the agent gets. Writes are recorded for review
per session; a write that follows an allowed permission request showing a diff for that path is linked to
that tool call. With `follow = true` the editor then shows where the agent is reading or writing.
Writes are atomic on disk (temp file and rename, in `fs.write_buffer`): a failed one leaves the file, the
buffer and the user's unsaved text as they were, and its message is the agent's error.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from acp_nvim.client.sandbox import PathRefused, resolve
from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from acp_nvim.nvim import lua_api
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.guard import PathGuard
from acp_nvim.nvim.options import EditorOptions
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.files")

READ = lua_api.FS_READ
WRITE = lua_api.FS_WRITE
FOLLOW = lua_api.FOLLOW_SHOW

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


class FileService:
    def __init__(self, bridge: Bridge, guard: PathGuard, options: Callable[[], EditorOptions]) -> None:
        self._bridge = bridge
        self._guard = guard
        self._options = options
        # (session id, real path) -> tool call whose diff the user allowed, for the next write there.
        self._edits: dict[tuple[str, str], str] = {}

    async def read(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        real = await self._guard.check(params.session_id, params.path, "read")
        opts = self._options()
        # Lua validates line >= 1 and limit >= 0 (the generated types accept any int) and answers -32602.
        result = unwrap(
            await self._bridge.lua_result(
                READ, real, params.line, params.limit, {"max_bytes": opts.max_read_bytes}
            ),
            "fs/read_text_file",
        )
        content = clean_text(result.get("content"), real)
        if opts.follow:
            self._bridge.lua(FOLLOW, real, params.line or 1, None)
        return s.ReadTextFileResponse(content=content)

    async def write(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        real = await self._guard.check(params.session_id, params.path, "write")
        opts = self._options()
        tool_call_id = self._edits.pop((params.session_id, real), None)
        result = unwrap(
            await self._bridge.lua_result(
                WRITE,
                real,
                params.content,
                {
                    "session_id": params.session_id,
                    "tool_call_id": tool_call_id,
                    "autocmds": opts.autocmds,
                },
            ),
            "fs/write_text_file",
        )
        if opts.follow:
            self._bridge.lua(FOLLOW, real, None, result.get("bufnr"))
        return s.WriteTextFileResponse()

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

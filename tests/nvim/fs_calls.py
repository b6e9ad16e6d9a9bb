"""An agent's fs requests served as the host serves them, for tests that hand Neovim a path directly (without
the sandbox's check, or to race it): Lua's `fs.read` / `fs.write` carry them out and report facts, and
`app/editor/files.py`'s `read_file` / `write_file` (on the Neovim editor port) decide the answer, read the
disk for a file no buffer holds and write the large ones. The answers are the tables the tests assert on:
`{ok = True, ...}` or the agent's error as `{ok = False, code, message, data}`.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from acp_nvim.app.config.options import FsOptions
from acp_nvim.app.editor import files
from acp_nvim.app.editor.port import FsWriteOptions
from acp_nvim.jsonrpc import RpcError
from acp_nvim.nvim.editor import NvimEditorPort
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.ui import Ui

T = TypeVar("T")


class DirectBridge:
    """The bridge's calls made straight from the test's thread (pynvim's client of the test's Neovim)."""

    def __init__(self, nvim: Any) -> None:
        self._nvim = nvim

    def lua(self, code: str, *args: Any) -> None:
        self._nvim.exec_lua(code, *args)

    def lua_later(self, key: str, code: str, *args: Any) -> None:
        self._nvim.exec_lua(code, *args)

    async def lua_result(self, code: str, *args: Any) -> Any:
        return self._nvim.exec_lua(code, *args)


async def run_now(fn: Callable[..., Any], *args: Any) -> Any:
    """The disk I/O in the test's thread: pynvim runs its own asyncio loop here, so no other loop may."""
    return fn(*args)


def drive(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never really waits (every await above answers at once) to its end."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise AssertionError("the host's fs call waited on something")


def editor_port(nvim: Any) -> NvimEditorPort:
    bridge = DirectBridge(nvim)
    return NvimEditorPort(LuaApi(bridge), Ui(bridge.lua))


def fs_defaults(nvim: Any) -> dict[str, Any]:
    """The `fs` options a `setup()` without them gives (acp_nvim/app/config/options.py owns them)."""
    return dict(msgspec.to_builtins(FsOptions()))


def error_table(err: RpcError) -> dict[str, Any]:
    return {"ok": False, "code": err.code, "message": err.message, "data": err.data}


def read(
    nvim: Any,
    path: Path | str,
    line: int | None = None,
    limit: int | None = None,
    *,
    max_bytes: int | None = None,
    checked_path: bool = False,
) -> dict[str, Any]:
    editor = editor_port(nvim)
    if max_bytes is None:
        max_bytes = int(fs_defaults(nvim)["max_read_bytes"])
    try:
        answer = drive(
            files.read_file(editor, str(path), line, limit, max_bytes, checked=checked_path, offload=run_now)
        )
    except RpcError as err:
        return error_table(err)
    return {"ok": True, "content": answer.content, "from_buffer": answer.from_buffer}


def write(
    nvim: Any,
    path: Path | str,
    content: str,
    *,
    max_buffer_bytes: int | None = None,
    **opts: Any,
) -> dict[str, Any]:
    editor = editor_port(nvim)
    if max_buffer_bytes is None:
        max_buffer_bytes = int(fs_defaults(nvim)["max_buffer_bytes"])
    options = FsWriteOptions(**{"checked_path": False, **opts})
    try:
        answer = drive(
            files.write_file(editor, str(path), content, options, max_buffer_bytes, offload=run_now)
        )
    except RpcError as err:
        return error_table(err)
    table = msgspec.to_builtins(answer)
    return {k: v for k, v in table.items() if k not in ("fact", "detail", "kind")}

"""`terminal/*` in Neovim terminal jobs (`lua/acp_nvim/editor/terminal.lua`).

A command runs as a PTY job in its own process group, in the session's cwd unless the agent names one (which
then goes through the sandbox like any path). `wait_for_exit` costs no polling: Lua answers at once when the
command already ended, else answers through `acp_reply` (`ui.py`) when it does. Terminal ids belong to the
session that created them; any other id is "unknown terminal" for the agent. When the session ends (its chat
closed, its agent stopped, restarted or dead) the controller calls `end_session`: its commands are killed,
and another session's, of this agent or another one, keep running.
"""

from __future__ import annotations

import logging
from typing import Any

from acp_nvim.jsonrpc import RpcError
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.files import unwrap
from acp_nvim.nvim.lua_api import LuaApi, TerminalEnvVar, TerminalSpec
from acp_nvim.nvim.sandbox import SessionSandboxes
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.terminals")

NOT_FOUND = -32002


def output_bytes(value: Any) -> bytes:
    """The exact bytes of a Lua string: pynvim hands non-UTF-8 bytes over as surrogate escapes."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return b""


def keep_tail(buf: bytearray, limit: int) -> None:
    """Cut `buf` from the beginning to at most `limit` bytes, at a UTF-8 character boundary (as Lua does)."""
    cut = len(buf) - limit
    if cut <= 0:
        return
    while cut < len(buf) and 0x80 <= buf[cut] < 0xC0:
        cut += 1
    del buf[:cut]


class Tail:
    """What the agent last got from a terminal: the bytes and where they end in the whole stream."""

    __slots__ = ("buf", "total")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.total = 0


def exit_status(raw: Any) -> s.TerminalExitStatus:
    raw = raw if isinstance(raw, dict) else {}
    code, signal = raw.get("exit_code"), raw.get("signal")
    return s.TerminalExitStatus(
        exit_code=code if isinstance(code, int) else None,
        signal=signal if isinstance(signal, str) else None,
    )


class TerminalService:
    def __init__(self, bridge: Bridge, sandboxes: SessionSandboxes, ui: Ui) -> None:
        self._lua = LuaApi(bridge)
        self._sandboxes = sandboxes
        self._ui = ui
        # terminal id -> session id that created it (and has not released it).
        self._owner: dict[str, str] = {}
        # terminal id -> its output so far; Neovim is only asked for what came after.
        self._tails: dict[str, Tail] = {}

    def _check(self, session_id: str, terminal_id: str) -> None:
        if self._owner.get(terminal_id) != session_id:
            raise RpcError(NOT_FOUND, f"unknown terminal id: {terminal_id}", {"terminal_id": terminal_id})

    async def create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        roots = self._sandboxes.roots(params.session_id)
        cwd = params.cwd
        if cwd is None:
            cwd = roots[0]
        else:
            # The command starts in the real path checked, not in the agent's spelling of it.
            cwd = await self._sandboxes.check(params.session_id, cwd, "run a command in")
        spec = TerminalSpec(
            command=params.command,
            args=list(params.args or []),
            env=[TerminalEnvVar(name=e.name, value=e.value) for e in params.env or []],
            cwd=cwd,
            output_byte_limit=params.output_byte_limit,
        )
        result = unwrap(await self._lua.terminal_create(spec), "terminal/create")
        terminal_id = result.get("terminal_id")
        if not isinstance(terminal_id, str):
            raise RpcError(-32603, "terminal/create: Neovim returned no terminal id")
        self._owner[terminal_id] = params.session_id
        return s.CreateTerminalResponse(terminal_id=terminal_id)

    async def output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        self._check(params.session_id, params.terminal_id)
        tail = self._tails.setdefault(params.terminal_id, Tail())
        result = unwrap(await self._lua.terminal_output(params.terminal_id, tail.total), "terminal/output")
        if result["from"] != tail.total:
            # What came between was dropped by Neovim's own limit before this poll.
            tail.buf.clear()
        tail.buf += output_bytes(result.get("output"))
        keep_tail(tail.buf, result["limit"])
        tail.total = result["total"]
        raw_status = result.get("exit_status")
        return s.TerminalOutputResponse(
            # Bytes that are not UTF-8 (a program printing binary) become U+FFFD, not a failed answer.
            output=tail.buf.decode("utf-8", "replace"),
            # Anything of the stream not kept, by Neovim's limit or by this one, was cut from the beginning.
            truncated=tail.total > len(tail.buf),
            exit_status=exit_status(raw_status) if isinstance(raw_status, dict) else None,
        )

    async def wait_for_exit(self, params: s.WaitForTerminalExitRequest) -> s.WaitForTerminalExitResponse:
        self._check(params.session_id, params.terminal_id)
        with self._ui.slot() as slot:
            answer = await self._lua.terminal_wait_for_exit(params.terminal_id, slot.token)
            result = unwrap(answer, "terminal/wait_for_exit")
            raw = result.get("exit_status")
            if not isinstance(raw, dict):
                raw = await slot.wait()
        status = exit_status(raw)
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        unwrap(await self._lua.terminal_kill(params.terminal_id), "terminal/kill")
        return s.KillTerminalResponse()

    async def release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        unwrap(await self._lua.terminal_release(params.terminal_id), "terminal/release")
        self._owner.pop(params.terminal_id, None)
        self._tails.pop(params.terminal_id, None)
        return s.ReleaseTerminalResponse()

    def end_session(self, session_id: str) -> None:
        """The session ended: its commands are killed and its terminal ids forgotten."""
        ids = [terminal_id for terminal_id, owner in self._owner.items() if owner == session_id]
        if not ids:
            return
        for terminal_id in ids:
            del self._owner[terminal_id]
            self._tails.pop(terminal_id, None)
        log.info("session %s ended: killing its terminals %s", session_id, ids)
        self._lua.terminal_kill_many(ids)

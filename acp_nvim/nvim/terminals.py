"""`terminal/*` in Neovim terminal jobs (`lua/acp_nvim/editor/terminal.lua`).

A command runs as a PTY job in its own process group, in the session's cwd unless the agent names one (which
then goes through the sandbox like any path). `wait_for_exit` costs no polling: Lua answers at once when the
command already ended, else answers through `acp_reply` (`ui.py`) when it does. Terminal ids belong to the
session that created them; any other id is "unknown terminal" for the agent. When the session ends (its chat
closed, its agent stopped, restarted or dead) the controller calls `end_session`: its commands are killed,
and another session's, of this agent or another one, keep running.

What the agent may ask and what it gets is decided here: the spec is validated before Lua runs it, the output
limit is capped, Lua's facts ("unknown_terminal", "not_executable", "start_failed") become the agent's
errors, and the text of `terminal/output` is cut at a character boundary here (`Tail`): Lua keeps bytes.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.lua_values import (
    LuaAnswerError,
    TerminalDone,
    TerminalEnvVar,
    TerminalExit,
    TerminalOutput,
    TerminalSpec,
    from_lua,
)
from acp_nvim.nvim.sandbox import SessionSandboxes
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND

log = logging.getLogger("acp_nvim.terminals")

# Upper bound on the output kept per terminal, whatever limit the agent asks for (Neovim keeps as much).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def output_bytes(value: Any) -> bytes:
    """The exact bytes of a Lua string: pynvim hands non-UTF-8 bytes over as surrogate escapes."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    return b""


def keep_tail(buf: bytearray, limit: int, *, cut_before: bool = False) -> None:
    """Cut `buf` from the beginning to at most `limit` bytes, at a UTF-8 character boundary. With
    `cut_before`, the stream was already cut before `buf` starts (by Neovim's limit, which cuts bytes): a
    character it cut in two is dropped whole too."""
    cut = max(len(buf) - limit, 0)
    if cut == 0 and not cut_before:
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

    def take(self, answer: TerminalOutput) -> str:
        """Add what Neovim answered (the bytes from `answer.from_` on) and return the agent's text."""
        if answer.from_ != self.total:
            # What came between was dropped by Neovim's own limit before this poll.
            self.buf.clear()
        self.buf += output_bytes(answer.output)
        self.total = answer.total
        keep_tail(self.buf, answer.limit, cut_before=self.total > len(self.buf))
        # Bytes that are not UTF-8 (a program printing binary) become U+FFFD, not a failed answer.
        return self.buf.decode("utf-8", "replace")

    @property
    def truncated(self) -> bool:
        # Anything of the stream not kept, by Neovim's limit or by this one, was cut from the beginning.
        return self.total > len(self.buf)


def exit_status(raw: TerminalExit | None) -> s.TerminalExitStatus:
    raw = raw or TerminalExit()
    return s.TerminalExitStatus(exit_code=raw.exit_code, signal=raw.signal)


def check_spec(
    command: str, cwd: str | None, output_byte_limit: int | None, env_names: Sequence[str] = ()
) -> None:
    """What `terminal/create` may ask; the agent's -32602 otherwise (the cwd is the checked real path)."""
    if not command:
        raise RpcError(INVALID_PARAMS, "command must be a non-empty string")
    if cwd is not None and not cwd.startswith("/"):
        raise RpcError(INVALID_PARAMS, f"cwd must be an absolute path: {cwd}")
    if cwd is not None and not os.path.isdir(cwd):
        raise RpcError(INVALID_PARAMS, f"cwd is not a directory: {cwd}")
    if any(not name for name in env_names):
        raise RpcError(INVALID_PARAMS, "env entries must be { name = string, value = string }")
    if output_byte_limit is not None and output_byte_limit < 0:
        raise RpcError(INVALID_PARAMS, "output_byte_limit must be a non-negative integer")


def output_limit(requested: int | None) -> int:
    return MAX_OUTPUT_BYTES if requested is None else min(requested, MAX_OUTPUT_BYTES)


def terminal_refusal(
    fact: str | None, terminal_id: str | None, command: str | None, detail: str | None
) -> RpcError:
    """The agent's error for a fact `terminal.lua` reported."""
    if fact == "unknown_terminal":
        return RpcError(
            RESOURCE_NOT_FOUND, f"unknown terminal id: {terminal_id}", {"terminal_id": terminal_id}
        )
    if fact == "not_executable":
        return RpcError(INTERNAL_ERROR, f"cannot start {command}: not an executable")
    if fact == "start_failed":
        return RpcError(INTERNAL_ERROR, f"cannot start {command}: {detail}")
    return RpcError(INTERNAL_ERROR, f"terminal {terminal_id or command}: {detail or fact or 'no answer'}")


def _answer_error(what: str, err: LuaAnswerError) -> RpcError:
    return RpcError(INTERNAL_ERROR, f"{what}: {err}")


class TerminalService:
    def __init__(self, bridge: Bridge, sandboxes: SessionSandboxes, ui: Ui) -> None:
        self._lua = LuaApi(bridge)
        self._sandboxes = sandboxes
        self._ui = ui
        # terminal id -> session id that created it (and has not released it).
        self._owner: dict[str, str] = {}
        # terminal id -> its output so far; Neovim is only asked for what came after.
        self._tails: dict[str, Tail] = {}
        # One `terminal/create` in Neovim at a time: each is a jobstart of ~2-3 ms on Neovim's loop, and 200
        # sent at once were queued ahead of every key and request that came after them (0.5-0.7 s held);
        # one at a time, what arrives meanwhile goes between them.
        self._creating = anyio.Lock()

    def _check(self, session_id: str, terminal_id: str) -> None:
        if self._owner.get(terminal_id) != session_id:
            raise terminal_refusal("unknown_terminal", terminal_id, None, None)

    async def create(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        roots = self._sandboxes.roots(params.session_id)
        cwd = params.cwd
        if cwd is None:
            cwd = roots[0]
        else:
            # The command starts in the real path checked, not in the agent's spelling of it.
            cwd = await self._sandboxes.check(params.session_id, cwd, "run a command in")
        env_names = [e.name for e in params.env or []]
        check_spec(params.command, cwd, params.output_byte_limit, env_names)
        spec = TerminalSpec(
            command=params.command,
            args=list(params.args or []),
            env=[TerminalEnvVar(name=e.name, value=e.value) for e in params.env or []],
            cwd=cwd,
            output_byte_limit=output_limit(params.output_byte_limit),
        )
        try:
            async with self._creating:
                created = await self._lua.terminal_create(spec)
        except LuaAnswerError as err:
            raise _answer_error("terminal/create", err) from None
        if not created.ok:
            raise terminal_refusal(created.fact, None, params.command, created.detail)
        if created.terminal_id is None:
            raise RpcError(INTERNAL_ERROR, "terminal/create: Neovim returned no terminal id")
        self._owner[created.terminal_id] = params.session_id
        return s.CreateTerminalResponse(terminal_id=created.terminal_id)

    async def output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        self._check(params.session_id, params.terminal_id)
        tail = self._tails.setdefault(params.terminal_id, Tail())
        try:
            answer = await self._lua.terminal_output(params.terminal_id, tail.total)
        except LuaAnswerError as err:
            raise _answer_error("terminal/output", err) from None
        if not answer.ok:
            raise terminal_refusal(answer.fact, params.terminal_id, None, None)
        text = tail.take(answer)
        return s.TerminalOutputResponse(
            output=text,
            truncated=tail.truncated,
            exit_status=exit_status(answer.exit_status) if answer.exit_status is not None else None,
        )

    async def wait_for_exit(self, params: s.WaitForTerminalExitRequest) -> s.WaitForTerminalExitResponse:
        self._check(params.session_id, params.terminal_id)
        with self._ui.slot() as slot:
            try:
                answer = await self._lua.terminal_wait_for_exit(params.terminal_id, slot.token)
                if not answer.ok:
                    raise terminal_refusal(answer.fact, params.terminal_id, None, None)
                raw = answer.exit_status
                if raw is None:
                    raw = from_lua(await slot.wait(), TerminalExit)
            except LuaAnswerError as err:
                raise _answer_error("terminal/wait_for_exit", err) from None
        status = exit_status(raw)
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        await self._done("terminal/kill", self._lua.terminal_kill, params.terminal_id)
        return s.KillTerminalResponse()

    async def release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        await self._done("terminal/release", self._lua.terminal_release, params.terminal_id)
        self._owner.pop(params.terminal_id, None)
        self._tails.pop(params.terminal_id, None)
        return s.ReleaseTerminalResponse()

    async def _done(
        self, what: str, call: Callable[[str], Awaitable[TerminalDone]], terminal_id: str
    ) -> None:
        try:
            answer = await call(terminal_id)
        except LuaAnswerError as err:
            raise _answer_error(what, err) from None
        if not answer.ok:
            raise terminal_refusal(answer.fact, terminal_id, None, None)

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

"""What an agent's `terminal/*` request may ask and what it gets, decided here: the spec is validated before
the editor runs it, the output limit is capped, the editor's facts ("unknown_terminal", "not_executable",
"start_failed") become the agent's errors, and the text of `terminal/output` is cut at a character boundary
(`Tail`): the editor keeps bytes. Neovim-free; the service that applies these is `terminals.py`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from acp_nvim.app.editor.port import TerminalExit, TerminalOutput
from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND

# Upper bound on the output kept per terminal, whatever limit the agent asks for (Neovim keeps as much).
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def output_bytes(value: object) -> bytes:
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

"""`terminal/*` in the editor's terminal jobs (the port's `terminal_*`: `lua/acp_nvim/editor/terminal.lua`).

A command runs as a PTY job in its own process group, in the session's cwd unless the agent names one (which
then goes through the sandbox like any path). `wait_for_exit` costs no polling: the editor answers when the
command ends. Terminal ids belong to the session that created them; any other id is "unknown terminal" for the
agent. When the session ends (its chat closed, its agent stopped, restarted or dead) `end_session` is called:
its commands are killed, and another session's, of this agent or another one, keep running. What the agent
may ask and what it gets is decided by `terminal_rules.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio

from acp_nvim.app.editor.port import (
    EditorAnswerError,
    EditorPort,
    TerminalDone,
    TerminalEnvVar,
    TerminalSpec,
)
from acp_nvim.app.editor.sandbox import SessionSandboxes
from acp_nvim.app.editor.terminal_rules import (
    Tail,
    check_spec,
    exit_status,
    output_limit,
    terminal_refusal,
)
from acp_nvim.jsonrpc import INTERNAL_ERROR, RpcError
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.terminals")


def _answer_error(what: str, err: EditorAnswerError) -> RpcError:
    return RpcError(INTERNAL_ERROR, f"{what}: {err}")


class TerminalService:
    def __init__(self, editor: EditorPort, sandboxes: SessionSandboxes) -> None:
        self._editor = editor
        self._sandboxes = sandboxes
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
                created = await self._editor.terminal_create(spec)
        except EditorAnswerError as err:
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
            answer = await self._editor.terminal_output(params.terminal_id, tail.total)
        except EditorAnswerError as err:
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
        try:
            answer = await self._editor.terminal_wait(params.terminal_id)
        except EditorAnswerError as err:
            raise _answer_error("terminal/wait_for_exit", err) from None
        if not answer.ok:
            raise terminal_refusal(answer.fact, params.terminal_id, None, None)
        status = exit_status(answer.exit_status)
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        await self._done("terminal/kill", self._editor.terminal_kill, params.terminal_id)
        return s.KillTerminalResponse()

    async def release(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        self._check(params.session_id, params.terminal_id)
        await self._done("terminal/release", self._editor.terminal_release, params.terminal_id)
        self._owner.pop(params.terminal_id, None)
        self._tails.pop(params.terminal_id, None)
        return s.ReleaseTerminalResponse()

    async def _done(
        self, what: str, call: Callable[[str], Awaitable[TerminalDone]], terminal_id: str
    ) -> None:
        try:
            answer = await call(terminal_id)
        except EditorAnswerError as err:
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
        self._editor.terminal_kill_many(ids)

"""The sandbox between the agent and the user's files: one `Sandbox` per session, and the question to the
user for a path outside the project.

Roots are the session's cwd and additional directories (asked of `app/runs.py` on every check, so roots added
later count). A path outside them follows `sandbox.outside`; "ask" asks the user (the port's `ask_sandbox`:
`vim.ui.select` with allow once / always for this path / deny), in the one queue of pickers. Without a UI
(`nvim --headless` with Neovim's own `vim.ui.select`) nobody can answer, so "ask" is refused there; a
`vim.ui.select` replaced by a plugin or a test is asked as usual. Paths that are written inside a root but
really lead outside it (a symlink or `..`) are refused without asking, also after an "always". `check`
resolves the agent's path once and returns that real path: callers hand the editor exactly it, so the file
the sandbox judged is the file opened. An "always" holds for that real path and that action only.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.editor.port import EditorPort, SandboxQuestion
from acp_nvim.app.editor.sandbox_rules import PathRefused, Sandbox, Verdict, resolve
from acp_nvim.client.editor import unknown_session
from acp_nvim.jsonrpc import INVALID_PARAMS, RpcError

log = logging.getLogger("acp_nvim.sandbox")


RootsOf = Callable[[str], "list[str] | None"]


def outside_error(real: str, message: str) -> RpcError:
    """The agent's error for a refused path; `data.uri` names the real path that was judged."""
    return RpcError(INVALID_PARAMS, message, {"uri": Path(real).as_uri(), "reason": "outside_project"})


def refused_error(path: object, refused: PathRefused) -> RpcError:
    data: dict[str, str] = {"reason": refused.reason}
    if isinstance(path, str) and refused.reason == "process_relative":
        data["uri"] = Path(path).as_uri()
    return RpcError(INVALID_PARAMS, refused.message, data)


def resolved(path: object) -> str:
    """The real path the sandbox judges and Neovim opens, or the agent's -32602 for a refused one."""
    try:
        return resolve(path)
    except PathRefused as refused:
        raise refused_error(path, refused) from None


class SessionSandboxes:
    """The `Sandbox` of each session, and the question to the user when one says "ask"."""

    def __init__(
        self,
        editor: EditorPort,
        options: Callable[[], EditorOptions],
        roots_of: RootsOf,
        owner_of: Callable[[str], str] = lambda session_id: session_id,
    ) -> None:
        self._editor = editor
        self._options = options
        self._roots_of = roots_of
        # The session whose sandbox a session uses: a subagent's is its parent's (its "always" answers too).
        self._owner_of = owner_of
        self._sandboxes: dict[str, Sandbox] = {}

    def roots(self, session_id: str) -> list[str]:
        roots = self._roots_of(session_id)
        if not roots:
            raise unknown_session(session_id)
        return roots

    def sandbox(self, session_id: str) -> Sandbox:
        roots = self.roots(session_id)
        session_id = self._owner_of(session_id)
        box = self._sandboxes.get(session_id)
        if box is None:
            opts = self._options()
            box = Sandbox(roots, allow=_absolute(opts.allow), deny=_absolute(opts.deny), outside=opts.outside)
            self._sandboxes[session_id] = box
        else:
            for root in roots:
                box.add_root(root)
        return box

    def forget(self, session_id: str) -> None:
        self._sandboxes.pop(session_id, None)

    async def check(self, session_id: str, path: str, action: str) -> str:
        """The real path the agent may `action` ("read", "write", "run a command in"): the one path to open,
        resolved once here. Raises the error the agent gets otherwise."""
        real = resolved(path)
        box = self.sandbox(session_id)
        verdict = box.decide(path, real, action)
        if verdict is Verdict.ASK:
            # One picker at a time, shared with every other question to the user.
            async with self._editor.pickers:
                # The user may have answered "always" for this path while we waited for the picker.
                verdict = box.decide(path, real, action)
                if verdict is Verdict.ASK:
                    verdict = await self._ask(box, path, real, action, session_id)
        if verdict is Verdict.ALLOW:
            return real
        raise outside_error(real, self._why_denied(box, path, real, action))

    async def _ask(self, box: Sandbox, path: str, real: str, action: str, session_id: str) -> Verdict:
        question = SandboxQuestion(path=path, real=real, action=action, session_id=session_id)
        answer = await self._editor.ask_sandbox(question)
        if answer == "always":
            # For this action and this real path only: "always" to a read is no yes to a write.
            box.remember(real, True, action)
            return Verdict.ALLOW
        if answer == "once":
            return Verdict.ALLOW
        if answer == "noui":
            raise outside_error(
                real,
                f"{path} is outside the project and there is no UI to ask the user "
                "(headless Neovim; set sandbox.outside or sandbox.allow)",
            )
        raise outside_error(real, f"the user refused to let the agent {action} {path}: outside the project")

    @staticmethod
    def _why_denied(box: Sandbox, path: str, real: str, action: str) -> str:
        if box.is_inside(real):
            return f"the agent may not {action} {path}: denied by sandbox.deny"
        if box.written_inside(path):
            return (
                f"{path} leads to {real}, outside the project: escapes through a symlink or '..' are refused"
            )
        return f"the agent may not {action} {path}: outside the project"


def _valid(path: str) -> bool:
    try:
        resolve(path)
    except PathRefused as refused:
        log.warning("sandbox path %r is not used: %s", path, refused.message)
        return False
    return True


def _absolute(paths: list[str]) -> list[str]:
    # Lua made them absolute; one the sandbox's own rules refuse is left out (and logged) rather than failing
    # every check: the sandbox, not the option's type, decides what a usable path is.
    return [p for p in paths if os.path.isabs(p) and _valid(p)]

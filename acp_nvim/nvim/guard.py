"""The sandbox between the agent and the user's files: one `Sandbox` per session, and the question to the
user for a path outside the project.

Roots are the session's cwd and additional directories (asked of the controller on every check, so roots added
later count). A path outside them follows `sandbox.outside`; "ask" opens `vim.ui.select` with allow once /
always for this path / deny, in the one queue of pickers (`ui.py`). Without a UI (`nvim --headless` with
Neovim's own `vim.ui.select`) nobody can answer, so "ask" is refused there; a `vim.ui.select` replaced by a
plugin or a test is asked as usual. Paths that are written inside a root but really lead outside it (a symlink
or `..`) are refused without asking.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from acp_nvim.client.editor import unknown_session
from acp_nvim.client.sandbox import Sandbox, Verdict, resolve
from acp_nvim.jsonrpc import INVALID_PARAMS, RpcError
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.options import EditorOptions
from acp_nvim.nvim.ui import Ui

log = logging.getLogger("acp_nvim.guard")

ASK = "require('acp_nvim.sandbox_prompt').ask(...)"

RootsOf = Callable[[str], "list[str] | None"]


def outside_error(path: str, message: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        message,
        {"uri": "file://" + resolve(path), "reason": "outside_project"},
    )


class PathGuard:
    def __init__(
        self,
        bridge: Bridge,
        ui: Ui,
        options: Callable[[], EditorOptions],
        roots_of: RootsOf,
    ) -> None:
        self._bridge = bridge
        self._ui = ui
        self._options = options
        self._roots_of = roots_of
        self._sandboxes: dict[str, Sandbox] = {}

    def roots(self, session_id: str) -> list[str]:
        roots = self._roots_of(session_id)
        if not roots:
            raise unknown_session(session_id)
        return roots

    def sandbox(self, session_id: str) -> Sandbox:
        roots = self.roots(session_id)
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

    async def check(self, session_id: str, path: str, action: str) -> None:
        """Returns when the agent may `action` ("read", "write", "run a command in") `path`; raises the
        error the agent gets otherwise."""
        if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
            raise RpcError(INVALID_PARAMS, f"path must be absolute: {path!r}")
        box = self.sandbox(session_id)
        verdict = box.check(path)
        if verdict is Verdict.ASK:
            # One picker at a time, shared with every other question to the user.
            async with self._ui.pickers:
                # The user may have answered "always" for this path while we waited for the picker.
                verdict = box.check(path)
                if verdict is Verdict.ASK:
                    verdict = await self._ask(box, path, action, session_id)
        if verdict is Verdict.ALLOW:
            return
        raise outside_error(path, self._why_denied(box, self.roots(session_id), path, action))

    async def _ask(self, box: Sandbox, path: str, action: str, session_id: str) -> Verdict:
        real = resolve(path)
        view = {"path": path, "real": real, "action": action, "session_id": session_id}
        answer = await self._ui.ask(ASK, view)
        if answer == "always":
            box.remember(path, True)
            return Verdict.ALLOW
        if answer == "once":
            return Verdict.ALLOW
        if answer == "noui":
            raise outside_error(
                path,
                f"{path} is outside the project and there is no UI to ask the user "
                "(headless Neovim; set sandbox.outside or sandbox.allow)",
            )
        raise outside_error(path, f"the user refused to let the agent {action} {path}: outside the project")

    @staticmethod
    def _why_denied(box: Sandbox, roots: list[str], path: str, action: str) -> str:
        if box.is_inside(path):
            return f"the agent may not {action} {path}: denied by sandbox.deny"
        spellings = roots + box.roots
        if _written_inside(path, spellings) or _written_inside(os.path.normpath(path), spellings):
            return (
                f"{path} leads to {resolve(path)}, outside the project: "
                "escapes through a symlink or '..' are refused"
            )
        return f"the agent may not {action} {path}: outside the project"


def _written_inside(path: str, roots: list[str]) -> bool:
    """The spelling (`..` kept as written) starts inside a root, in the root's real or written form."""
    parts = [p for p in path.split(os.sep) if p not in ("", ".")]
    for root in roots:
        base = [p for p in root.split(os.sep) if p]
        if parts[: len(base)] == base:
            return True
    return False


def _absolute(paths: list[str]) -> list[str]:
    # Validated in Lua (expanded to absolute there); anything else is dropped rather than failing every check.
    return [p for p in paths if os.path.isabs(p)]

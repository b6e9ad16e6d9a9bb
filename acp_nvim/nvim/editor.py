"""The Neovim side of `acp_nvim.app.editor.port.EditorPort`: the editor mechanisms on the Lua of
`lua/acp_nvim/editor/` (files, terminals) and `ui/` (the sandbox, permission and elicitation questions),
through `LuaApi` and the late answers of `ui.py`. Facts in, facts out: the rules are the services' in
`acp_nvim/app/editor/`.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from acp_nvim.app.editor import port as p
from acp_nvim.app.views import PermissionView
from acp_nvim.nvim import lua_api
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.lua_values import from_lua, json_to_lua, to_lua
from acp_nvim.nvim.ui import Ui


class NvimEditorPort:
    def __init__(self, lua: LuaApi, ui: Ui) -> None:
        self._lua = lua
        self._ui = ui

    @property
    def pickers(self) -> anyio.Lock:
        return self._ui.pickers

    def notify(self, message: str, level: int) -> None:
        self._lua.notify(message, level)

    # ---- files ---------------------------------------------------------------------------------------

    async def read_buffer(
        self, path: str, line: int | None, limit: int | None, options: p.FsReadOptions
    ) -> p.FsReadAnswer:
        return await self._lua.fs_read(path, line, limit, options)

    async def write_buffer(self, path: str, content: str, options: p.FsWriteOptions) -> p.FsWriteAnswer:
        return await self._lua.fs_write(path, content, options)

    async def find_buffer(self, path: str) -> int | None:
        return await self._lua.fs_find_buffer(path)

    def file_written(self, path: str) -> None:
        self._lua.fs_file_written(path)

    def forget_views(self, session_id: str) -> None:
        self._lua.fs_forget_views(session_id)

    def show_where(self, path: str, line: int | None, bufnr: int | None) -> None:
        self._lua.follow_show(path, line, bufnr)

    # ---- terminals -----------------------------------------------------------------------------------

    async def terminal_create(self, spec: p.TerminalSpec) -> p.TerminalCreated:
        return await self._lua.terminal_create(spec)

    async def terminal_output(self, terminal_id: str, known_total: int) -> p.TerminalOutput:
        return await self._lua.terminal_output(terminal_id, known_total)

    async def terminal_wait(self, terminal_id: str) -> p.TerminalWait:
        # Lua answers at once when the command already ended, else through `acp_reply` when it does.
        with self._ui.slot() as slot:
            answer = await self._lua.terminal_wait_for_exit(terminal_id, slot.token)
            if not answer.ok or answer.exit_status is not None:
                return answer
            status = from_lua(await slot.wait(), p.TerminalExit)
        return p.TerminalWait(ok=True, exit_status=status)

    async def terminal_kill(self, terminal_id: str) -> p.TerminalDone:
        return await self._lua.terminal_kill(terminal_id)

    async def terminal_release(self, terminal_id: str) -> p.TerminalDone:
        return await self._lua.terminal_release(terminal_id)

    def terminal_kill_many(self, terminal_ids: Sequence[str]) -> None:
        self._lua.terminal_kill_many(terminal_ids)

    # ---- questions -----------------------------------------------------------------------------------

    async def ask_sandbox(self, question: p.SandboxQuestion) -> str | None:
        answer = await self._ui.ask(lua_api.ASK_SANDBOX, to_lua(question))
        return answer if isinstance(answer, str) else None

    async def ask_permission(self, view: PermissionView) -> str | None:
        answer = await self._ui.ask(lua_api.ASK_PERMISSION, to_lua(view))
        return answer if isinstance(answer, str) else None

    async def ask_elicitation(self, view: dict[str, object]) -> p.ElicitationAnswer:
        with self._ui.slot() as slot:
            try:
                answer = await self._ui.ask_with(slot, lua_api.ASK_ELICITATION, json_to_lua(view))
            finally:
                if not slot.done:
                    # Given up (a cancel, a completion elsewhere): the rest of the form is not asked.
                    self._lua.elicitation_close(slot.token)
        if not isinstance(answer, dict):
            return p.ElicitationAnswer()
        action = answer.get("action")
        return p.ElicitationAnswer(
            action=action if isinstance(action, str) else "cancel", content=answer.get("content")
        )

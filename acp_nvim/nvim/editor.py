"""The Neovim implementation of the client's `Editor`: rendering, permissions, files and terminals.

Files (`nvim/files.py`) and terminals (`nvim/terminals.py`) are advertised only when enabled by the options
`setup()` sent (`capabilities = { fs_read, fs_write, terminal }`); what is not advertised never reaches here,
since the client answers "method not found" itself.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import msgspec

from acp_nvim.nvim.elicitation import ELICITATION_CAPABILITIES, ElicitationBroker
from acp_nvim.nvim.files import FileService
from acp_nvim.nvim.guard import PathGuard
from acp_nvim.nvim.options import EditorOptions
from acp_nvim.nvim.terminals import TerminalService
from acp_nvim.protocol import schema as s

if TYPE_CHECKING:
    from acp_nvim.nvim.controller import Controller


log = logging.getLogger("acp_nvim.editor")


class NvimEditor:
    def __init__(self, controller: Controller) -> None:
        self._controller = controller
        bridge = controller.bridge
        self.options = EditorOptions()
        self.guard = PathGuard(bridge, controller.ui, lambda: self.options, controller.session_roots)
        self.files = FileService(bridge, self.guard, lambda: self.options, controller.ui)
        self.terminals = TerminalService(bridge, self.guard, controller.ui)
        self._elicitations = ElicitationBroker(controller.ui, controller.lua)

    def configure(self, raw: Any) -> None:
        """Options from Lua (`services.lua`), validated there at `setup()`: a table that does not decode is a
        bug of one side, logged; the previous options stay."""
        try:
            self.options = msgspec.convert(raw or {}, EditorOptions)
        except msgspec.ValidationError as err:
            log.error("editor options from Lua do not decode (%s): %r", err, raw)

    def client_capabilities(self) -> s.ClientCapabilities:
        opts = self.options
        caps = s.ClientCapabilities(
            fs=s.FileSystemCapabilities(read_text_file=opts.fs_read, write_text_file=opts.fs_write),
            terminal=opts.terminal,
        )
        # Elicitation (issue 5): forms and URLs, both served by nvim/elicitation.py.
        caps.elicitation = ELICITATION_CAPABILITIES
        # Login and session capabilities are the controller's (auth.py, modes.py): it adds them.
        return self._controller.advertise(caps)

    async def session_update(self, notification: s.SessionNotification) -> None:
        self._controller.on_session_update(notification)

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        outcome = await self._controller.ask_permission(params)
        self.files.permission_answered(params, outcome)
        return s.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        return await self.files.read(params)

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        return await self.files.write(params)

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        return await self.terminals.create(params)

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        return await self.terminals.output(params)

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        return await self.terminals.wait_for_exit(params)

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        return await self.terminals.kill(params)

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        return await self.terminals.release(params)

    # ---- elicitation (issue 5) -------------------------------------------------------------------

    async def create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        return await self._elicitations.ask(params)

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        self._elicitations.complete(params.elicitation_id)

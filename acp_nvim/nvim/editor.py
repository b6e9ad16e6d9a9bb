"""The Neovim implementation of the client's `Editor`: rendering and permissions.

File system and terminal requests are not served yet (their Neovim side is another module): they are not
advertised, so the client answers the agent "method not found" before they reach here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_nvim.jsonrpc import MethodNotFound
from acp_nvim.protocol import schema as s

if TYPE_CHECKING:
    from acp_nvim.nvim.controller import Controller


class NvimEditor:
    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities()

    async def session_update(self, notification: s.SessionNotification) -> None:
        self._controller.on_session_update(notification)

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        outcome = await self._controller.ask_permission(params)
        return s.RequestPermissionResponse(outcome=outcome)

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        raise MethodNotFound.for_method("fs/read_text_file")

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        raise MethodNotFound.for_method("fs/write_text_file")

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        raise MethodNotFound.for_method("terminal/create")

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        raise MethodNotFound.for_method("terminal/output")

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        raise MethodNotFound.for_method("terminal/wait_for_exit")

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        raise MethodNotFound.for_method("terminal/kill")

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        raise MethodNotFound.for_method("terminal/release")

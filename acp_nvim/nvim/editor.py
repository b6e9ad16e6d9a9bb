"""The Neovim implementation of the client's `Editor`: rendering, permissions, files and terminals.

Files (`nvim/files.py`) and terminals (`nvim/terminals.py`) are advertised only when enabled by the options
`setup()` sent (`capabilities = { fs_read, fs_write, terminal }`); what is not advertised never reaches here,
since the client answers "method not found" itself. The services are shared by every agent; each agent's
connection gets an `NvimEditor` of its own, which advertises what the application adds for that agent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from acp_nvim.app.editor_options import EditorOptions
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.elicitation import ELICITATION_CAPABILITIES, ElicitationBroker
from acp_nvim.nvim.files import AgentOf, FileService
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.sandbox import SessionSandboxes
from acp_nvim.nvim.terminals import TerminalService
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s

RootsOf = Callable[[str], list[str] | None]
Advertise = Callable[[s.ClientCapabilities], s.ClientCapabilities]


log = logging.getLogger("acp_nvim.editor")


class SessionRoutes(Protocol):
    """Where what concerns a session goes: the application (through the controller)."""

    def on_session_updates(self, notifications: list[s.SessionNotification]) -> None: ...

    async def ask_permission(self, request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome: ...


class EditorServices:
    """Files, terminals, the sandbox and forms: one set for every agent."""

    def __init__(self, bridge: Bridge, ui: Ui, lua: LuaApi, roots_of: RootsOf, agent_of: AgentOf) -> None:
        self.options = EditorOptions()
        self.sandboxes = SessionSandboxes(bridge, ui, lambda: self.options, roots_of)
        self.files = FileService(bridge, self.sandboxes, lambda: self.options, ui, agent_of)
        self.terminals = TerminalService(bridge, self.sandboxes, ui)
        self.elicitations = ElicitationBroker(ui, lua)

    def configure(self, options: EditorOptions) -> None:
        """The options an agent's start runs with (`EditorOptions.for_start`), set before its launch."""
        self.options = options

    def session_ended(self, session_id: str) -> None:
        """Its terminals, not the ones of other sessions: another agent may still be using its own."""
        self.terminals.end_session(session_id)
        self.sandboxes.forget(session_id)
        self.files.forget(session_id)


class NvimEditor:
    def __init__(self, services: EditorServices, routes: SessionRoutes, advertise: Advertise) -> None:
        self._services = services
        self._routes = routes
        self._advertise = advertise
        self.files = services.files
        self.terminals = services.terminals
        # The stream's bulk goes straight to the application, without a call of ours per update.
        self.session_updates: Callable[[list[s.SessionNotification]], None] = routes.on_session_updates

    def client_capabilities(self) -> s.ClientCapabilities:
        opts = self._services.options
        caps = s.ClientCapabilities(
            fs=s.FileSystemCapabilities(read_text_file=opts.fs_read, write_text_file=opts.fs_write),
            terminal=opts.terminal,
        )
        # Elicitation (issue 5): forms and URLs, both served by nvim/elicitation.py.
        caps.elicitation = ELICITATION_CAPABILITIES
        # Login and session capabilities are the application's (app/capabilities.py): it adds them.
        return self._advertise(caps)

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        outcome = await self._routes.ask_permission(params)
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
        return await self._services.elicitations.ask(params)

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        self._services.elicitations.complete(params.elicitation_id)

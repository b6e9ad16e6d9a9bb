"""The client's `Editor` (`client/editor.py`) served by the editor services: each agent request one method.

The services are shared by every agent (`EditorServices`: files, terminals, the sandbox, permissions and
forms, on one `EditorPort`); each agent's connection gets an `AgentEditor` of its own, which advertises what
the application adds for that agent. Files and terminals are advertised only when enabled by the options
`setup()` sent (`capabilities = { fs_read, fs_write, terminal }`); what is not advertised never reaches here,
since the client answers "method not found" itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.editor.elicitation import ELICITATION_CAPABILITIES, ElicitationBroker
from acp_nvim.app.editor.files import AgentOf, FileService
from acp_nvim.app.editor.port import EditorPort
from acp_nvim.app.editor.sandbox import RootsOf, SessionSandboxes
from acp_nvim.app.editor.terminals import TerminalService
from acp_nvim.client.session.text_run import TextRun
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

Advertise = Callable[[s.ClientCapabilities], s.ClientCapabilities]


class SessionRoutes(Protocol):
    """Where what concerns a session goes: the application (`app/sessions/incoming.py`)."""

    def on_session_updates(self, notifications: list[u.SessionNotification | TextRun]) -> None: ...

    async def ask_permission(self, request: s.RequestPermissionRequest) -> s.RequestPermissionOutcome: ...

    def elicitation_waits(self, request: s.CreateElicitationRequest) -> None:
        """A form or URL is about to be asked of the user (`User AcpNvimWaiting`)."""


class EditorServices:
    """Files, terminals, the sandbox and forms: one set for every agent."""

    def __init__(
        self,
        editor: EditorPort,
        roots_of: RootsOf,
        agent_of: AgentOf,
        owner_of: Callable[[str], str] = lambda session_id: session_id,
    ) -> None:
        """`owner_of`: the session a session id is part of (a subagent's: its parent's chat session)."""
        self.options = EditorOptions()
        self.sandboxes = SessionSandboxes(editor, lambda: self.options, roots_of, owner_of)
        self.files = FileService(editor, self.sandboxes, lambda: self.options, agent_of)
        self.terminals = TerminalService(editor, self.sandboxes)
        self.elicitations = ElicitationBroker(editor)

    def configure(self, options: EditorOptions) -> None:
        """The options an agent's start runs with (`EditorOptions.for_start`), set before its launch."""
        self.options = options

    def session_ended(self, session_id: str) -> None:
        """Its terminals, not the ones of other sessions: another agent may still be using its own."""
        self.terminals.end_session(session_id)
        self.sandboxes.forget(session_id)
        self.files.forget(session_id)


class AgentEditor:
    """One agent's `Editor`: its requests, each handed to the service that decides it."""

    def __init__(self, services: EditorServices, routes: SessionRoutes, advertise: Advertise) -> None:
        self._services = services
        self._routes = routes
        self._advertise = advertise
        self.files = services.files
        self.terminals = services.terminals
        # The stream's bulk goes straight to the application, without a call of ours per update.
        self.session_updates: Callable[[list[u.SessionNotification]], None] = routes.on_session_updates  # type: ignore[assignment]
        # The same, with the stream's bulk read by its bytes (`client/session/text_run.py`).
        self.session_stream: Callable[[list[u.SessionNotification | TextRun]], None] = (
            routes.on_session_updates
        )

    def client_capabilities(self) -> s.ClientCapabilities:
        opts = self._services.options
        caps = s.ClientCapabilities(
            fs=s.FileSystemCapabilities(read_text_file=opts.fs_read, write_text_file=opts.fs_write),
            terminal=opts.terminal,
        )
        # Elicitation (issue 5): forms and URLs, both served by elicitation.py.
        caps.elicitation = ELICITATION_CAPABILITIES
        # Login and session capabilities are the application's (app/client_capabilities.py): it adds them.
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
        self._routes.elicitation_waits(params)
        return await self._services.elicitations.ask(params)

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        self._services.elicitations.complete(params.elicitation_id)

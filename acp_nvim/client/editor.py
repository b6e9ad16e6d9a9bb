"""The editor side of the ACP client role, as the client layer sees it.

`client` knows nothing of Neovim: it decodes the agent's requests and hands them to an `Editor`. The Neovim
implementation lives in `acp_nvim.nvim`; tests may use an in-memory one. A method the editor cannot serve is
simply not advertised: `client_capabilities()` is the single source of what goes into `initialize`.
"""

from __future__ import annotations

from typing import Protocol

from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND


def unknown_session(session_id: str) -> RpcError:
    """What the agent gets for a request naming a session this client does not run, whatever the method."""
    return RpcError(RESOURCE_NOT_FOUND, f"unknown session: {session_id}", {"sessionId": session_id})


class Editor(Protocol):
    def client_capabilities(self) -> s.ClientCapabilities:
        """What this editor really implements; sent as `clientCapabilities` in `initialize`."""
        ...

    def session_updates(self, notifications: list[s.SessionNotification]) -> None:
        """`session/update` notifications whose update kind is known (unknown kinds never reach here), for
        sessions this client opened, in the order read: those read together come in one call (a call, let
        alone a coroutine, per update would be a cost per streamed chunk). Called inline: it must not wait;
        what it shows is coalesced on its side. The list is the caller's: read it, never keep it."""
        ...

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse: ...

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse: ...

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse: ...

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse: ...

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse: ...

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse: ...

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse: ...

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse: ...

    async def create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        """`elicitation/create`; only the modes advertised in `clientCapabilities.elicitation` reach here."""
        ...

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        """`elicitation/complete` (URL mode advertised); unknown or completed ids must be ignored."""
        ...


class HeadlessEditor:
    """An editor that serves nothing: for probes and tools that only talk to the agent.

    It advertises no capability, so the agent never calls fs or terminal methods; permission requests are
    answered `cancelled`, since nobody is there to choose.
    """

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities()

    def session_updates(self, notifications: list[s.SessionNotification]) -> None:
        return None

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        return s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled())

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        raise NotImplementedError("not advertised")

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        raise NotImplementedError("not advertised")

    async def create_terminal(self, params: s.CreateTerminalRequest) -> s.CreateTerminalResponse:
        raise NotImplementedError("not advertised")

    async def terminal_output(self, params: s.TerminalOutputRequest) -> s.TerminalOutputResponse:
        raise NotImplementedError("not advertised")

    async def wait_for_terminal_exit(
        self, params: s.WaitForTerminalExitRequest
    ) -> s.WaitForTerminalExitResponse:
        raise NotImplementedError("not advertised")

    async def kill_terminal(self, params: s.KillTerminalRequest) -> s.KillTerminalResponse:
        raise NotImplementedError("not advertised")

    async def release_terminal(self, params: s.ReleaseTerminalRequest) -> s.ReleaseTerminalResponse:
        raise NotImplementedError("not advertised")

    async def create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        raise NotImplementedError("not advertised")

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        return None

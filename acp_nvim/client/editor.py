"""The editor side of the ACP client role, as the client layer sees it.

`client` knows nothing of Neovim: it decodes the agent's requests and hands them to an `Editor`. The Neovim
implementation lives in `acp_nvim.nvim`; tests may use an in-memory one. A method the editor cannot serve is
simply not advertised: `client_capabilities()` is the single source of what goes into `initialize`.
"""

from __future__ import annotations

from typing import Protocol

from acp_nvim.client.surface import ClientHandlers, NothingServed
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND


def unknown_session(session_id: str) -> RpcError:
    """What the agent gets for a request naming a session this client does not run, whatever the method."""
    return RpcError(RESOURCE_NOT_FOUND, f"unknown session: {session_id}", {"sessionId": session_id})


class Editor(ClientHandlers, Protocol):
    """The generated handlers (`client/surface.py`: one per request the agent calls on the client) and what
    is no request: the capabilities, and the stream's updates in batches. Only the elicitation modes
    advertised in `clientCapabilities.elicitation` reach `create_elicitation`; `complete_elicitation` (URL
    mode advertised) must ignore unknown or completed ids."""

    def client_capabilities(self) -> s.ClientCapabilities:
        """What this editor really implements; sent as `clientCapabilities` in `initialize`."""
        ...

    def session_updates(self, notifications: list[u.SessionNotification]) -> None:
        """`session/update` notifications whose update kind is known (unknown kinds never reach here), for
        sessions this client opened, in the order read: those read together come in one call (a call, let
        alone a coroutine, per update would be a cost per streamed chunk). Called inline: it must not wait;
        what it shows is coalesced on its side. The list is the caller's: read it, never keep it."""
        ...


class HeadlessEditor(NothingServed):
    """An editor that serves nothing: for probes and tools that only talk to the agent.

    It advertises no capability, so the agent never calls fs or terminal methods; permission requests are
    answered `cancelled`, since nobody is there to choose.
    """

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities()

    def session_updates(self, notifications: list[u.SessionNotification]) -> None:
        return None

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        return s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled())

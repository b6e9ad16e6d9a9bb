"""The typed calls to an initialized agent, and what it told us of itself in `initialize`.

The wire calls are the generated `AgentRequests` (`client/surface.py`); what is this module's own is around
them. Calls the agent did not advertise (`AGENT_GATING`, or a session without modes) are refused here, before
anything is sent, with `Unsupported`: the user learns what is missing instead of getting an obscure error from
the agent. An answer of the wrong shape is an `InvalidAnswer`. Starting the agent and owning its
process is `client/agent/connection.py`'s (`AgentConnection.launch`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

import msgspec

from acp_nvim.client.agent import capabilities as agent_capabilities
from acp_nvim.client.agent import failure, steering
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.process import AgentProcess
from acp_nvim.client.dispatch import Dispatcher
from acp_nvim.client.surface import AGENT_GATING, AgentRequests, advertised
from acp_nvim.jsonrpc import INTERNAL_ERROR, Connection, MessageHook, MessagesHook, RpcError
from acp_nvim.protocol import codec
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from acp_nvim.protocol import unstable_methods as um

T = TypeVar("T")
# The two calls that reopen an existing session: their requests and answers.
Reopen = TypeVar("Reopen", s.LoadSessionRequest, s.ResumeSessionRequest)
Reopened = TypeVar("Reopened", s.LoadSessionResponse, s.ResumeSessionResponse)

# The unstable schema's session methods this client calls, each only where the agent advertises its
# `sessionCapabilities` entry (`offers`).
SessionFeature = Literal["fork", "title", "archive"]
UNSTABLE_METHODS: dict[SessionFeature, str] = {
    "fork": um.SESSION_FORK,
    "title": um.SESSION_SET_TITLE,
    "archive": um.SESSION_ARCHIVE,
}


class InvalidAnswer(RpcError):
    """The agent answered one of our requests with a result of the wrong shape (detected here, not sent)."""

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, message)


TrafficHook = MessageHook
TrafficLinesHook = MessagesHook


class AgentCalls:
    """A live, initialized agent: what it said of itself, and every call to it."""

    def __init__(
        self,
        process: AgentProcess,
        connection: Connection,
        dispatcher: Dispatcher,
        init: s.InitializeResponse,
        *,
        session_capability_names: frozenset[str] = frozenset(),
    ) -> None:
        self.process = process
        self.connection = connection
        self.editor = dispatcher.editor
        self.diagnostics = dispatcher.diagnostics
        self._dispatcher = dispatcher
        self.init = init
        # Every key of the agent's `sessionCapabilities`, those the schema does not name included.
        self.session_capability_names = session_capability_names
        self._agent = AgentRequests(self._call, connection.notify)
        # Which sessions offered modes / config options: set_mode and set_config_option need them.
        self._sessions_with_modes: set[str] = set()
        self._sessions_with_config: set[str] = set()

    # ---- what the agent told us ----------------------------------------------------------------------

    @property
    def protocol_version(self) -> int:
        return self.init.protocol_version

    @property
    def agent_info(self) -> s.Implementation | None:
        return self.init.agent_info

    @property
    def capabilities(self) -> s.AgentCapabilities:
        return self.init.agent_capabilities or s.AgentCapabilities()

    def offers(self, feature: SessionFeature) -> bool:
        """Whether the agent advertised the unstable session method of `feature` (`unstable_session`)."""
        return bool(getattr(self.unstable_session, feature))

    @property
    def unstable_session(self) -> agent_capabilities.UnstableSession:
        """The unstable session features the agent advertised (`client/agent/capabilities.py`)."""
        return agent_capabilities.unstable_session(self.capabilities, self.session_capability_names)

    @property
    def auth_methods(self) -> list[s.AuthMethod]:
        return list(self.init.auth_methods or [])

    @property
    def display_name(self) -> str:
        info = self.agent_info
        if info is not None:
            return info.title or info.name
        return self.process.command.name

    @property
    def closed_reason(self) -> str | None:
        return self.process.exit_reason() if self.process.exited else None

    async def wait_closed(self) -> str:
        await self.process.wait()
        return self.process.exit_reason()

    # ---- typed calls ---------------------------------------------------------------------------------

    async def _call(self, method: str, params: msgspec.Struct, result_type: type[T]) -> T:
        """Every request of `AgentRequests`: the agent's error with what it printed meanwhile, its answer's
        shape checked."""
        mark = self.process.stderr.count
        try:
            raw = await self.connection.request(method, params)
        except RpcError as err:
            # What the agent printed meanwhile is usually the real cause (see `failure.describe`).
            await failure.note_stderr(err, self.process.stderr, mark)
            raise
        try:
            return codec.decode_result(raw, result_type)
        except msgspec.ValidationError as err:
            # An RpcError, so callers handle it with the agent's own errors instead of crashing on it.
            raise InvalidAnswer(f"{self.display_name} sent an invalid answer to {method}: {err}") from None
        except RecursionError:
            raise InvalidAnswer(
                f"{self.display_name} sent an answer to {method} nested too deeply to decode"
            ) from None

    def _require(self, method: str, refusal: str) -> None:
        """Refuses, before anything is sent, a call whose gating capabilities the agent advertised none of."""
        gating = AGENT_GATING.get(method, ())
        if gating and not any(advertised(self.capabilities, path) for path in gating):
            raise Unsupported(f"{self.display_name} {refusal}")

    async def authenticate(self, method_id: str) -> s.AuthenticateResponse:
        if not any(method.id == method_id for method in self.auth_methods):
            raise Unsupported(f"{self.display_name} offers no authentication method {method_id!r}")
        return await self._agent.authenticate(s.AuthenticateRequest(method_id=method_id))

    async def logout(self) -> s.LogoutResponse:
        self._require(m.LOGOUT, "does not support logout")
        return await self._agent.logout(s.LogoutRequest())

    async def new_session(
        self,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.NewSessionResponse:
        request = s.NewSessionRequest(
            cwd=cwd,
            mcp_servers=agent_capabilities.allowed_mcp_servers(self.capabilities, mcp_servers),
            additional_directories=agent_capabilities.additional_directories(
                self.capabilities, additional_directories
            ),
        )
        with self._dispatcher.opening_session():
            response = await self._agent.new_session(request)
            self._remember_session(response.session_id, response.modes, response.config_options)
        return response

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.LoadSessionResponse:
        self._require(m.SESSION_LOAD, "cannot load sessions")
        return await self._reopen(
            self._agent.load_session,
            s.LoadSessionRequest,
            session_id,
            cwd,
            mcp_servers,
            additional_directories,
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.ResumeSessionResponse:
        self._require(m.SESSION_RESUME, "cannot resume sessions")
        return await self._reopen(
            self._agent.resume_session,
            s.ResumeSessionRequest,
            session_id,
            cwd,
            mcp_servers,
            additional_directories,
        )

    async def _reopen(
        self,
        send: Callable[[Reopen], Awaitable[Reopened]],
        request_type: type[Reopen],
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer],
        additional_directories: Sequence[str] | None,
    ) -> Reopened:
        request = request_type(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=agent_capabilities.allowed_mcp_servers(self.capabilities, mcp_servers),
            additional_directories=agent_capabilities.additional_directories(
                self.capabilities, additional_directories
            ),
        )
        # A loaded session's history is replayed before the answer: those updates must reach the editor.
        with self._dispatcher.opening_session(session_id):
            response = await send(request)
            self._remember_session(session_id, response.modes, response.config_options)
        return response

    async def close_session(self, session_id: str) -> s.CloseSessionResponse:
        self._require(m.SESSION_CLOSE, "cannot close sessions")
        return await self._agent.close_session(s.CloseSessionRequest(session_id=session_id))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None
    ) -> s.ListSessionsResponse:
        self._require(m.SESSION_LIST, "cannot list sessions")
        return await self._agent.list_sessions(s.ListSessionsRequest(cwd=cwd, cursor=cursor))

    async def list_all_sessions(self, cwd: str | None = None, max_pages: int = 100) -> list[s.SessionInfo]:
        """Every page of `session/list`, following `nextCursor`; `max_pages` guards against an agent whose
        cursors never end."""
        sessions: list[s.SessionInfo] = []
        cursor: str | None = None
        for _ in range(max_pages):
            page = await self.list_sessions(cwd, cursor)
            sessions.extend(page.sessions)
            if not page.next_cursor or page.next_cursor == cursor:
                break
            cursor = page.next_cursor
        return sessions

    async def delete_session(self, session_id: str) -> s.DeleteSessionResponse:
        self._require(m.SESSION_DELETE, "cannot delete sessions")
        return await self._agent.delete_session(s.DeleteSessionRequest(session_id=session_id))

    async def set_mode(self, session_id: str, mode_id: str) -> s.SetSessionModeResponse:
        if session_id not in self._sessions_with_modes:
            raise Unsupported(f"{self.display_name} offers no modes for this session")
        return await self._agent.set_session_mode(
            s.SetSessionModeRequest(session_id=session_id, mode_id=mode_id)
        )

    async def set_config_option(
        self, session_id: str, request: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        if session_id not in self._sessions_with_config:
            raise Unsupported(f"{self.display_name} offers no configuration options for this session")
        return await self._agent.set_session_config_option(request)

    async def prompt(self, session_id: str, prompt: Sequence[s.ContentBlock]) -> u.PromptResponse:
        """The turn; its answer read with the unstable schema's `usage` (the turn's tokens, where given)."""
        agent_capabilities.check_prompt(self.capabilities, prompt, self.display_name)
        try:
            return await self._agent.prompt(s.PromptRequest(session_id=session_id, prompt=list(prompt)))
        finally:
            # The user learns how much went wrong during the turn when it ends, not some seconds later.
            self.diagnostics.flush()

    # ---- the unstable schema's session methods ---------------------------------------------------------

    def _require_unstable(self, feature: SessionFeature, refusal: str) -> None:
        if not self.offers(feature):
            raise Unsupported(f"{self.display_name} {refusal}")

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> u.ForkSessionResponse:
        """A new session with the context of `session_id` (the whole of it: the request names no point to
        fork at). Like session/new, the new id is unknown until the answer: what the agent replays meanwhile
        is let through."""
        self._require_unstable("fork", "cannot fork sessions")
        servers: list[u.McpServer] = [*agent_capabilities.allowed_mcp_servers(self.capabilities, mcp_servers)]
        request = u.ForkSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=servers,
            additional_directories=agent_capabilities.additional_directories(
                self.capabilities, additional_directories
            ),
        )
        with self._dispatcher.opening_session():
            response = await self._call(UNSTABLE_METHODS["fork"], request, u.ForkSessionResponse)
            self._remember_session(response.session_id, response.modes, response.config_options)
        return response

    async def set_session_title(self, session_id: str, title: str) -> u.SetSessionTitleResponse:
        self._require_unstable("title", "cannot rename sessions")
        request = u.SetSessionTitleRequest(session_id=session_id, title=title)
        return await self._call(UNSTABLE_METHODS["title"], request, u.SetSessionTitleResponse)

    async def archive_session(self, session_id: str) -> u.ArchiveSessionResponse:
        self._require_unstable("archive", "cannot archive sessions")
        request = u.ArchiveSessionRequest(session_id=session_id)
        return await self._call(UNSTABLE_METHODS["archive"], request, u.ArchiveSessionResponse)

    @property
    def steerable(self) -> bool:
        """Whether the agent takes a prompt into its running turn (`client/agent/steering.py`)."""
        return steering.advertised(self.init)

    async def steer(self, session_id: str, prompt: Sequence[s.ContentBlock]) -> steering.SteeringResponse:
        """Sends `prompt` into the session's running turn; the outcome says whether it went in."""
        if not self.steerable:
            raise Unsupported(f"{self.display_name} cannot take a prompt into its running turn")
        agent_capabilities.check_prompt(self.capabilities, prompt, self.display_name)
        request = steering.SteeringRequest(session_id=session_id, prompt=list(prompt))
        return await self._call(steering.METHOD, request, steering.SteeringResponse)

    async def cancel(self, session_id: str) -> None:
        """Cancel the session's turn; its pending permission requests are answered `cancelled` (the spec's
        rule), whatever the editor's prompt was doing."""
        await self._agent.cancel(s.CancelNotification(session_id=session_id))
        self._dispatcher.cancel_permissions(session_id)

    # ---- capability rules ----------------------------------------------------------------------------

    def mcp_left_out(self, servers: Sequence[s.McpServer]) -> list[tuple[str, str]]:
        return agent_capabilities.mcp_left_out(self.capabilities, servers)

    def _remember_session(
        self,
        session_id: str,
        modes: s.SessionModeState | None,
        config_options: Sequence[s.SessionConfigOption] | None,
    ) -> None:
        self._dispatcher.sessions.add(session_id)
        if modes is not None:
            self._sessions_with_modes.add(session_id)
        if config_options is not None:
            self._sessions_with_config.add(session_id)

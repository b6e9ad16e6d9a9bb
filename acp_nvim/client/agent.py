"""The ACP client role: a running agent, its handshake, typed calls to it, and dispatch of its requests.

`AgentConnection.launch` owns the process and the JSON-RPC connection for the lifetime of an `async with`
block; leaving the block stops the agent's whole process group. Calls the agent did not advertise are refused
here, before anything is sent, with `Unsupported`: the user learns what is missing instead of getting an
obscure error from the agent.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar

import anyio
import msgspec

from acp_nvim import __version__
from acp_nvim.client import failure, shell
from acp_nvim.client.diagnostics import Diagnostics, TroubleSink
from acp_nvim.client.editor import Editor, unknown_session
from acp_nvim.client.process import AgentCommand, AgentNotFound, AgentProcess, StartError, StderrTail
from acp_nvim.jsonrpc import (
    DEFAULT_MAX_MESSAGE_SIZE,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    Connection,
    ConnectionClosed,
    MessageHook,
    MethodNotFound,
    RpcError,
)
from acp_nvim.protocol import codec
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema as s

__all__ = [
    "AgentCommand",
    "AgentConnection",
    "AgentExited",
    "AgentNotFound",
    "HandshakeFailed",
    "HandshakeTimeout",
    "InvalidAnswer",
    "StartError",
    "Unsupported",
    "VersionMismatch",
]

log = logging.getLogger("acp_nvim.client")

T = TypeVar("T")

CLIENT_INFO = s.Implementation(name="acp.nvim", title="acp.nvim", version=__version__)
DEFAULT_HANDSHAKE_TIMEOUT = 30.0


class AgentExited(StartError):
    pass


class HandshakeTimeout(StartError):
    pass


class VersionMismatch(StartError):
    pass


class HandshakeFailed(StartError):
    pass


class InvalidAnswer(RpcError):
    """The agent answered one of our requests with a result of the wrong shape (detected here, not sent)."""

    def __init__(self, message: str) -> None:
        super().__init__(INTERNAL_ERROR, message)


class Unsupported(Exception):
    """A call the agent did not advertise; refused locally, nothing was sent."""


TrafficHook = MessageHook


class AgentConnection:
    """A live, initialized agent. Created only by `launch`."""

    def __init__(
        self,
        process: AgentProcess,
        connection: Connection,
        dispatcher: _Dispatcher,
        init: s.InitializeResponse,
    ) -> None:
        self.process = process
        self.connection = connection
        self.editor = dispatcher.editor
        self.diagnostics = dispatcher.diagnostics
        self._dispatcher = dispatcher
        self.init = init
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

    # ---- lifecycle -----------------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def launch(
        cls,
        command: AgentCommand,
        editor: Editor,
        *,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
        client_info: s.Implementation = CLIENT_INFO,
        max_message_size: int | None = None,
        on_message: TrafficHook | None = None,
        on_protocol_error: Callable[[str], None] | None = None,
        on_trouble: TroubleSink | None = None,
    ) -> AsyncIterator[AgentConnection]:
        """Start the agent and complete `initialize`; raises a `StartError` with a one-line reason.

        `on_protocol_error` sees every bad line (for logs); `on_trouble` gets the few messages meant for the
        user, one per kind of trouble and then rate-limited summaries (see `Diagnostics`).
        """
        try:
            async with cls._launch(
                command,
                editor,
                handshake_timeout,
                client_info,
                max_message_size,
                on_message,
                on_protocol_error,
                on_trouble,
            ) as agent:
                yield agent
        except BaseExceptionGroup as group:
            raise _sole_exception(group) from None

    @classmethod
    @asynccontextmanager
    async def _launch(
        cls,
        command: AgentCommand,
        editor: Editor,
        handshake_timeout: float,
        client_info: s.Implementation,
        max_message_size: int | None,
        on_message: TrafficHook | None,
        on_protocol_error: Callable[[str], None] | None,
        on_trouble: TroubleSink | None,
    ) -> AsyncIterator[AgentConnection]:
        async with anyio.create_task_group() as tasks:
            process = await AgentProcess.spawn(command, tasks)
            diagnostics = Diagnostics(command.name, on_trouble or _no_trouble_sink)
            try:
                dispatcher = _Dispatcher(editor, diagnostics)

                def protocol_error(message: str) -> None:
                    diagnostics.protocol_error(message)
                    if on_protocol_error is not None:
                        on_protocol_error(message)

                async def closed_reason() -> str:
                    # EOF usually comes a moment before the exit status: wait for it briefly so the user
                    # sees the code and the stderr tail, not just "connection closed".
                    with anyio.move_on_after(1.0):
                        await process.wait()
                    return process.exit_reason()

                connection = Connection(
                    process.stdout,
                    process.stdin,
                    on_request=dispatcher.on_request,
                    on_notification=dispatcher.on_notification,
                    closed_reason=closed_reason,
                    on_message=on_message,
                    on_protocol_error=protocol_error,
                    peer_name=f"agent {command.name}",
                    cancel_method=m.CANCEL_REQUEST,
                    max_message_size=(
                        DEFAULT_MAX_MESSAGE_SIZE if max_message_size is None else max_message_size
                    ),
                )
                tasks.start_soon(connection.serve)
                init = await _initialize(
                    connection, editor, client_info, handshake_timeout, command, process.stderr
                )
                agent = cls(process, connection, dispatcher, init)
                diagnostics.agent_name = agent.display_name
                log.info(
                    "initialized %s (protocol %d, capabilities %s)",
                    agent.display_name,
                    agent.protocol_version,
                    codec.encode(agent.capabilities).decode(),
                )
                yield agent
            finally:
                diagnostics.flush()
                await process.stop()
                tasks.cancel_scope.cancel()

    # ---- typed calls ---------------------------------------------------------------------------------

    async def _call(self, method: str, params: msgspec.Struct, result_type: type[T]) -> T:
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

    async def authenticate(self, method_id: str) -> s.AuthenticateResponse:
        if not any(method.id == method_id for method in self.auth_methods):
            raise Unsupported(f"{self.display_name} offers no authentication method {method_id!r}")
        return await self._call(
            m.AUTHENTICATE, s.AuthenticateRequest(method_id=method_id), s.AuthenticateResponse
        )

    async def logout(self) -> s.LogoutResponse:
        auth = self.capabilities.auth
        if auth is None or auth.logout is None:
            raise Unsupported(f"{self.display_name} does not support logout")
        return await self._call(m.LOGOUT, s.LogoutRequest(), s.LogoutResponse)

    async def new_session(
        self,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.NewSessionResponse:
        request = s.NewSessionRequest(
            cwd=cwd,
            mcp_servers=self._allowed_mcp_servers(mcp_servers),
            additional_directories=self._additional_directories(additional_directories),
        )
        with self._dispatcher.opening_session():
            response = await self._call(m.SESSION_NEW, request, s.NewSessionResponse)
            self._remember_session(response.session_id, response.modes, response.config_options)
        return response

    async def load_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.LoadSessionResponse:
        if not self.capabilities.load_session:
            raise Unsupported(f"{self.display_name} cannot load sessions")
        request = s.LoadSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=self._allowed_mcp_servers(mcp_servers),
            additional_directories=self._additional_directories(additional_directories),
        )
        # The agent replays the history before it answers: those updates must reach the editor.
        with self._dispatcher.opening_session(session_id):
            response = await self._call(m.SESSION_LOAD, request, s.LoadSessionResponse)
            self._remember_session(session_id, response.modes, response.config_options)
        return response

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: Sequence[s.McpServer] = (),
        additional_directories: Sequence[str] | None = None,
    ) -> s.ResumeSessionResponse:
        self._require_session_capability("resume", "resume sessions")
        request = s.ResumeSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=self._allowed_mcp_servers(mcp_servers),
            additional_directories=self._additional_directories(additional_directories),
        )
        with self._dispatcher.opening_session(session_id):
            response = await self._call(m.SESSION_RESUME, request, s.ResumeSessionResponse)
            self._remember_session(session_id, response.modes, response.config_options)
        return response

    async def close_session(self, session_id: str) -> s.CloseSessionResponse:
        self._require_session_capability("close", "close sessions")
        return await self._call(
            m.SESSION_CLOSE, s.CloseSessionRequest(session_id=session_id), s.CloseSessionResponse
        )

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None
    ) -> s.ListSessionsResponse:
        self._require_session_capability("list", "list sessions")
        return await self._call(
            m.SESSION_LIST, s.ListSessionsRequest(cwd=cwd, cursor=cursor), s.ListSessionsResponse
        )

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
        self._require_session_capability("delete", "delete sessions")
        return await self._call(
            m.SESSION_DELETE, s.DeleteSessionRequest(session_id=session_id), s.DeleteSessionResponse
        )

    async def set_mode(self, session_id: str, mode_id: str) -> s.SetSessionModeResponse:
        if session_id not in self._sessions_with_modes:
            raise Unsupported(f"{self.display_name} offers no modes for this session")
        return await self._call(
            m.SESSION_SET_MODE,
            s.SetSessionModeRequest(session_id=session_id, mode_id=mode_id),
            s.SetSessionModeResponse,
        )

    async def set_config_option(
        self, session_id: str, request: s.SetSessionConfigOptionRequest
    ) -> s.SetSessionConfigOptionResponse:
        if session_id not in self._sessions_with_config:
            raise Unsupported(f"{self.display_name} offers no configuration options for this session")
        return await self._call(m.SESSION_SET_CONFIG_OPTION, request, s.SetSessionConfigOptionResponse)

    async def prompt(self, session_id: str, prompt: Sequence[s.ContentBlock]) -> s.PromptResponse:
        self._check_prompt(prompt)
        try:
            return await self._call(
                m.SESSION_PROMPT,
                s.PromptRequest(session_id=session_id, prompt=list(prompt)),
                s.PromptResponse,
            )
        finally:
            # The user learns how much went wrong during the turn when it ends, not some seconds later.
            self.diagnostics.flush()

    async def cancel(self, session_id: str) -> None:
        """Cancel the session's turn; its pending permission requests are answered `cancelled` (the spec's
        rule), whatever the editor's prompt was doing."""
        await self.connection.notify(m.SESSION_CANCEL, s.CancelNotification(session_id=session_id))
        self._dispatcher.cancel_permissions(session_id)

    # ---- capability rules ----------------------------------------------------------------------------

    def _session_capabilities(self) -> s.SessionCapabilities:
        return self.capabilities.session_capabilities or s.SessionCapabilities()

    def _require_session_capability(self, name: str, what: str) -> None:
        if getattr(self._session_capabilities(), name, None) is None:
            raise Unsupported(f"{self.display_name} cannot {what}")

    def _additional_directories(self, directories: Sequence[str] | None) -> list[str] | None:
        # Sent only when advertised: an agent that does not know the field may reject the request.
        if not directories or self._session_capabilities().additional_directories is None:
            return None
        return list(directories)

    def mcp_left_out(self, servers: Sequence[s.McpServer]) -> list[tuple[str, str]]:
        """The servers a session request leaves out, with why: http/sse ones the agent did not advertise
        (stdio is always allowed)."""
        mcp = self.capabilities.mcp_capabilities or s.McpCapabilities()
        left_out: list[tuple[str, str]] = []
        for server in servers:
            if isinstance(server, s.McpServerHttp) and not mcp.http:
                left_out.append((server.name, "no http MCP support"))
            elif isinstance(server, s.McpServerSse) and not mcp.sse:
                left_out.append((server.name, "no sse MCP support"))
        return left_out

    def _allowed_mcp_servers(self, servers: Sequence[s.McpServer]) -> list[s.McpServer]:
        left_out = {name for name, _ in self.mcp_left_out(servers)}
        for name in left_out:
            log.warning("MCP server %s left out: the agent does not support its transport", name)
        return [server for server in servers if server.name not in left_out]

    def _check_prompt(self, prompt: Sequence[s.ContentBlock]) -> None:
        caps = self.capabilities.prompt_capabilities or s.PromptCapabilities()
        for block in prompt:
            if isinstance(block, s.ContentBlockImage) and not caps.image:
                raise Unsupported(f"{self.display_name} does not accept images")
            if isinstance(block, s.ContentBlockAudio) and not caps.audio:
                raise Unsupported(f"{self.display_name} does not accept audio")
            if isinstance(block, s.ContentBlockResource) and not caps.embedded_context:
                raise Unsupported(f"{self.display_name} does not accept embedded resources")

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


def _sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one real error a task group wrapped, so callers can `except StartError` as usual."""
    errors = group.exceptions
    while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
        errors = errors[0].exceptions
    return errors[0] if len(errors) == 1 else group


def _with_terminal_output(caps: s.ClientCapabilities) -> s.ClientCapabilities:
    """Asks for Zed's display-only terminal (`_meta.terminal_output`, with pieces marked as such:
    `terminal_output_delta`): codex-acp and claude-agent-acp then stream the output of the commands they run
    themselves as pieces, not as a text resent whole; the session reducer shows both (client/shell.py)."""
    meta = {**(caps.meta or {}), shell.TERMINAL_OUTPUT_META: True, shell.TERMINAL_OUTPUT_DELTA_META: True}
    return msgspec.structs.replace(caps, meta=meta)


async def _initialize(
    connection: Connection,
    editor: Editor,
    client_info: s.Implementation,
    timeout: float,
    command: AgentCommand,
    stderr: StderrTail,
) -> s.InitializeResponse:
    mark = stderr.count
    request = s.InitializeRequest(
        protocol_version=m.PROTOCOL_VERSION,
        client_capabilities=_with_terminal_output(editor.client_capabilities()),
        client_info=client_info,
    )
    try:
        with anyio.fail_after(timeout):
            raw = await connection.request(m.INITIALIZE, request)
    except TimeoutError:
        raise HandshakeTimeout(
            f"agent {command.name} did not answer initialize within {timeout:g} s"
        ) from None
    except ConnectionClosed as err:
        raise AgentExited(str(err)) from None
    except RpcError as err:
        await failure.note_stderr(err, stderr, mark)
        raise HandshakeFailed(f"agent {command.name} refused initialize: {failure.describe(err)}") from None
    try:
        response = codec.decode(raw, s.InitializeResponse)
    except msgspec.ValidationError as err:
        raise HandshakeFailed(f"agent {command.name} sent an invalid initialize answer: {err}") from None
    except RecursionError:
        raise HandshakeFailed(
            f"agent {command.name} sent an initialize answer nested too deeply to decode"
        ) from None
    if response.protocol_version != m.PROTOCOL_VERSION:
        raise VersionMismatch(
            f"agent {command.name} speaks ACP protocol version {response.protocol_version}; "
            f"acp.nvim supports version {m.PROTOCOL_VERSION}"
        )
    return response


EditorCall = Callable[[Any], Awaitable[msgspec.Struct]]


def _no_trouble_sink(message: str) -> None:
    pass


class _Dispatcher:
    """Routes the agent's requests and notifications to the editor, decoding them by the method table."""

    def __init__(self, editor: Editor, diagnostics: Diagnostics) -> None:
        self.editor = editor
        self.diagnostics = diagnostics
        # Sessions this client opened: updates for any other are an agent bug and go no further.
        self.sessions: set[str] = set()
        # While a session/new is in flight its id is not known yet, and its first updates can be read before
        # the caller resumes with the answer: until then, updates for any session are let through.
        self._opening = 0
        self._permission_scopes: dict[str, set[anyio.CancelScope]] = {}
        caps = editor.client_capabilities()
        fs = caps.fs or s.FileSystemCapabilities()
        # Only what we advertised is served: an agent calling anything else gets "method not found".
        handlers: dict[str, EditorCall] = {m.SESSION_REQUEST_PERMISSION: self._request_permission}
        if fs.read_text_file:
            handlers[m.FS_READ_TEXT_FILE] = editor.read_text_file
        if fs.write_text_file:
            handlers[m.FS_WRITE_TEXT_FILE] = editor.write_text_file
        if caps.terminal:
            handlers[m.TERMINAL_CREATE] = editor.create_terminal
            handlers[m.TERMINAL_OUTPUT] = editor.terminal_output
            handlers[m.TERMINAL_WAIT_FOR_EXIT] = editor.wait_for_terminal_exit
            handlers[m.TERMINAL_KILL] = editor.kill_terminal
            handlers[m.TERMINAL_RELEASE] = editor.release_terminal
        elicitation = caps.elicitation or s.ElicitationCapabilities()
        self._elicitation_modes = {
            mode for mode, cap in (("form", elicitation.form), ("url", elicitation.url)) if cap is not None
        }
        if self._elicitation_modes:
            handlers[m.ELICITATION_CREATE] = self._create_elicitation
        self._handlers = handlers

    async def on_request(self, method: str, params: msgspec.Raw | None) -> object:
        handler = self._handlers.get(method)
        spec = m.METHODS.get(method)
        if handler is None or spec is None:
            raise MethodNotFound.for_method(method)
        # A msgspec.ValidationError escaping here is answered -32602 with the field path by the connection.
        decoded = codec.decode(params, spec.params)
        return await handler(decoded)

    async def _until_turn_cancelled(
        self, session_id: str, ask: Callable[[], Awaitable[T]], cancelled: T
    ) -> T:
        """The user's answer from `ask`, or `cancelled` at once when the session's turn is cancelled."""
        scopes = self._permission_scopes.setdefault(session_id, set())
        with anyio.CancelScope() as scope:
            scopes.add(scope)
            try:
                return await ask()
            finally:
                scopes.discard(scope)
        return cancelled

    def _check_session(self, session_id: str) -> None:
        # While a session/new is in flight its id is unknown here: the editor, which knows its sessions,
        # answers for it then.
        if session_id not in self.sessions and not self._opening:
            raise unknown_session(session_id)

    async def _request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        # An error, not `cancelled`: nothing was cancelled, the agent named a session that is not open.
        self._check_session(params.session_id)
        return await self._until_turn_cancelled(
            params.session_id,
            lambda: self.editor.request_permission(params),
            s.RequestPermissionResponse(outcome=s.RequestPermissionOutcomeCancelled()),
        )

    async def _create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        mode = "url" if isinstance(params, s.CreateElicitationRequestUrl) else "form"
        if mode not in self._elicitation_modes:
            raise RpcError(INVALID_PARAMS, f"{mode} elicitation is not supported by this client")
        session_id = params.session_id
        if session_id is None:
            return await self.editor.create_elicitation(params)
        self._check_session(session_id)
        # Like a permission request, an elicitation of a session whose turn is cancelled is answered
        # `cancel` at once.
        return await self._until_turn_cancelled(
            session_id, lambda: self.editor.create_elicitation(params), s.CreateElicitationResponseCancel()
        )

    @contextmanager
    def opening_session(self, session_id: str | None = None) -> Iterator[None]:
        """Around a request that opens a session. A known id (load, resume) counts as open at once: a load
        replays the history before it answers. An unknown one (new) lets every session through meanwhile."""
        if session_id is None:
            self._opening += 1
            try:
                yield
            finally:
                self._opening -= 1
            return
        known_before = session_id in self.sessions
        self.sessions.add(session_id)
        try:
            yield
        except BaseException:
            if not known_before:
                self.sessions.discard(session_id)
            raise

    def cancel_permissions(self, session_id: str) -> None:
        for scope in self._permission_scopes.get(session_id, ()):
            scope.cancel()

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method != m.SESSION_UPDATE:
            await self._other_notification(method, params)
            return
        # session/update, the stream's bulk: tested first, handled inline.
        try:
            notification = codec.decode_session_update(params)
        except msgspec.ValidationError as err:
            log.warning("malformed session/update dropped: %s", err)
            self.diagnostics.report("malformed_update", str(err))
            return
        if notification is None:
            return
        if notification.session_id not in self.sessions and not self._opening:
            log.debug("update for unknown session %r dropped", notification.session_id)
            self.diagnostics.report("unknown_session")
            return
        await self.editor.session_update(notification)

    async def _other_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == m.ELICITATION_COMPLETE and "url" in self._elicitation_modes:
            try:
                complete = codec.decode(params, s.CompleteElicitationNotification)
            except msgspec.ValidationError as err:
                log.warning("malformed elicitation/complete dropped: %s", err)
                return
            await self.editor.complete_elicitation(complete)
            return
        log.debug("ignored notification %s", method)

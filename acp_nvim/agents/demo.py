"""The built-in offline demo agent: `python -m acp_nvim.agents.demo`.

Each prompt turn is a short, deterministic show of everything a client renders: a streamed reply that echoes
the prompt, a thought, a plan updated as it goes, a tool call reading a file through `fs/read_text_file`, an
edit behind `session/request_permission` (with its diff) written through `fs/write_text_file`, and a command
run in a client terminal (`terminal/create` … `terminal/release`). Steps the client did not advertise are
skipped with a message. `session/cancel` ends the turn at once with stopReason "cancelled".

Environment: `ACP_DEMO_DELAY_MS` (default 20) is the pause between streamed words; 0 in tests.
Logs go to stderr; stdout carries only the protocol.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TypeVar

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_nvim import __version__
from acp_nvim.agents.demo_tour import DemoSession, Turn, TurnCancelled
from acp_nvim.jsonrpc import Connection, InvalidParams, InvalidRequest, MethodNotFound
from acp_nvim.jsonrpc.stdio import protocol_stdio
from acp_nvim.protocol import PROTOCOL_VERSION, codec, schema
from acp_nvim.protocol import methods as m

log = logging.getLogger("acp_nvim.agents.demo")
_T = TypeVar("_T")

AGENT_NAME = "acp-nvim-demo"
AGENT_TITLE = "acp.nvim demo agent"
DEFAULT_DELAY_MS = 20


def _delay_from_env() -> float:
    raw = os.environ.get("ACP_DEMO_DELAY_MS", "")
    try:
        return max(0.0, float(raw)) / 1000 if raw else DEFAULT_DELAY_MS / 1000
    except ValueError:
        log.warning("ignoring ACP_DEMO_DELAY_MS=%r (not a number)", raw)
        return DEFAULT_DELAY_MS / 1000


def _prompt_text(blocks: list[schema.ContentBlock]) -> str:
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, schema.ContentBlockText):
            parts.append(block.text)
        elif isinstance(block, schema.ContentBlockResourceLink):
            parts.append(f"@{block.name}")
        elif isinstance(block, schema.ContentBlockResource):
            parts.append(f"@{getattr(block.resource, 'uri', 'resource')}")
    return " ".join(" ".join(parts).split())


MODES = schema.SessionModeState(
    current_mode_id="ask",
    available_modes=[
        schema.SessionMode(id="ask", name="Ask", description="Asks before every edit"),
        schema.SessionMode(id="code", name="Code", description="Same show, different badge"),
    ],
)


class DemoAgent:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.conn: Connection | None = None
        self.caps = schema.ClientCapabilities()
        self.sessions: dict[str, DemoSession] = {}
        self.created = 0

    # --- wiring

    async def on_request(self, method: str, params: msgspec.Raw | None) -> object:
        if method == m.INITIALIZE:
            return self.initialize(self._params(params, schema.InitializeRequest))
        if method == m.AUTHENTICATE:
            self._params(params, schema.AuthenticateRequest)
            return schema.AuthenticateResponse()
        if method == m.SESSION_NEW:
            return self.new_session(self._params(params, schema.NewSessionRequest))
        if method == m.SESSION_SET_MODE:
            return self.set_mode(self._params(params, schema.SetSessionModeRequest))
        if method == m.SESSION_PROMPT:
            return await self.prompt(self._params(params, schema.PromptRequest))
        raise MethodNotFound.for_method(method)

    async def on_notification(self, method: str, params: msgspec.Raw | None) -> None:
        if method == m.SESSION_CANCEL:
            request = self._params(params, schema.CancelNotification)
            session = self.sessions.get(request.session_id)
            if session is not None and session.turn_scope is not None:
                log.info("cancelling the turn of %s", request.session_id)
                session.turn_scope.cancel()
            return
        log.debug("ignoring notification %s", method)

    @staticmethod
    def _params(params: msgspec.Raw | None, type_: type[_T]) -> _T:
        return codec.decode(params, type_)

    def _session(self, session_id: str) -> DemoSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise InvalidParams(f"Invalid params: unknown session {session_id!r}", {"sessionId": session_id})
        return session

    # --- methods

    def initialize(self, request: schema.InitializeRequest) -> schema.InitializeResponse:
        self.caps = request.client_capabilities
        info = request.client_info
        log.info("initialize from %s (protocol %d)", info.name if info else "?", request.protocol_version)
        # v1 is all we speak: the spec has the agent answer its latest version when it lacks the client's.
        return schema.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            # Embedded context lets the client attach a selection as a resource block; the reply names it.
            agent_capabilities=schema.AgentCapabilities(
                load_session=False, prompt_capabilities=schema.PromptCapabilities(embedded_context=True)
            ),
            agent_info=schema.Implementation(name=AGENT_NAME, title=AGENT_TITLE, version=__version__),
        )

    def new_session(self, request: schema.NewSessionRequest) -> schema.NewSessionResponse:
        self.created += 1
        session_id = f"demo-session-{self.created}"
        self.sessions[session_id] = DemoSession(session_id, Path(request.cwd))
        return schema.NewSessionResponse(session_id=session_id, modes=MODES)

    def set_mode(self, request: schema.SetSessionModeRequest) -> schema.SetSessionModeResponse:
        session = self._session(request.session_id)
        if request.mode_id not in {mode.id for mode in MODES.available_modes}:
            raise InvalidParams(
                f"Invalid params: unknown mode {request.mode_id!r}", {"modeId": request.mode_id}
            )
        session.mode = request.mode_id
        return schema.SetSessionModeResponse()

    async def prompt(self, request: schema.PromptRequest) -> schema.PromptResponse:
        session = self._session(request.session_id)
        if session.turn_scope is not None:
            raise InvalidRequest("Invalid request: a prompt turn is already running in this session")
        session.turns += 1
        stop = "end_turn"
        with anyio.CancelScope() as scope:
            session.turn_scope = scope
            try:
                await Turn(self, session, _prompt_text(request.prompt)).run()
            except TurnCancelled:
                stop = "cancelled"
            finally:
                session.turn_scope = None
        if scope.cancelled_caught:
            stop = "cancelled"
        log.info("turn %d of %s ended: %s", session.turns, session.session_id, stop)
        return schema.PromptResponse(stop_reason=stop)

    # --- talking to the client

    @property
    def connection(self) -> Connection:
        assert self.conn is not None
        return self.conn

    async def update(self, session: DemoSession, update: schema.SessionUpdate) -> None:
        await self.connection.notify(
            m.SESSION_UPDATE, schema.SessionNotification(session_id=session.session_id, update=update)
        )

    async def call(self, method: str, params: object, result_type: type[_T]) -> _T:
        raw = await self.connection.request(method, params)
        return codec.decode_result(raw, result_type)


async def serve(receive: ByteReceiveStream, send: ByteSendStream, delay: float) -> None:
    agent = DemoAgent(delay)
    agent.conn = Connection(
        receive,
        send,
        on_request=agent.on_request,
        on_notification=agent.on_notification,
        peer_name="client",
        cancel_method=m.CANCEL_REQUEST,
    )
    await agent.conn.serve()


def main() -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(asctime)s acp-nvim-demo %(levelname)s %(message)s"
    )
    receive, send = protocol_stdio()
    try:
        anyio.run(serve, receive, send, _delay_from_env())
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A minimal echo agent on the official Python SDK (`agent-client-protocol`), for recording wire transcripts.

Run: ``.venv/bin/python tests/agents/echo_agent.py``. Every prompt turn answers "Client sent:" followed by
each content block the client sent, then ends the turn. It also has what agents written on the SDK often
have and the client must survive: a stub ``session/list`` that answers ``null`` (the SDK sends whatever a
handler returns, so an unimplemented stub puts a result on the wire that the schema does not allow) and an
extension method handler. Logs go to stderr.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any, cast

import acp
from acp import helpers
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
)

log = logging.getLogger("echo_agent")


class EchoAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.session_count = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        log.info("initialize, protocol version %s", protocol_version)
        return InitializeResponse(
            protocol_version=1,
            agent_capabilities=AgentCapabilities(),
            agent_info=Implementation(name="echo-agent", title="Echo Agent", version="0.1.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        session_id = str(self.session_count)
        self.session_count += 1
        log.info("new session %s in %s", session_id, cwd)
        return NewSessionResponse(session_id=session_id)

    async def list_sessions(self, **kwargs: Any) -> None:
        # A stub left unimplemented on purpose: see the module docstring.
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        log.info("prompt for session %s", session_id)
        await self.conn.session_update(session_id, helpers.update_agent_message_text("Client sent:"))
        for block in prompt:
            await self.conn.session_update(session_id, helpers.update_agent_message(block))
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log.info("cancel for session %s", session_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"method": method, "params": params}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("extension notification %s", method)


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="echo_agent %(levelname)s %(message)s")
    asyncio.run(acp.run_agent(cast(acp.Agent, EchoAgent())))
    return 0


if __name__ == "__main__":
    sys.exit(main())

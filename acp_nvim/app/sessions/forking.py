"""`:AcpFork` and the chat's fork key: the session forked into a new chat (`session/fork`, unstable), where
the agent advertises `sessionCapabilities.fork`; elsewhere the user is told and nothing is sent.

The fork carries the whole conversation: `ForkSessionRequest` names the session and nothing inside it, so
the key on a message forks the chat's session as `:AcpFork` does. Its chat shows the history as far as the
agent replays it (opencode replays the last messages before it answers; codex-acp 2.6 replays nothing and
keeps the context to itself), then a line saying where it came from.
"""

from __future__ import annotations

import logging

import anyio

from acp_nvim.app.chat.chats import Chats
from acp_nvim.app.port import ERROR, WARN, NeovimPort
from acp_nvim.app.runs import NO_AGENT_RUNNING, AgentRun, ChatSession, Runs
from acp_nvim.app.sessions.asked import open_asked
from acp_nvim.app.sessions.opening import SESSION_TIMEOUT, SessionCommands
from acp_nvim.app.sessions.turns import Turns
from acp_nvim.app.status import StatusBoard
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.forking")


class Forks:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        status: StatusBoard,
        chats: Chats,
        sessions: SessionCommands,
        turns: Turns,
    ) -> None:
        self._runs = runs
        self._port = port
        self._status = status
        self._chats = chats
        self._sessions = sessions
        self._turns = turns

    async def fork(self, session_id: str | None) -> None:
        """Forks the session of `session_id`'s chat (else the current one) into a new chat, made current."""
        current = self._runs.current(session_id)
        source = current.session
        if source is None:
            self._port.notify(current.missing or "", WARN)
            return
        run = self._runs.agents.get(source.agent)
        agent = run.connection if run is not None else None
        if run is None or agent is None:
            self._port.notify(NO_AGENT_RUNNING, WARN)
            return
        name = run.display_name
        if not agent.offers("fork"):
            self._port.notify(f"{name} cannot fork sessions (it does not offer session/fork)", WARN)
            return
        # The user asked for it: a prompt from no chat meanwhile waits for it (`asked.py`).
        fork = lambda: self._fork(run, agent, source)  # noqa: E731
        directories = self._sessions.planned(run, source.directories)
        await open_asked(self._runs, self._turns, run.name, source.cwd, fork, directories=directories)

    async def _fork(self, run: AgentRun, agent: AgentConnection, source: ChatSession) -> ChatSession | None:
        name = run.display_name
        directories = self._sessions.directories(run, source.directories)
        servers = self._sessions.mcp_servers(run, agent, source.cwd, directories)
        try:
            # What the agent replays before it answers is kept for the chat opened with the answer.
            with self._runs.expecting_session(), anyio.fail_after(SESSION_TIMEOUT):
                response = await agent.fork_session(source.session_id, source.cwd, servers, directories)
        except ConnectionClosed:
            return None  # the run task reports the exit
        except TimeoutError:
            self._port.notify(f"{name} did not fork the session within {SESSION_TIMEOUT:g} s", ERROR)
            return None
        except (RpcError, Unsupported) as err:
            why = failure.describe(err) if isinstance(err, RpcError) else str(err)
            self._port.notify(f"{name} could not fork the session: {why}", ERROR)
            return None
        if response.session_id in self._runs.sessions:
            self._port.notify(f"{name} answered the fork with a session open here already", ERROR)
            return None
        sent = directories if _has_directories(agent.capabilities) else []
        forked = self._chats.open(run, response.session_id, source.cwd, sent)
        forked.state.set_modes(response.modes)
        forked.state.set_config_options(response.config_options, announce=False)
        origin = source.state.title or source.session_id
        replayed = "above is what the agent replayed of it" if forked.state.items else "is not replayed"
        forked.state.add_notice(f"Forked from {origin}: its history {replayed}; the agent keeps its context")
        forked.chat.flush()
        self._status.push()
        log.info("forked %s into %s", source.session_id, response.session_id)
        return forked


def _has_directories(capabilities: s.AgentCapabilities) -> bool:
    caps = capabilities.session_capabilities
    return caps is not None and caps.additional_directories is not None

"""Opening sessions: new ones, the agent's stored ones (listed, then loaded or resumed), deleting them.

What a session is opened with — cwd, MCP servers, additional directories — comes from the agent's spec and
`:AcpAddDir`; load and resume send the full list again, as the protocol asks. A stored session is loaded when
the agent can (its history is replayed into a new chat, created before the request so no replayed update is
lost), else resumed (no replay); `sessions.prefer_resume` turns the preference around.

After a restart (`:AcpRestart`, also after the agent died) the sessions that were open are reopened the same
way, in their own chats: a load empties the chat and replays into it, a resume keeps the chat as it was and
says so. An agent that can do neither gets a new session, and the chats say that too.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime
from typing import Literal

import anyio

from acp_nvim.app.auth import AuthAbandoned, AuthFlow
from acp_nvim.app.chat.chats import Chats
from acp_nvim.app.mcp import offer
from acp_nvim.app.port import ERROR, INFO, WARN, Choice, NeovimPort
from acp_nvim.app.runs import AgentRun, ChatSession, Runs
from acp_nvim.app.sessions import extras
from acp_nvim.app.sessions.asked import open_asked, reopen_asked
from acp_nvim.app.sessions.extras import Action
from acp_nvim.app.sessions.modes import ModeCommands
from acp_nvim.app.sessions.turns import Turns
from acp_nvim.app.status import StatusBoard
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.opening")

# How a session of an ended run comes back: session/load (its history replayed) or session/resume.
ReloadMode = Literal["load", "resume"]

SESSION_TIMEOUT = 60.0


def _has(agent: AgentConnection, capability: str) -> bool:
    caps = agent.capabilities.session_capabilities or s.SessionCapabilities()
    return getattr(caps, capability, None) is not None


def _when(updated_at: str | None) -> str:
    if not updated_at:
        return ""
    try:
        return datetime.fromisoformat(updated_at).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return updated_at


def _failure(err: Exception) -> str:
    """Why a load or resume failed, for the user: the agent's message, or what went wrong on our side (a
    timeout's str() is empty)."""
    return failure.describe(err) if isinstance(err, RpcError) else str(err) or "timed out"


def _reload_mode(run: AgentRun, agent: AgentConnection) -> ReloadMode | None:
    """How a stored session is reopened on this agent: load (history replayed) when it can, resume (no
    replay) when it can only do that or `sessions.prefer_resume` says so; None when it can do neither."""
    can_load, can_resume = bool(agent.capabilities.load_session), _has(agent, "resume")
    if can_resume and (run.spec.prefer_resume or not can_load):
        return "resume"
    return "load" if can_load else None


def session_label(info: s.SessionInfo, open_here: bool) -> str:
    parts = [info.title or "(untitled)", _when(info.updated_at), info.session_id[:8]]
    label = "  ".join(part for part in parts if part)
    return label + ("  [open]" if open_here else "")


class SessionCommands:
    def __init__(
        self,
        runs: Runs,
        port: NeovimPort,
        status: StatusBoard,
        chats: Chats,
        auth: AuthFlow,
        modes: ModeCommands,
        turns: Turns,
    ) -> None:
        self._runs = runs
        self._port = port
        self._status = status
        self._chats = chats
        self._auth = auth
        self._modes = modes
        self._turns = turns
        # :AcpAddDir, for sessions opened from now on (no protocol method changes an open session's list).
        self.extra_directories: list[str] = []

    # ---- what sessions are opened with -------------------------------------------------------------

    def directories(self, run: AgentRun, also: list[str] | None = None) -> list[str]:
        wanted = [*(also or []), *run.spec.additional_directories, *self.extra_directories]
        seen: list[str] = []
        for directory in wanted:
            path = os.path.abspath(os.path.expanduser(directory))
            if path not in seen:
                seen.append(path)
        return seen

    def planned(self, run: AgentRun, also: list[str] | None = None) -> list[str]:
        """The additional directories a session opened now gets: all asked for until the agent says whether
        it takes them."""
        wanted = self.directories(run, also)
        return wanted if run.connection is None else self._sent_directories(run.connection, wanted)

    def _sent_directories(self, agent: AgentConnection, directories: list[str]) -> list[str]:
        # What the client layer really sends: nothing unless the agent advertised the capability.
        return directories if _has(agent, "additional_directories") else []

    def mcp_servers(
        self, run: AgentRun, agent: AgentConnection, cwd: str, directories: list[str]
    ) -> list[s.McpServer]:
        """The user's servers, after the Neovim MCP server of this session (its folders: `cwd`, `directories`)
        when it is offered (`opts.mcp.enabled`)."""
        servers = [server.to_protocol() for server in run.spec.mcp_servers]
        if run.spec.neovim_mcp is not None and all(server.name != offer.NAME for server in servers):
            roots = self._sent_directories(agent, directories)
            servers.insert(0, offer.server(run.spec.neovim_mcp, cwd, roots))
        left_out = agent.mcp_left_out(servers)
        if left_out:
            self._port.notify(
                f"{run.display_name} cannot use these MCP servers: "
                + "; ".join(f"{name} ({why})" for name, why in left_out),
                WARN,
            )
        return servers

    # ---- new ---------------------------------------------------------------------------------------

    async def new(self, run: AgentRun, *, first: bool = False) -> ChatSession | None:
        cwd = run.spec.cwd or os.getcwd()
        directories = self.directories(run)
        servers: list[s.McpServer] | None = None

        async def create(agent: AgentConnection) -> s.NewSessionResponse:
            nonlocal servers
            if servers is None:
                servers = self.mcp_servers(run, agent, cwd, directories)
            with anyio.fail_after(SESSION_TIMEOUT):
                return await agent.new_session(cwd, servers, directories)

        try:
            with self._runs.expecting_session():
                response = await self._auth.call(run, create)
        except (AuthAbandoned, Unsupported) as err:
            self._failed(run, f"{run.name}: {err}", first)
            return None
        except TimeoutError:
            self._failed(run, f"{run.name} did not create a session within {SESSION_TIMEOUT:g} s", first)
            return None
        except ConnectionClosed:
            return None  # the run task reports the exit
        except RpcError as err:
            self._failed(run, f"{run.name} refused to create a session: {failure.describe(err)}", first)
            return None
        agent = run.connection
        if agent is None:
            return None
        session = self._chats.open(run, response.session_id, cwd, self._sent_directories(agent, directories))
        self._opened(session, response)
        await self._modes.apply_defaults(session, run.spec)
        return session

    def _failed(self, run: AgentRun, message: str, first: bool) -> None:
        """Opening a session failed: the first one of a start puts the agent in "error" (it stays up, so
        :AcpAuth or :AcpNew can follow); later ones are only reported."""
        if first and run.lifecycle.starting:
            self._status.fail(run, message)
        else:
            self._port.notify(message, ERROR)

    def _opened(
        self,
        session: ChatSession,
        response: s.NewSessionResponse | s.LoadSessionResponse | s.ResumeSessionResponse,
        notice: str | None = None,
    ) -> None:
        """What every way of opening a session ends with: the modes and options it came with, shown."""
        session.state.set_modes(response.modes)
        session.state.set_config_options(response.config_options, announce=False)
        if notice:
            session.state.add_notice(notice)
        session.chat.flush()
        self._status.push()

    # ---- stored sessions ---------------------------------------------------------------------------

    async def command(self, run: AgentRun, action: Action, everywhere: bool) -> None:
        """:AcpSessions: list the agent's sessions (this directory's unless `everywhere`), pick one, open,
        delete, rename or archive it (the last two only where the agent advertises them: `extras.py`)."""
        agent = run.connection
        if agent is None:
            return
        name = run.display_name
        refusal = extras.refusal(name, action)
        if refusal is not None and not extras.offered(agent, action):
            self._port.notify(refusal, WARN)
            return
        if not _has(agent, "list"):
            self._port.notify(f"{name} cannot list sessions", WARN)
            return
        if action == "delete" and not _has(agent, "delete"):
            self._port.notify(f"{name} cannot delete sessions", WARN)
            return
        if action == "open" and not (agent.capabilities.load_session or _has(agent, "resume")):
            self._port.notify(f"{name} can neither load nor resume sessions", WARN)
            return
        cwd = None if everywhere else (run.spec.cwd or os.getcwd())
        try:
            infos = await agent.list_all_sessions(cwd)
        except (RpcError, ConnectionClosed) as err:
            self._port.notify(f"{name} could not list sessions: {err}", ERROR)
            return
        if not infos:
            where = "" if everywhere else f" in {cwd} (:AcpSessions all lists every directory)"
            self._port.notify(f"{name} has no sessions{where}", INFO)
            return
        choices = [
            Choice(info.session_id, session_label(info, info.session_id in self._runs.sessions))
            for info in infos
        ]
        picked = await self._port.select(
            f"{action.capitalize()} a session of {name}", choices, "acp_nvim.sessions"
        )
        info = next((info for info in infos if info.session_id == picked), None)
        if info is None:
            return
        if action == "delete":
            await self.delete(run, agent, info)
        elif action == "rename":
            await extras.rename(self._port, self._runs, self._status, run, agent, info)
        elif action == "archive":
            await extras.archive(self._port, self._chats, self._runs, run, agent, info)
        else:
            await self.open(run, info)

    async def delete(self, run: AgentRun, agent: AgentConnection, info: s.SessionInfo) -> None:
        try:
            await agent.delete_session(info.session_id)
        except (RpcError, ConnectionClosed, Unsupported) as err:
            self._port.notify(f"{run.display_name} could not delete the session: {err}", ERROR)
            return
        self._port.notify(f"deleted session {info.title or info.session_id}", INFO)

    async def open(self, run: AgentRun, info: s.SessionInfo) -> ChatSession | None:
        """Opens a stored session in a new chat: load (history replayed) or resume (no replay). The user asked
        for it: a prompt from no chat, or from its own chat, meanwhile waits for it (`asked.py`)."""
        cwd = info.cwd if os.path.isabs(info.cwd) else (run.spec.cwd or os.getcwd())
        opening = lambda: self._open(run, info, cwd)  # noqa: E731
        directories = self.planned(run, info.additional_directories)
        return await open_asked(self._runs, self._turns, run.name, cwd, opening, info.session_id, directories)

    async def _open(self, run: AgentRun, info: s.SessionInfo, cwd: str) -> ChatSession | None:
        agent = run.connection
        if agent is None:
            return None
        session_id = info.session_id
        known = self._runs.sessions.get(session_id)
        if known is not None:
            if known.agent == run.name:
                self._status.use(session_id)
                self._port.chat_open(session_id)
                return known
            self._port.notify(f"session {session_id} is already open with agent {known.agent}", ERROR)
            return None
        mode = _reload_mode(run, agent)
        if mode is None:
            self._port.notify(f"{run.display_name} can neither load nor resume sessions", WARN)
            return None
        directories = self.directories(run, info.additional_directories)
        servers = self.mcp_servers(run, agent, cwd, directories)
        session = self._chats.open(
            run, session_id, cwd, self._sent_directories(agent, directories), info.title
        )

        try:
            response = await self._reload(run, session, servers, directories, mode)
        except ConnectionClosed:
            return None
        except (AuthAbandoned, Unsupported, RpcError, TimeoutError) as err:
            why = _failure(err)
            self._chats.drop(session_id, destroy_chat=True)
            self._port.notify(f"{run.display_name} could not {mode} the session: {why}", ERROR)
            return None
        resumed = f"Resumed session {info.title or session_id} (its history is not replayed)"
        self._opened(session, response, resumed if mode == "resume" else None)
        return session

    async def _reload(
        self,
        run: AgentRun,
        session: ChatSession,
        servers: list[s.McpServer],
        directories: list[str],
        mode: ReloadMode,
    ) -> s.LoadSessionResponse | s.ResumeSessionResponse:
        """Loads or resumes a stored session, through the auth flow (which authenticates and retries when the
        agent asks for it); raises what the request raised."""
        session_id, cwd = session.session_id, session.cwd

        async def reopen(agent: AgentConnection) -> s.LoadSessionResponse | s.ResumeSessionResponse:
            with anyio.fail_after(SESSION_TIMEOUT):
                if mode == "resume":
                    return await agent.resume_session(session_id, cwd, servers, directories)
                return await agent.load_session(session_id, cwd, servers, directories)

        session.replaying = mode == "load"
        try:
            return await self._auth.call(run, reopen)
        finally:
            session.replaying = False

    # ---- after a restart ---------------------------------------------------------------------------

    async def reopen(
        self, run: AgentRun, sessions: list[ChatSession], *, fallback_new: bool = True
    ) -> ChatSession | None:
        """Reopens `sessions` (open when the agent stopped, died or restarted after a login) on the restarted
        agent; returns the first one reopened, or (with `fallback_new`) the new session opened instead."""
        agent = run.connection
        if agent is None:
            return None
        name = run.display_name
        mode = _reload_mode(run, agent)
        if mode is None:
            for old in sessions:
                self._chats.tell(
                    old, f"{name} restarted; it can neither load nor resume sessions, so this one ended"
                )
            if not fallback_new:
                return None
            session = await self.new(run, first=True)
            if session is not None:
                self._chats.tell(
                    session,
                    f"{name} restarted; it can neither load nor resume sessions: this is a new session",
                )
            return session
        # A prompt sent meanwhile waits for its session (`asked.py`), as for one the user asked for.
        first = await reopen_asked(
            self._runs, self._turns, run, sessions, lambda old: self._reopen_one(run, agent, old, mode)
        )
        if run.connection is None:
            return first
        if first is None and fallback_new:
            # None came back: the restart still gives the user a session to work in.
            first = await self.new(run, first=True)
        return first

    async def _reopen_one(
        self, run: AgentRun, agent: AgentConnection, old: ChatSession, mode: ReloadMode
    ) -> ChatSession | None:
        session_id = old.session_id
        if session_id in self._runs.sessions:
            return None  # opened again meanwhile (:AcpSessions)
        directories = self.directories(run, old.directories)
        servers = self.mcp_servers(run, agent, old.cwd, directories)
        sent = self._sent_directories(agent, directories)
        if mode == "resume":
            old.directories = sent
            self._chats.reattach(run, old)
            session = old
        else:
            # The chat is drawn again from the replay: what the old transcript still had to send must not
            # arrive after the reset.
            old.chat.discard()
            session = self._chats.open(run, session_id, old.cwd, sent, old.state.title, clear_chat=True)

        try:
            response = await self._reload(run, session, servers, directories, mode)
        except ConnectionClosed:
            return None
        except (AuthAbandoned, Unsupported, RpcError, TimeoutError) as err:
            why = _failure(err)
            # The chat stays (it is the user's record of the session); only the session is gone.
            self._chats.drop(session_id, destroy_chat=False)
            self._chats.tell(
                session, f"{run.display_name} could not {mode} this session after the restart: {why}", "error"
            )
            return None
        self._opened(session, response, "Resumed after restart" if mode == "resume" else None)
        return session

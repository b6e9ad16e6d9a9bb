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
from typing import TYPE_CHECKING, Literal

import anyio
import msgspec

from acp_nvim.client import failure
from acp_nvim.client.agent import AgentConnection, Unsupported
from acp_nvim.client.session import NoticeLevel
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.nvim.auth import AuthAbandoned
from acp_nvim.nvim.bridge import INFO, WARN
from acp_nvim.nvim.ui import Choice
from acp_nvim.protocol import schema as s

if TYPE_CHECKING:
    from acp_nvim.nvim.controller import AgentRun, ChatSession, Controller

log = logging.getLogger("acp_nvim.sessions")

SESSION_TIMEOUT = 60.0
Action = Literal["open", "delete"]


class McpServerConfig(msgspec.Struct, kw_only=True):
    """One entry of `opts.mcp_servers`: stdio (command) or http/sse (url)."""

    name: str
    type: Literal["stdio", "http", "sse"] = "stdio"
    command: str = ""
    args: list[str] = []
    env: dict[str, str] = {}
    url: str = ""
    headers: dict[str, str] = {}

    def to_protocol(self) -> s.McpServer:
        if self.type == "stdio":
            env = [s.EnvVariable(name=key, value=value) for key, value in sorted(self.env.items())]
            return s.McpServerStdio(name=self.name, command=self.command, args=self.args, env=env)
        headers = [s.HttpHeader(name=key, value=value) for key, value in sorted(self.headers.items())]
        if self.type == "http":
            return s.McpServerHttp(name=self.name, url=self.url, headers=headers)
        return s.McpServerSse(name=self.name, url=self.url, headers=headers)


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


def _reload_mode(run: AgentRun, agent: AgentConnection) -> Literal["load", "resume"] | None:
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
    def __init__(self, controller: Controller) -> None:
        self._c = controller
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

    def _sent_directories(self, agent: AgentConnection, directories: list[str]) -> list[str]:
        # What the client layer really sends: nothing unless the agent advertised the capability.
        return directories if _has(agent, "additional_directories") else []

    def mcp_servers(self, run: AgentRun, agent: AgentConnection) -> list[s.McpServer]:
        servers = [server.to_protocol() for server in run.spec.mcp_servers]
        left_out = agent.mcp_left_out(servers)
        if left_out:
            self._c.notify(
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
                servers = self.mcp_servers(run, agent)
            with anyio.fail_after(SESSION_TIMEOUT):
                return await agent.new_session(cwd, servers, directories)

        self._c.opening += 1
        try:
            response = await self._c.auth.call(run, create)
        except (AuthAbandoned, Unsupported) as err:
            self._c.session_failed(run, f"{run.name}: {err}", first)
            return None
        except TimeoutError:
            self._c.session_failed(
                run, f"{run.name} did not create a session within {SESSION_TIMEOUT:g} s", first
            )
            return None
        except ConnectionClosed:
            return None  # the run task reports the exit
        except RpcError as err:
            why = failure.describe(err)
            self._c.session_failed(run, f"{run.name} refused to create a session: {why}", first)
            return None
        finally:
            self._c.opening -= 1
        agent = run.connection
        if agent is None:
            return None
        session = self._c.open_chat(run, response.session_id, cwd, self._sent_directories(agent, directories))
        self._opened(session, response)
        await self._c.modes.apply_defaults(session, run.spec)
        return session

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
        session.renderer.flush()
        self._c.push_status()

    # ---- stored sessions ---------------------------------------------------------------------------

    async def command(self, run: AgentRun, action: Action, everywhere: bool) -> None:
        """:AcpSessions: list the agent's sessions (this directory's unless `everywhere`), pick one, open or
        delete it."""
        agent = run.connection
        if agent is None:
            return
        name = run.display_name
        if not _has(agent, "list"):
            self._c.notify(f"{name} cannot list sessions", WARN)
            return
        if action == "delete" and not _has(agent, "delete"):
            self._c.notify(f"{name} cannot delete sessions", WARN)
            return
        if action == "open" and not (agent.capabilities.load_session or _has(agent, "resume")):
            self._c.notify(f"{name} can neither load nor resume sessions", WARN)
            return
        cwd = None if everywhere else (run.spec.cwd or os.getcwd())
        try:
            infos = await agent.list_all_sessions(cwd)
        except (RpcError, ConnectionClosed) as err:
            self._c.notify(f"{name} could not list sessions: {err}")
            return
        if not infos:
            where = "" if everywhere else f" in {cwd} (:AcpSessions all lists every directory)"
            self._c.notify(f"{name} has no sessions{where}", INFO)
            return
        choices = [
            Choice(info.session_id, session_label(info, info.session_id in self._c.sessions))
            for info in infos
        ]
        verb = "Delete" if action == "delete" else "Open"
        picked = await self._c.ui.select(f"{verb} a session of {name}", choices, "acp_nvim.sessions")
        info = next((info for info in infos if info.session_id == picked), None)
        if info is None:
            return
        if action == "delete":
            await self.delete(run, agent, info)
        else:
            await self.open(run, info)

    async def delete(self, run: AgentRun, agent: AgentConnection, info: s.SessionInfo) -> None:
        try:
            await agent.delete_session(info.session_id)
        except (RpcError, ConnectionClosed, Unsupported) as err:
            self._c.notify(f"{run.display_name} could not delete the session: {err}")
            return
        self._c.notify(f"deleted session {info.title or info.session_id}", INFO)

    async def open(self, run: AgentRun, info: s.SessionInfo) -> ChatSession | None:
        """Opens a stored session in a new chat: load (history replayed) or resume (no replay)."""
        agent = run.connection
        if agent is None:
            return None
        session_id = info.session_id
        known = self._c.sessions.get(session_id)
        if known is not None:
            if known.agent == run.name:
                self._c.use(session_id)
                self._c.lua.chat_open(session_id)
                return known
            self._c.notify(f"session {session_id} is already open with agent {known.agent}")
            return None
        mode = _reload_mode(run, agent)
        if mode is None:
            self._c.notify(f"{run.display_name} can neither load nor resume sessions", WARN)
            return None
        cwd = info.cwd if os.path.isabs(info.cwd) else (run.spec.cwd or os.getcwd())
        directories = self.directories(run, info.additional_directories)
        servers = self.mcp_servers(run, agent)
        session = self._c.open_chat(
            run, session_id, cwd, self._sent_directories(agent, directories), info.title
        )

        try:
            response = await self._reload(run, session_id, cwd, servers, directories, mode)
        except ConnectionClosed:
            return None
        except (AuthAbandoned, Unsupported, RpcError, TimeoutError) as err:
            why = _failure(err)
            self._c.drop_session(session_id, destroy_chat=True)
            self._c.notify(f"{run.display_name} could not {mode} the session: {why}")
            return None
        resumed = f"Resumed session {info.title or session_id} (its history is not replayed)"
        self._opened(session, response, resumed if mode == "resume" else None)
        return session

    async def _reload(
        self,
        run: AgentRun,
        session_id: str,
        cwd: str,
        servers: list[s.McpServer],
        directories: list[str],
        mode: Literal["load", "resume"],
    ) -> s.LoadSessionResponse | s.ResumeSessionResponse:
        """Loads or resumes a stored session, through the auth flow (which authenticates and retries when the
        agent asks for it); raises what the request raised."""

        async def reopen(agent: AgentConnection) -> s.LoadSessionResponse | s.ResumeSessionResponse:
            with anyio.fail_after(SESSION_TIMEOUT):
                if mode == "resume":
                    return await agent.resume_session(session_id, cwd, servers, directories)
                return await agent.load_session(session_id, cwd, servers, directories)

        return await self._c.auth.call(run, reopen)

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
                self._tell(
                    old, f"{name} restarted; it can neither load nor resume sessions, so this one ended"
                )
            if not fallback_new:
                return None
            session = await self.new(run, first=True)
            if session is not None:
                self._tell(
                    session,
                    f"{name} restarted; it can neither load nor resume sessions: this is a new session",
                )
            return session
        first: ChatSession | None = None
        for old in sessions:
            reopened = await self._reopen_one(run, agent, old, mode)
            if run.connection is None:
                return first
            first = first or reopened
        if first is None and fallback_new:
            # None came back: the restart still gives the user a session to work in.
            first = await self.new(run, first=True)
        return first

    def _tell(self, session: ChatSession, text: str, level: NoticeLevel = "warning") -> None:
        session.state.add_notice(text, level)
        session.renderer.flush()

    async def _reopen_one(
        self, run: AgentRun, agent: AgentConnection, old: ChatSession, mode: Literal["load", "resume"]
    ) -> ChatSession | None:
        session_id = old.session_id
        if session_id in self._c.sessions:
            return None  # opened again meanwhile (:AcpSessions)
        directories = self.directories(run, old.directories)
        servers = self.mcp_servers(run, agent)
        sent = self._sent_directories(agent, directories)
        if mode == "resume":
            old.directories = sent
            self._c.reattach(run, old)
            session = old
        else:
            # The chat is drawn again from the replay: what the old transcript still had to send must not
            # arrive after the reset.
            old.renderer.discard()
            session = self._c.open_chat(run, session_id, old.cwd, sent, old.state.title, clear_chat=True)

        try:
            response = await self._reload(run, session_id, old.cwd, servers, directories, mode)
        except ConnectionClosed:
            return None
        except (AuthAbandoned, Unsupported, RpcError, TimeoutError) as err:
            why = _failure(err)
            # The chat stays (it is the user's record of the session); only the session is gone.
            self._c.drop_session(session_id, destroy_chat=False)
            self._tell(
                session, f"{run.display_name} could not {mode} this session after the restart: {why}", "error"
            )
            return None
        self._opened(session, response, "Resumed after restart" if mode == "resume" else None)
        return session

"""The agents and sessions that exist, and the one owner of the *current* session.

Agents are keyed by their configured name (several may run at once), sessions by their id (several per agent,
one chat each). A command is for the session of the chat the cursor is in (Lua sends its id), else the one
used last; `Runs.current` is the only place that choice is made. While a session the user asked for
(`:AcpNew`, `:AcpSessions`, `:AcpFork`) is being opened, it also names that one (`Current.opening`): a prompt
from no chat waits for it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Literal

import msgspec
from anyio.abc import TaskGroup

from acp_nvim.app.lifecycle import Lifecycle, Phase
from acp_nvim.app.permissions.rules import Rule
from acp_nvim.app.port import ChatView
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.review.note import ReviewNote
from acp_nvim.client.agent import command as agent_command
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.subagents import Subagent
from acp_nvim.jsonrpc.wire import JsonValue
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

log = logging.getLogger("acp_nvim.runs")

# Subagents of subagents followed up to this depth to their chat session.
MAX_SUBAGENT_DEPTH = 16
# Updates for a session whose session/new answer is still on its way (at most this many are kept).
EARLY_UPDATES_MAX = 1000

NO_SESSION = "no session: start an agent with :AcpStart"
SESSION_CLOSED = "this chat's session is closed: open a new one with :AcpNew"
NO_AGENT_RUNNING = "no agent is running: start one with :AcpStart"


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


class NeovimMcp(msgspec.Struct, kw_only=True, frozen=True):
    """How the Neovim MCP server is started for this agent's sessions: the plugin's interpreter, the Neovim
    it connects back to (`v:servername`), the tools it serves."""

    interpreter: str
    address: str
    tools: list[str]
    pythonpath: str = ""


class AgentSpec(msgspec.Struct, kw_only=True):
    """An agent as configured in Lua (`opts.agents[name]` after presets and validation), plus the options
    of the sessions it opens."""

    name: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str = ""
    install_hint: str = ""
    # A preset's older executables (tried when `cmd` is not installed) and arguments for older versions.
    fallbacks: list[str] = []
    older_args: agent_command.OlderArgs | None = None
    handshake_timeout: float = 30.0
    # Defaults applied to every new session: a mode id, and config option id -> value.
    mode: str | None = None
    config: dict[str, str | bool] = {}
    mcp_servers: list[McpServerConfig] = []
    # The Neovim MCP server each session is offered (`app/mcp/offer.py`); None: not offered.
    neovim_mcp: NeovimMcp | None = None
    additional_directories: list[str] = []
    prefer_resume: bool = False
    # Advertise `auth.terminal` to this agent: terminal login methods are then offered.
    terminal_auth: bool = True
    # Open a session as soon as the agent is up (false: :AcpSessions starts an agent only to list).
    session: bool = True
    # The agent is known to offer subagents (its preset): the client capability is advertised to it.
    subagents: bool = False
    # The ACP Registry this start may use (app/config/presets.py): a registry agent (`name` is its id, `cmd`
    # empty), or a preset that runs the registry's agent of its name when its own command is not installed.
    # Its command is decided when it starts (app/registry/agents.py).
    registry: RegistryOptions | None = None


class QueuedPrompt(msgspec.Struct, kw_only=True):
    """A prompt sent while its session's turn ran (`sessions/prompt_queue.py`): sent when the turn ends."""

    id: int
    text: str
    # As Lua sent them: they go with the prompt when it is sent, built then.
    attachments: list[JsonValue]
    # How the chat shows it (`prompt_content.py`'s `shown`: the text and what is attached).
    shown: str


NoChat = Literal["all", "none_current", "none"]


class Opening(msgspec.Struct):
    """A session the user asked for (`:AcpNew`, `:AcpSessions`, `:AcpFork`), or a restart reopens, while its
    session/new, load, resume or fork is on its way: the prompts sent meanwhile wait here, in order, and go
    to it once it is open (`sessions/asked.py`)."""

    agent: str
    # Its folder: a waiting prompt's `@diff` is taken there, and in its additional directories.
    cwd: str
    # Known before it is open for a stored session (a load or a resume): its chat, there before the agent's
    # answer (a load's replay lands in it), sends its prompts here too until it is open.
    session_id: str | None = None
    # The prompts from no chat that wait for it: all (the user asked for it), or as `waits_for` says.
    from_no_chat: NoChat = "all"
    waiting: list[QueuedPrompt] = msgspec.field(default_factory=list)
    directories: list[str] = msgspec.field(default_factory=list)

    def waits_for(self, current_id: str | None) -> bool:
        """With `current_id` current, whether a prompt from no chat waits for it (`asked.py`'s reopen)."""
        return self.from_no_chat == "all" or (
            self.session_id == current_id if current_id is not None else self.from_no_chat == "none_current"
        )


class ChatSession(msgspec.Struct):
    session_id: str
    agent: str
    cwd: str
    directories: list[str]
    state: SessionState
    chat: ChatView
    in_turn: bool = False
    cancelling: bool = False
    # While its `session/load` runs: the updates that come are its history, replayed (what they did is past).
    replaying: bool = False
    permissions: int = 0
    # "Always allow ... in this session" (app/permissions/service.py): kept with the session, resumed with it.
    permission_rules: list[Rule] = msgspec.field(default_factory=list)
    # The agent's warnings and errors (its notices) told through a notification: each text once, since an
    # agent may repeat one every turn; the chat shows every one.
    notified: set[str] = msgspec.field(default_factory=set)
    # The prompts queued while a turn ran, in the order they go (app/sessions/prompt_queue.py).
    queue: list[QueuedPrompt] = msgspec.field(default_factory=list)
    # The review's comments and rejections (app/review/notes.py), kept until the session ends.
    review_notes: list[ReviewNote] = msgspec.field(default_factory=list)


class AgentRun:
    """One configured agent: its process while it runs, and how it ended after."""

    def __init__(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> None:
        self.spec = spec
        self.lifecycle = Lifecycle()
        self.connection: AgentConnection | None = None
        self.info: s.Implementation | None = None
        # The run's own task group while it runs (app/agent_runs.py): its tasks end with it.
        self.tasks: TaskGroup | None = None
        # The sessions open when the run ended (stopped or dead), oldest first: :AcpRestart reopens them.
        self.ended: list[ChatSession] = []
        # Sessions to reopen instead of opening a new one (a restart, a login's reconnect).
        self.reopen: list[ChatSession] = list(reopen or [])

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def alive(self) -> bool:
        phase = self.lifecycle.phase
        return phase in (Phase.CONNECTING, Phase.OPENING, Phase.READY) or self.connection is not None

    @property
    def display_name(self) -> str:
        info = self.info
        # Without agentInfo the configured name says more than the executable's ("node", "uvx").
        return (info.title or info.name) if info is not None else self.spec.name

    def take_reopen(self) -> list[ChatSession]:
        reopen, self.reopen = self.reopen, []
        return reopen

    def forget_ended(self, session_id: str) -> None:
        self.ended = [ended for ended in self.ended if ended.session_id != session_id]
        self.reopen = [ended for ended in self.reopen if ended.session_id != session_id]


class Current(msgspec.Struct, frozen=True):
    """What a command is for: a session (or None) and its agent (running or not), and why there is none."""

    session: ChatSession | None
    run: AgentRun | None
    # Set when there is no session: the chat's session is closed, or there is none at all.
    missing: str | None = None
    # For a command from no chat: the session the user asked for last, still being opened (for one from a
    # chat: that chat's own, a stored session's not loaded yet). A prompt waits for it rather than go to
    # `session`, the one in use before (or not open yet).
    opening: Opening | None = None

    @property
    def connection(self) -> AgentConnection | None:
        return self.run.connection if self.run is not None else None


class Runs:
    """Only used from the anyio thread."""

    def __init__(self) -> None:
        self.agents: dict[str, AgentRun] = {}
        self.sessions: dict[str, ChatSession] = {}
        self._current: str | None = None
        self._current_agent: str | None = None
        # Sessions by last use, most recent last: where "current" goes when a chat closes.
        self._recent: list[str] = []
        self._early: dict[str, list[u.SessionUpdate]] = {}
        # The subagents of the open sessions (and theirs), by their session id.
        self.children: dict[str, Subagent] = {}
        # The agents (by name) whose last initialize answer offered subagents: advertised to them from their
        # next start (a client's capabilities go before the agent's, in the same handshake).
        self.offered_subagents: set[str] = set()
        self._opening = 0
        # The sessions the user asked for that are being opened, the last asked last.
        self._asked: list[Opening] = []

    # ---- the current session ---------------------------------------------------------------------

    def current(self, session_id: str | None = None) -> Current:
        """The session a command is for — the chat it comes from (`session_id`), else the current one — and
        its agent: the session's, else the agent started last."""
        current = self.sessions.get(self._current) if self._current is not None else None
        if session_id:
            session = self.sessions.get(session_id)
            missing = SESSION_CLOSED if session is None else None
        else:
            session = current
            missing = NO_SESSION if session is None else None
        # A closed chat's command goes to the agent of the current session, else to the one started last.
        owner = session or current
        name = owner.agent if owner is not None else self._current_agent
        run = self.agents.get(name) if name is not None else None
        if session_id:
            opening = next((asked for asked in self._asked if asked.session_id == session_id), None)
        else:
            # The session asked for last, or the current one while a restart reopens it (its chat is there
            # first), or, with none current, the one such a reopen makes current.
            wanted = current.session_id if current is not None else None
            opening = next((asked for asked in reversed(self._asked) if asked.waits_for(wanted)), None)
        return Current(session, run, missing, opening)

    @contextlib.contextmanager
    def asking(
        self,
        agent: str,
        cwd: str,
        session_id: str | None = None,
        directories: list[str] | None = None,
        from_no_chat: NoChat = "all",
    ) -> Iterator[Opening]:
        """The user asked for a session of `agent` in `cwd` (a new one, a stored one, a fork; with the
        additional `directories` it is to have), or a restart reopens it: it is the current one for a prompt
        from no chat (`from_no_chat`) until the block ends (opened, or failed), and, with its `session_id` (a
        stored one), for one from its own chat."""
        opening = Opening(agent, cwd, session_id, from_no_chat, directories=list(directories or []))
        self._asked.append(opening)
        try:
            yield opening
        finally:
            self.asked_done(opening)

    def asked_done(self, opening: Opening) -> None:
        """It opened, or did not: from now on no prompt waits for it (before `asking`'s block ends)."""
        self._asked = [asked for asked in self._asked if asked is not opening]

    @property
    def current_id(self) -> str | None:
        return self._current

    def use(self, session_id: str) -> None:
        self._current = session_id
        session = self.sessions.get(session_id)
        if session is not None:
            self._current_agent = session.agent
        with contextlib.suppress(ValueError):
            self._recent.remove(session_id)
        self._recent.append(session_id)

    def use_agent(self, name: str) -> None:
        """An agent starts: its status shows until a session of its own becomes current."""
        self._current_agent = name

    def clear_current(self) -> None:
        self._current = None

    def last_used(self) -> str | None:
        return self._recent[-1] if self._recent else None

    # ---- sessions --------------------------------------------------------------------------------

    def add(self, session: ChatSession) -> list[u.SessionUpdate]:
        """Registers a session; returns the updates that arrived before it was known, oldest first."""
        self.sessions[session.session_id] = session
        return self._early.pop(session.session_id, [])

    def owner(self, session_id: str) -> ChatSession | None:
        """The chat session of a session id: the session itself, or the one a subagent (of any depth) belongs
        to."""
        session = self.sessions.get(session_id)
        seen = 0
        while session is None and session_id in self.children and seen < MAX_SUBAGENT_DEPTH:
            session_id = self.children[session_id].parent_id
            session = self.sessions.get(session_id)
            seen += 1
        return session

    def owner_id(self, session_id: str) -> str:
        """The id of `owner`'s session (the id itself for a session not known here)."""
        session = self.owner(session_id)
        return session.session_id if session is not None else session_id

    def adopt(self, child: Subagent) -> None:
        """A subagent announced on a session open here: its requests and updates are that session's."""
        self.children[child.session_id] = child

    def adopt_children(self, session: ChatSession) -> None:
        """The subagents its transcript holds (announced before the session was known here, or before its
        agent restarted)."""
        for child in session.state.all_children():
            self.adopt(child)

    def forget(self, session_id: str) -> None:
        session = self.sessions.pop(session_id, None)
        if session is not None:
            for child in session.state.all_children():
                self.children.pop(child.session_id, None)
        with contextlib.suppress(ValueError):
            self._recent.remove(session_id)
        if self._current == session_id:
            self._current = self._recent[-1] if self._recent else None
            if self._current is not None:
                self._current_agent = self.sessions[self._current].agent

    def sessions_of(self, run: AgentRun) -> list[ChatSession]:
        return [session for session in self.sessions.values() if session.agent == run.name]

    def roots(self, session_id: str) -> list[str] | None:
        """The roots of a session — its cwd and the additional directories sent for it — or None for a
        session not open here. The sandbox asks on every fs/terminal request; a subagent's are its root
        session's (the same sandbox as its parent's folders)."""
        session = self.owner(session_id)
        return None if session is None else [session.cwd, *session.directories]

    def connection_of(self, session: ChatSession) -> AgentConnection | None:
        """The connection of the agent that runs `session`: None when that agent has stopped."""
        run = self.agents.get(session.agent)
        return run.connection if run is not None else None

    def agent_info(self, session_id: str) -> s.Implementation | None:
        """The agentInfo of the agent that runs a session (None when unknown): for client/agent/quirks.py."""
        session = self.owner(session_id)
        run = self.agents.get(session.agent) if session is not None else None
        return run.info if run is not None else None

    @contextlib.contextmanager
    def expecting_session(self) -> Iterator[None]:
        """A session/new is on its way: updates for a session not known yet are kept for it."""
        self._opening += 1
        try:
            yield
        finally:
            self._opening -= 1

    def keep_early(self, notification: u.SessionNotification) -> None:
        """An update for a session not open here: kept when one is being opened, else dropped."""
        if not self._opening:
            log.debug("update for unknown session %s dropped", notification.session_id)
            return
        early = self._early.setdefault(notification.session_id, [])
        if len(early) < EARLY_UPDATES_MAX:
            early.append(notification.update)

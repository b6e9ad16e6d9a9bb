"""An in-memory Neovim for the application layer (a `NeovimPort`), and an agent connection that answers as
it is told: the application runs on them exactly as on the real ones, without a Neovim or a process."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import anyio

from acp_nvim.app.application import Application
from acp_nvim.app.port import CheckpointBuffers, CheckpointQuickfix, Choice
from acp_nvim.app.review.note import NoteItem, NoteMark
from acp_nvim.app.runs import AgentRun, AgentSpec, ChatSession, Runs
from acp_nvim.app.views import Attention, ChatInfo, PermissionView, QueueView, Status
from acp_nvim.client.agent.capabilities import UnstableSession
from acp_nvim.client.agent.steering import SteeringResponse
from acp_nvim.client.session.state import SessionState
from acp_nvim.jsonrpc import RpcError
from acp_nvim.jsonrpc.wire import JsonValue
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u


class FakeChat:
    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.flushes = 0

    def changed(self) -> None:
        self.flush()

    def shows_at_once(self) -> bool:
        return True

    def flush(self) -> None:
        self.flushes += 1
        self.state.take_changes()

    def discard(self) -> None:
        self.state.take_changes()


class FakePort:
    """Records what Neovim would show; answers pickers and logins from what the test queued."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, int]] = []
        self.statuses: list[Status] = []
        self.chats: dict[str, ChatInfo] = {}
        self.destroyed: list[str] = []
        self.opened: list[str] = []
        self.ended: list[str] = []
        self.refused: list[str] = []
        self.cancelled: list[str] = []
        self.answers: deque[str | None] = deque()
        # ask_text: the questions asked (prompt, default) and the texts typed, in order.
        self.inputs: list[tuple[str, str]] = []
        self.typed: deque[str | None] = deque()
        self.pickers: list[tuple[str, list[Choice]]] = []
        self.login_code = 0
        self.logins: list[list[str]] = []
        self.permission_answer: s.RequestPermissionOutcome = s.RequestPermissionOutcomeCancelled()
        self.permission_views: list[PermissionView] = []
        self.status_while_asked: list[str] = []
        self.queues: list[tuple[str, QueueView]] = []
        self.attentions: list[Attention] = []
        self.review_shown: list[NoteMark] = []
        self.review_dropped: list[int] = []
        self.review_lists: list[tuple[str, list[NoteItem]]] = []
        self.drafts: list[tuple[str, str, list[JsonValue]]] = []

    # what the application shows

    def notify(self, message: str, level: int) -> None:
        self.notes.append((message, level))

    def show_status(self, status: Status) -> None:
        self.statuses.append(status)

    def attention(self, fact: Attention) -> None:
        self.attentions.append(fact)

    async def sent(self) -> None:
        pass

    def chat_create(self, session_id: str, info: ChatInfo, *, reset: bool = False) -> None:
        self.chats[session_id] = info

    def chat_destroy(self, session_id: str) -> None:
        self.destroyed.append(session_id)

    def chat_open(self, session_id: str) -> None:
        self.opened.append(session_id)

    def chat_view(self, state: SessionState, agent_name: str) -> FakeChat:
        return FakeChat(state)

    def prompt_refused(self, message: str, text: str, attachments: list[JsonValue]) -> None:
        self.refused.append(message)

    def show_queue(self, session_id: str, view: QueueView) -> None:
        self.queues.append((session_id, view))

    def session_ended(self, session_id: str) -> None:
        self.ended.append(session_id)

    def review_marks(self, marks: list[NoteMark]) -> None:
        self.review_shown.extend(marks)

    def review_drop(self, ids: list[int]) -> None:
        self.review_dropped.extend(ids)

    def review_list(self, title: str, items: list[NoteItem]) -> None:
        self.review_lists.append((title, items))

    def prompt_draft(self, session_id: str, text: str, attachments: list[JsonValue]) -> None:
        self.drafts.append((session_id, text, attachments))

    def cancel_permissions(self, session_id: str) -> None:
        self.cancelled.append(session_id)

    async def checkpoint(self, action: str, payload: CheckpointBuffers | CheckpointQuickfix) -> object:
        return None

    # what it asks

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        self.pickers.append((prompt, list(choices)))
        return self.answers.popleft() if self.answers else None

    async def ask_text(self, prompt: str, default: str) -> str | None:
        self.inputs.append((prompt, default))
        return self.typed.popleft() if self.typed else None

    async def run_login(self, title: str, argv: Sequence[str], env: dict[str, str]) -> int:
        self.logins.append(list(argv))
        return self.login_code

    async def ask_permission(
        self, request: s.RequestPermissionRequest, view: PermissionView
    ) -> s.RequestPermissionOutcome:
        self.permission_views.append(view)
        self.status_while_asked.append(self.statuses[-1].state)
        return self.permission_answer

    # reading it back

    @property
    def status(self) -> Status:
        return self.statuses[-1]

    def texts(self) -> list[str]:
        return [message for message, _ in self.notes]


class FakeAgent:
    """The part of `AgentConnection` the application calls, answering from its attributes."""

    def __init__(
        self,
        *,
        capabilities: s.AgentCapabilities | None = None,
        auth_methods: list[Any] | None = None,
        name: str = "Fake",
        session_prefix: str = "sess",
    ) -> None:
        self.capabilities = capabilities or s.AgentCapabilities()
        self.auth_methods = auth_methods or []
        self.display_name = name
        self.session_prefix = session_prefix
        self.protocol_version = 1
        self.calls: list[tuple[str, Any]] = []
        self.next_session = 0
        # Raised by the next new_session / set_* / prompt, when set.
        self.refuse: dict[str, RpcError] = {}
        self.modes: s.SessionModeState | None = None
        self.config_options: list[Any] | None = None
        self.stop_reason = "end_turn"
        # The texts of the prompts received, in order; while `hold` is set, a prompt's turn waits for it.
        self.prompts: list[str] = []
        self.hold: anyio.Event | None = None
        # Steering (client/agent/steering.py): whether it is advertised, and the outcome of each steer.
        self.steerable = False
        self.steer_outcome = "injected"
        self.steered: list[str] = []
        # The unstable session features its initialize answer advertised (client/agent/capabilities.py).
        self.unstable_session = UnstableSession()
        # The unstable session methods advertised ("fork", "title", "archive"), the turn's usage answered, and
        # what a fork replays (through `replay`, before it answers) and a rename stores.
        self.features: set[str] = set()
        self.usage: u.Usage | None = None
        self.replay: Any = None
        self.fork_updates: list[s.SessionUpdate] = []
        self.stored_title: str | None = None
        # What session/list answers.
        self.listed: list[s.SessionInfo] = []

    async def list_all_sessions(self, cwd: str | None = None) -> list[s.SessionInfo]:
        self.calls.append(("list_sessions", cwd))
        return list(self.listed)

    def offers(self, feature: str) -> bool:
        return feature in self.features

    async def fork_session(
        self, session_id: str, cwd: str, servers: Any, directories: Any
    ) -> u.ForkSessionResponse:
        self.calls.append(("fork_session", session_id))
        self._maybe_refuse("fork_session")
        self.next_session += 1
        forked = f"{self.session_prefix}-{self.next_session}"
        if self.replay is not None:
            self.replay(
                [s.SessionNotification(session_id=forked, update=update) for update in self.fork_updates]
            )
        return u.ForkSessionResponse(session_id=forked, modes=self.modes, config_options=self.config_options)

    async def set_session_title(self, session_id: str, title: str) -> u.SetSessionTitleResponse:
        self.calls.append(("set_session_title", (session_id, title)))
        self._maybe_refuse("set_session_title")
        return u.SetSessionTitleResponse(title=self.stored_title or title)

    async def archive_session(self, session_id: str) -> u.ArchiveSessionResponse:
        self.calls.append(("archive_session", session_id))
        self._maybe_refuse("archive_session")
        return u.ArchiveSessionResponse()

    def held_until(self, method: str) -> anyio.Event:
        """`method` (e.g. "new_session", "load_session", "fork_session") answers only once the returned event
        is set: a session being opened, for as long as a test needs."""
        answered = anyio.Event()
        plain = getattr(self, method)

        async def held(*args: Any) -> Any:
            await answered.wait()
            return await plain(*args)

        setattr(self, method, held)
        return answered

    def _maybe_refuse(self, method: str) -> None:
        err = self.refuse.pop(method, None)
        if err is not None:
            raise err

    def mcp_left_out(self, servers: Sequence[s.McpServer]) -> list[tuple[str, str]]:
        return []

    async def new_session(self, cwd: str, servers: Any, directories: Any) -> s.NewSessionResponse:
        self.calls.append(("new_session", (cwd, list(directories))))
        self._maybe_refuse("new_session")
        self.next_session += 1
        return s.NewSessionResponse(
            session_id=f"{self.session_prefix}-{self.next_session}",
            modes=self.modes,
            config_options=self.config_options,
        )

    async def load_session(
        self, session_id: str, cwd: str, servers: Any, directories: Any
    ) -> s.LoadSessionResponse:
        self.calls.append(("load_session", session_id))
        self._maybe_refuse("load_session")
        return s.LoadSessionResponse(modes=self.modes, config_options=self.config_options)

    async def set_mode(self, session_id: str, mode_id: str) -> s.SetSessionModeResponse:
        self.calls.append(("set_mode", mode_id))
        self._maybe_refuse("set_mode")
        return s.SetSessionModeResponse()

    async def set_config_option(self, session_id: str, request: Any) -> s.SetSessionConfigOptionResponse:
        self.calls.append(("set_config_option", (request.config_id, request.value)))
        self._maybe_refuse("set_config_option")
        options = [
            msgspec_replace(option, current_value=request.value) if option.id == request.config_id else option
            for option in (self.config_options or [])
        ]
        self.config_options = options
        return s.SetSessionConfigOptionResponse(config_options=options)

    async def authenticate(self, method_id: str) -> s.AuthenticateResponse:
        self.calls.append(("authenticate", method_id))
        self._maybe_refuse("authenticate")
        return s.AuthenticateResponse()

    async def prompt(self, session_id: str, blocks: Sequence[s.ContentBlock]) -> u.PromptResponse:
        self.calls.append(("prompt", session_id))
        self.prompts.append(_text_of(blocks))
        if self.hold is not None:
            await self.hold.wait()
        self._maybe_refuse("prompt")
        return u.PromptResponse(stop_reason=self.stop_reason, usage=self.usage)

    async def steer(self, session_id: str, blocks: Sequence[s.ContentBlock]) -> SteeringResponse:
        self.steered.append(_text_of(blocks))
        return SteeringResponse(outcome=self.steer_outcome)

    async def cancel(self, session_id: str) -> None:
        self.calls.append(("cancel", session_id))

    async def close_session(self, session_id: str) -> s.CloseSessionResponse:
        self.calls.append(("close_session", session_id))
        return s.CloseSessionResponse()


def _text_of(blocks: Sequence[s.ContentBlock]) -> str:
    return " ".join(block.text for block in blocks if isinstance(block, s.ContentBlockText))


def msgspec_replace(option: Any, **changes: Any) -> Any:
    import msgspec

    return msgspec.structs.replace(option, **changes)


class FakeRunner:
    """Launching and stopping without processes: a launched run is connected to `agent` at once."""

    def __init__(self, app: App) -> None:
        self._app = app
        self.launched: list[AgentSpec] = []
        self.stopped: list[str] = []

    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        self.launched.append(spec)
        run = AgentRun(spec, reopen)
        self._app.runs.agents[spec.name] = run
        self._app.runs.use_agent(spec.name)
        return run

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        self.stopped.append(run.name)
        run.lifecycle.stopping(notice)
        self._app.chats.end_all(run, notice)
        run.connection = None
        run.lifecycle.stopped()


class App(Application):
    """The application on the fakes, composed as `acp_nvim/nvim/controller.py` composes it on Neovim."""

    def __init__(self) -> None:
        self.runner = FakeRunner(self)
        super().__init__(Runs(), FakePort(), self.runner)

    def connect(self, name: str, agent: FakeAgent, **spec: Any) -> AgentRun:
        """An agent launched and connected (its handshake done), without its first session yet."""
        run = self.runner.launch(AgentSpec(name=name, cmd="fake", **spec))
        run.connection = agent  # type: ignore[assignment]
        run.lifecycle.connected(open_first_session=True)
        return run

    async def start(self, name: str, agent: FakeAgent, **spec: Any) -> tuple[AgentRun, ChatSession]:
        """An agent up with its first session open, as a real start leaves it."""
        run = self.connect(name, agent, **spec)
        session = await self.sessions.new(run, first=True)
        assert session is not None
        run.lifecycle.first_session_done(ready=True)
        self.status.push()
        return run, session

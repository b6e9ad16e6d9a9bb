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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import msgspec
from anyio.abc import ByteReceiveStream, ByteSendStream

from acp_nvim import __version__
from acp_nvim.jsonrpc import Connection, InvalidParams, InvalidRequest, MethodNotFound, RpcError
from acp_nvim.protocol import PROTOCOL_VERSION, codec, schema
from acp_nvim.protocol import methods as m

log = logging.getLogger("acp_nvim.agents.demo")

AGENT_NAME = "acp-nvim-demo"
AGENT_TITLE = "acp.nvim demo agent"
DEFAULT_DELAY_MS = 20
# Larger files are not worth a demo read (and would flood the chat).
MAX_DEMO_FILE_BYTES = 256 * 1024
EDIT_CANDIDATES = ("hello.py", "main.py")
COMMENT_PREFIX = {".py": "#", ".sh": "#", ".toml": "#", ".yaml": "#", ".yml": "#", ".lua": "--"}
COMMENT_PREFIX |= {".js": "//", ".ts": "//", ".c": "//", ".rs": "//", ".go": "//"}


def _delay_from_env() -> float:
    raw = os.environ.get("ACP_DEMO_DELAY_MS", "")
    try:
        return max(0.0, float(raw)) / 1000 if raw else DEFAULT_DELAY_MS / 1000
    except ValueError:
        log.warning("ignoring ACP_DEMO_DELAY_MS=%r (not a number)", raw)
        return DEFAULT_DELAY_MS / 1000


def _text(text: str) -> schema.ContentBlockText:
    return schema.ContentBlockText(text=text)


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


def _excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _visible_files(cwd: Path) -> list[Path]:
    try:
        entries = sorted(cwd.iterdir())
    except OSError:
        return []
    return [p for p in entries if not p.name.startswith(".") and p.is_file()]


def pick_read_target(cwd: Path) -> Path | None:
    readme = cwd / "README.md"
    if readme.is_file():
        return readme
    for path in _visible_files(cwd):
        if path.stat().st_size <= MAX_DEMO_FILE_BYTES:
            return path
    return None


def pick_edit_target(cwd: Path, read_target: Path | None) -> Path:
    for name in EDIT_CANDIDATES:
        if (cwd / name).is_file():
            return cwd / name
    for path in _visible_files(cwd):
        if path != read_target and path.suffix in COMMENT_PREFIX:
            return path
    # Nothing suitable: the demo proposes a new file rather than touching the user's documents.
    return cwd / "acp_demo.txt"


def edited(path: Path, old: str | None, prompt: str) -> str:
    note = f'Edited by the acp.nvim demo agent (you said: "{_excerpt(prompt, 40)}")'
    if old is None:
        return note + "\n"
    prefix = COMMENT_PREFIX.get(path.suffix)
    if prefix is None:
        return old + ("" if old.endswith("\n") or not old else "\n") + note + "\n"
    return f"{prefix} {note}\n{old}"


@dataclass
class DemoSession:
    session_id: str
    cwd: Path
    mode: str = "ask"
    turns: int = 0
    turn_scope: anyio.CancelScope | None = None
    titled: bool = False
    # Message ids let the client tell streamed messages apart within a turn.
    messages: int = 0


MODES = schema.SessionModeState(
    current_mode_id="ask",
    available_modes=[
        schema.SessionMode(id="ask", name="Ask", description="Asks before every edit"),
        schema.SessionMode(id="code", name="Code", description="Same show, different badge"),
    ],
)

COMMANDS = [
    schema.AvailableCommand(name="tour", description="Run the demo tour again"),
    schema.AvailableCommand(
        name="echo",
        description="Echo the text back",
        input=schema.UnstructuredCommandInput(hint="text to echo"),
    ),
]


class TurnCancelled(Exception):
    """The client answered a permission request with "cancelled": the turn is over."""


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
    def _params(params: msgspec.Raw | None, type_: type[Any]) -> Any:
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

    async def call(self, method: str, params: object, result_type: type[Any]) -> Any:
        raw = await self.connection.request(method, params)
        return codec.decode_result(raw, result_type)


class Turn:
    """One prompt turn's show. Every await is a cancellation point of the turn's scope."""

    def __init__(self, agent: DemoAgent, session: DemoSession, prompt: str) -> None:
        self.agent = agent
        self.session = session
        self.sid = session.session_id
        self.prompt = prompt
        self.n = session.turns
        self.plan = [
            schema.PlanEntry(content="Read a file of the project", priority="high", status="pending"),
            schema.PlanEntry(content="Propose an edit and ask first", priority="medium", status="pending"),
            schema.PlanEntry(content="Run a command in a terminal", priority="low", status="pending"),
        ]

    async def run(self) -> None:
        await self.intro()
        await self.set_plan(0, "in_progress")
        read_target = await self.read_step()
        await self.set_plan(0, "completed", next_in_progress=True)
        await self.edit_step(read_target)
        await self.set_plan(1, "completed", next_in_progress=True)
        await self.terminal_step()
        await self.set_plan(2, "completed")
        await self.say("That's the tour. Ask again and I'll do it all once more; :AcpCancel stops me midway.")
        await self.agent.update(
            self.session, schema.SessionUpdateUsageUpdate(used=1200 * self.n, size=200_000)
        )

    # --- pieces

    async def send(self, update: schema.SessionUpdate) -> None:
        await self.agent.update(self.session, update)

    async def say(self, text: str) -> None:
        """Stream `text` word by word as one agent message."""
        self.session.messages += 1
        message_id = f"{self.sid}-m{self.session.messages}"
        words = text.split(" ")
        for i, word in enumerate(words):
            chunk = word if i == 0 else " " + word
            await self.send(
                schema.SessionUpdateAgentMessageChunk(content=_text(chunk), message_id=message_id)
            )
            await anyio.sleep(self.agent.delay)
        await self.send(schema.SessionUpdateAgentMessageChunk(content=_text("\n\n"), message_id=message_id))

    async def set_plan(self, index: int, status: str, *, next_in_progress: bool = False) -> None:
        self.plan[index].status = status
        if next_in_progress and index + 1 < len(self.plan):
            self.plan[index + 1].status = "in_progress"
        await self.send(schema.SessionUpdatePlan(entries=list(self.plan)))

    def tool_id(self, name: str) -> str:
        return f"t{self.n}-{name}"

    async def intro(self) -> None:
        if not self.session.titled:
            self.session.titled = True
            title = f"Demo: {_excerpt(self.prompt, 40)}" if self.prompt else "Demo session"
            await self.send(schema.SessionUpdateSessionInfoUpdate(title=title))
            await self.send(schema.SessionUpdateAvailableCommandsUpdate(available_commands=COMMANDS))
        heard = f"“{_excerpt(self.prompt, 80)}”" if self.prompt else "an empty prompt"
        thought = (
            f"The user sent {heard}. I am an offline demo, so I will show the tour: read a file, propose an "
            f"edit, run a command (mode: {self.session.mode})."
        )
        await self.send(schema.SessionUpdateAgentThoughtChunk(content=_text(thought)))
        await self.send(schema.SessionUpdatePlan(entries=list(self.plan)))
        await self.say(
            f"Hello! You said {heard}. I'm the acp.nvim demo agent: no model, no network, just a tour."
        )

    async def read_step(self) -> Path | None:
        if not self.agent.caps.fs.read_text_file:
            await self.say("Your client does not offer fs/read_text_file, so I skip reading a file.")
            return None
        target = pick_read_target(self.session.cwd)
        if target is None:
            await self.say(f"I found no file to read in {self.session.cwd}, so I skip that step.")
            return None
        tool_id = self.tool_id("read")
        location = schema.ToolCallLocation(path=str(target), line=1)
        await self.send(
            schema.SessionUpdateToolCall(
                tool_call_id=tool_id,
                title=f"Read {target.name}",
                kind="read",
                status="in_progress",
                locations=[location],
                raw_input={"path": str(target)},
            )
        )
        try:
            result: schema.ReadTextFileResponse = await self.agent.call(
                m.FS_READ_TEXT_FILE,
                schema.ReadTextFileRequest(session_id=self.sid, path=str(target), line=1, limit=20),
                schema.ReadTextFileResponse,
            )
        except (RpcError, msgspec.ValidationError) as exc:
            await self.fail(tool_id, f"Reading {target.name} failed: {exc}")
            return None
        lines = result.content.splitlines()
        preview = "\n".join(lines[:5])
        await self.send(
            schema.SessionUpdateToolCallUpdate(
                tool_call_id=tool_id,
                status="completed",
                content=[schema.ToolCallContentContent(content=_text(preview))],
            )
        )
        first = next((line.strip("# ").strip() for line in lines if line.strip()), "")
        summary = f"it starts with “{_excerpt(first)}”." if first else "it is empty."
        await self.say(f"I read the first {len(lines)} lines of {target.name}: {summary}")
        return target

    async def edit_step(self, read_target: Path | None) -> None:
        if not self.agent.caps.fs.write_text_file:
            await self.say("Your client does not offer fs/write_text_file, so I skip the edit.")
            return
        target = pick_edit_target(self.session.cwd, read_target)
        old = await self.current_text(target)
        new = edited(target, old, self.prompt)
        tool_id = self.tool_id("edit")
        diff = schema.ToolCallContentDiff(path=str(target), old_text=old, new_text=new)
        title = f"Edit {target.name}" if old is not None else f"Create {target.name}"
        location = schema.ToolCallLocation(path=str(target), line=1)
        await self.send(
            schema.SessionUpdateToolCall(
                tool_call_id=tool_id,
                title=title,
                kind="edit",
                status="pending",
                content=[diff],
                locations=[location],
            )
        )
        permission = schema.RequestPermissionRequest(
            session_id=self.sid,
            tool_call=schema.ToolCallUpdate(
                tool_call_id=tool_id, title=title, kind="edit", status="pending", content=[diff]
            ),
            options=[
                schema.PermissionOption(option_id="allow", name="Allow this edit", kind="allow_once"),
                schema.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
            ],
        )
        try:
            answer: schema.RequestPermissionResponse = await self.agent.call(
                m.SESSION_REQUEST_PERMISSION, permission, schema.RequestPermissionResponse
            )
        except (RpcError, msgspec.ValidationError) as exc:
            await self.fail(tool_id, f"The permission request failed: {exc}")
            return
        outcome = answer.outcome
        if isinstance(outcome, schema.RequestPermissionOutcomeCancelled):
            raise TurnCancelled
        if outcome.option_id != "allow":
            await self.fail(tool_id, f"You rejected the edit, so {target.name} stays as it is.")
            return
        await self.send(schema.SessionUpdateToolCallUpdate(tool_call_id=tool_id, status="in_progress"))
        try:
            await self.agent.call(
                m.FS_WRITE_TEXT_FILE,
                schema.WriteTextFileRequest(session_id=self.sid, path=str(target), content=new),
                schema.WriteTextFileResponse,
            )
        except (RpcError, msgspec.ValidationError) as exc:
            await self.fail(tool_id, f"Writing {target.name} failed: {exc}")
            return
        await self.send(schema.SessionUpdateToolCallUpdate(tool_call_id=tool_id, status="completed"))
        await self.say(f"Thanks! I edited {target.name} through your editor.")

    async def current_text(self, target: Path) -> str | None:
        """The file as the client sees it (its buffer, if open), or None for a file that does not exist."""
        if not target.exists():
            return None
        if self.agent.caps.fs.read_text_file:
            try:
                result: schema.ReadTextFileResponse = await self.agent.call(
                    m.FS_READ_TEXT_FILE,
                    schema.ReadTextFileRequest(session_id=self.sid, path=str(target)),
                    schema.ReadTextFileResponse,
                )
                return result.content
            except (RpcError, msgspec.ValidationError) as exc:
                log.info("reading %s through the client failed (%s); using the disk", target, exc)
        try:
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    async def terminal_step(self) -> None:
        if not self.agent.caps.terminal:
            await self.say("Your client does not offer terminals, so I skip running a command.")
            return
        tool_id = self.tool_id("run")
        command, args = "ls", ["-la"]
        try:
            created: schema.CreateTerminalResponse = await self.agent.call(
                m.TERMINAL_CREATE,
                schema.CreateTerminalRequest(
                    session_id=self.sid,
                    command=command,
                    args=args,
                    cwd=str(self.session.cwd),
                    output_byte_limit=64 * 1024,
                ),
                schema.CreateTerminalResponse,
            )
        except (RpcError, msgspec.ValidationError) as exc:
            await self.say(f"I could not start `{command}`: {exc}")
            return
        terminal_id = created.terminal_id
        try:
            await self.run_terminal(tool_id, terminal_id, f"{command} {' '.join(args)}")
        finally:
            # The spec makes releasing the agent's duty, also when the turn is cancelled midway.
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                try:
                    await self.agent.call(
                        m.TERMINAL_RELEASE,
                        schema.ReleaseTerminalRequest(session_id=self.sid, terminal_id=terminal_id),
                        schema.ReleaseTerminalResponse,
                    )
                except Exception as exc:
                    log.info("terminal/release failed: %s", exc)

    async def run_terminal(self, tool_id: str, terminal_id: str, shown: str) -> None:
        await self.send(
            schema.SessionUpdateToolCall(
                tool_call_id=tool_id,
                title=f"Run `{shown}`",
                kind="execute",
                status="in_progress",
                content=[schema.ToolCallContentTerminal(terminal_id=terminal_id)],
                raw_input={"command": shown, "cwd": str(self.session.cwd)},
            )
        )
        try:
            exited: schema.WaitForTerminalExitResponse = await self.agent.call(
                m.TERMINAL_WAIT_FOR_EXIT,
                schema.WaitForTerminalExitRequest(session_id=self.sid, terminal_id=terminal_id),
                schema.WaitForTerminalExitResponse,
            )
            output: schema.TerminalOutputResponse = await self.agent.call(
                m.TERMINAL_OUTPUT,
                schema.TerminalOutputRequest(session_id=self.sid, terminal_id=terminal_id),
                schema.TerminalOutputResponse,
            )
        except (RpcError, msgspec.ValidationError) as exc:
            await self.fail(tool_id, f"The terminal failed: {exc}")
            return
        how = f"code {exited.exit_code}" if exited.exit_code is not None else f"signal {exited.signal}"
        ok = exited.exit_code == 0
        await self.send(
            schema.SessionUpdateToolCallUpdate(
                tool_call_id=tool_id,
                status="completed" if ok else "failed",
                raw_output={"exitCode": exited.exit_code, "signal": exited.signal},
            )
        )
        count = len(output.output.splitlines())
        cut = " (truncated)" if output.truncated else ""
        await self.say(f"`{shown}` exited with {how} and printed {count} lines{cut}.")

    async def fail(self, tool_id: str, message: str) -> None:
        await self.send(
            schema.SessionUpdateToolCallUpdate(
                tool_call_id=tool_id,
                status="failed",
                content=[schema.ToolCallContentContent(content=_text(message))],
            )
        )
        await self.say(message)


# --- stdio


class StdinStream(ByteReceiveStream):
    """Raw reads of a pipe fd in a worker thread: they return what is there, not wait for a full buffer."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        pass


class StdoutStream(ByteSendStream):
    """Blocking writes in a worker thread, so a client that reads slowly never stalls the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_all, item)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def aclose(self) -> None:
        pass


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
    # Keep the protocol on a private copy of fd 1 and point fd 1 (and sys.stdout) at stderr, so a stray
    # print or library write can never corrupt the JSON-RPC stream.
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        anyio.run(serve, StdinStream(0), StdoutStream(protocol_out), _delay_from_env())
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The demo agent's tour: the show of one prompt turn, step by step (reply, thought, plan, read, edit behind a
permission request, terminal). The protocol loop that runs it is in `demo.py`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import anyio
import msgspec

from acp_nvim.agents.demo_files import edited, excerpt, pick_edit_target, pick_read_target
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema

log = logging.getLogger("acp_nvim.agents.demo")
_T = TypeVar("_T")


def _text(text: str) -> schema.ContentBlockText:
    return schema.ContentBlockText(text=text)


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


class TourClient(Protocol):
    """What a turn needs of the agent: the client's capabilities, the pause between words, and the wire."""

    delay: float
    caps: schema.ClientCapabilities

    async def update(self, session: DemoSession, update: schema.SessionUpdate) -> None: ...

    async def call(self, method: str, params: object, result_type: type[_T]) -> _T: ...


class Turn:
    """One prompt turn's show. Every await is a cancellation point of the turn's scope."""

    def __init__(self, agent: TourClient, session: DemoSession, prompt: str) -> None:
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
            title = f"Demo: {excerpt(self.prompt, 40)}" if self.prompt else "Demo session"
            await self.send(schema.SessionUpdateSessionInfoUpdate(title=title))
            await self.send(schema.SessionUpdateAvailableCommandsUpdate(available_commands=COMMANDS))
        heard = f"“{excerpt(self.prompt, 80)}”" if self.prompt else "an empty prompt"
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
        summary = f"it starts with “{excerpt(first)}”." if first else "it is empty."
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

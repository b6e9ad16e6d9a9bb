"""Commands the agent runs itself, in the session reducer: only what is new of an output is rendered."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

from acp_nvim.client.session.shell import (
    OUTPUT_TAIL_CHARS,
    ExitStatus,
    OutputChange,
    command_of,
    meta_terminal,
)
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.transcript import ToolCallItem
from acp_nvim.nvim.render import OUTPUT_SECONDS, ChatRenderer
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s


def update(**fields: Any) -> s.SessionUpdate:
    raw = msgspec.Raw(msgspec.json.encode({"sessionId": "s", "update": fields}))
    notification = codec.decode_session_update(raw)
    assert notification is not None
    return notification.update


def text_content(text: str) -> list[dict[str, Any]]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def started(state: SessionState, command: Any = "ls -la") -> None:
    state.apply(
        update(
            sessionUpdate="tool_call",
            toolCallId="c",
            title="Run",
            kind="execute",
            rawInput={"command": command},
        )
    )


def resend(state: SessionState, text: str) -> list[OutputChange]:
    state.apply(update(sessionUpdate="tool_call_update", toolCallId="c", content=text_content(text)))
    return state.take_changes().output.get("1", [])


def test_an_output_resent_whole_yields_only_its_new_suffix() -> None:
    state = SessionState("s")
    started(state)
    state.take_changes()
    assert resend(state, "a\n") == [OutputChange("a\n")]
    assert resend(state, "a\nb\n") == [OutputChange("b\n")]
    assert resend(state, "a\nb\n") == []
    # Rewritten: shown afresh.
    assert resend(state, "x\n") == [OutputChange("x\n", reset=True)]


def test_a_fence_that_moves_down_is_not_part_of_the_output() -> None:
    state = SessionState("s")
    started(state)
    state.take_changes()
    assert resend(state, "```sh\n1\n```\n") == [OutputChange("1")]
    assert resend(state, "```sh\n1\n2\n```\n") == [OutputChange("\n2")]


def test_more_new_output_than_is_ever_shown_sends_its_tail() -> None:
    state = SessionState("s")
    started(state)
    state.take_changes()
    big = "x" * (OUTPUT_TAIL_CHARS * 3)
    (change,) = resend(state, big)
    assert change.reset and change.text == big[-OUTPUT_TAIL_CHARS:]


def test_not_a_command_without_execute_kind() -> None:
    state = SessionState("s")
    state.apply(update(sessionUpdate="tool_call", toolCallId="c", title="Read", kind="read", rawInput={}))
    item = state.item("1")
    assert isinstance(item, ToolCallItem) and item.shell is None


def test_command_lines() -> None:
    assert command_of({"command": ["bash", "-lc", "make test"]}) == "make test"
    assert command_of({"command": ["rg", "a b", "src"]}) == "rg 'a b' src"
    assert command_of({"command": "  echo hi "}) == "echo hi"
    assert command_of({"path": "x"}) is None
    assert command_of("ls") is None


def test_resending_the_output_does_not_redraw_the_tool_call() -> None:
    state = SessionState("s")
    started(state)
    state.take_changes()
    state.apply(update(sessionUpdate="tool_call_update", toolCallId="c", content=text_content("a")))
    changes = state.take_changes()
    assert changes.replaced == [] and changes.output == {"1": [OutputChange("a")]}
    state.apply(update(sessionUpdate="tool_call_update", toolCallId="c", status="completed"))
    assert state.take_changes().replaced == ["1"]


def test_an_exit_without_code_or_signal_is_not_an_exit() -> None:
    meta = {"terminal_exit": {"terminal_id": "c", "exit_code": None, "signal": None}}
    assert meta_terminal(meta) == (None, None, None)
    meta = {"terminal_exit": {"terminal_id": "c", "exit_code": None, "signal": "SIGTERM"}}
    assert meta_terminal(meta)[2] == ExitStatus(signal="SIGTERM")


class RecordingBridge:
    """Stands in for the bridge to Neovim: records each call's time and signals it."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.called = anyio.Event()

    def lua(self, code: str, *args: Any) -> None:
        self.calls.append(anyio.current_time())
        self.called.set()
        self.called = anyio.Event()


@pytest.mark.anyio
async def test_output_alone_is_held_back_but_not_a_message_after_it() -> None:
    state = SessionState("s")
    bridge = RecordingBridge()
    async with anyio.create_task_group() as tasks:
        renderer = ChatRenderer(bridge, state, "A", tasks.start_soon)  # type: ignore[arg-type]
        started(state)
        renderer.flush()
        with anyio.fail_after(5):
            for text in ("a\n", "a\nb\n"):
                called = bridge.called
                state.apply(
                    update(sessionUpdate="tool_call_update", toolCallId="c", content=text_content(text))
                )
                renderer.changed()
                await called.wait()
        # The second output waited for OUTPUT_SECONDS after the first.
        assert bridge.calls[2] - bridge.calls[1] >= OUTPUT_SECONDS * 0.9
        state.apply(
            update(sessionUpdate="tool_call_update", toolCallId="c", content=text_content("a\nb\nc\n"))
        )
        renderer.changed()
        with anyio.fail_after(5):
            while renderer._output_wait is None:  # the flush waits for the output's turn
                await anyio.sleep(0.001)
        called, asked = bridge.called, anyio.current_time()
        state.apply(update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "hi"}))
        renderer.changed()
        with anyio.fail_after(5):
            await called.wait()
        assert bridge.calls[-1] - asked < OUTPUT_SECONDS / 2


def test_a_command_in_an_acp_terminal_is_shown_by_that_terminal() -> None:
    # The demo agent's shape (and claude-code-acp's): kind execute, the command in rawInput, our terminal.
    state = SessionState("s")
    state.apply(
        update(
            sessionUpdate="tool_call",
            toolCallId="c",
            title="Run `ls`",
            kind="execute",
            rawInput={"command": "ls"},
            content=[{"type": "terminal", "terminalId": "term-1"}],
        )
    )
    item = state.item("1")
    assert isinstance(item, ToolCallItem) and item.shell is None

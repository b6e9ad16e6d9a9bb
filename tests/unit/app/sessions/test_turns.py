"""A prompt reaches the agent once the call that shows it has left for Neovim (`Turns._turn`)."""

from __future__ import annotations

import anyio
import pytest

from acp_nvim.app.sessions import turns
from acp_nvim.client.session.transcript import MessageItem, NoticeItem

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


async def test_the_agent_gets_the_prompt_after_the_call_that_shows_it_has_left() -> None:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    order: list[str] = []

    async def sent() -> None:
        # The chat's flush of the prompt was handed over before the wait.
        shown = [item.text for item in session.state.items if isinstance(item, MessageItem)]
        order.append(f"sent after {shown}")

    app.port.sent = sent  # type: ignore[method-assign]
    real_prompt = agent.prompt

    async def prompt(session_id: str, blocks: object) -> object:
        order.append("prompt")
        return await real_prompt(session_id, blocks)  # type: ignore[arg-type]

    agent.prompt = prompt  # type: ignore[method-assign]
    await app.turns.prompt("hello")
    assert order == ["sent after ['hello']", "prompt"]


async def test_a_prompt_still_goes_when_neovim_never_says_it_was_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(turns, "SENT_WAIT_S", 0.01)
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    app.port.sent = anyio.sleep_forever  # type: ignore[method-assign]
    with anyio.fail_after(5):
        await app.turns.prompt("hello")
    assert ("prompt", session.session_id) in agent.calls


async def test_a_turn_cancelled_before_its_prompt_left_never_reaches_the_agent() -> None:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    release = anyio.Event()
    waiting = anyio.Event()

    async def sent() -> None:
        waiting.set()
        await release.wait()

    app.port.sent = sent  # type: ignore[method-assign]
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.turns.prompt, "hello")
        with anyio.fail_after(5):
            await waiting.wait()
        await app.turns.cancel()
        release.set()
    assert ("prompt", session.session_id) not in agent.calls
    assert not session.in_turn
    notices = [item.text for item in session.state.items if isinstance(item, NoticeItem)]
    assert notices[-1] == "Turn ended: cancelled"

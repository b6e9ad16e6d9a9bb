"""The prompt queue (app/sessions/prompt_queue.py, its turns in app/sessions/turns.py): prompts sent while a
turn runs wait, shown under the chat, and go in order when it ends; edited, dropped, reordered; held by a
cancel; steered into the running turn where the agent takes it."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from anyio.abc import TaskGroup

from acp_nvim.app.runs import ChatSession
from acp_nvim.client.session.transcript import MessageItem, NoticeItem

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


async def until(condition: Callable[[], bool]) -> None:
    with anyio.fail_after(5):
        while not condition():
            await anyio.sleep(0)


async def started() -> tuple[App, FakeAgent, ChatSession]:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    return app, agent, session


async def hold_first(tg: TaskGroup, app: App, agent: FakeAgent) -> None:
    """The turn of the prompt "first" runs, held open until `agent.hold` is set."""
    agent.hold = anyio.Event()
    tg.start_soon(app.turns.prompt, "first")
    await until(lambda: agent.prompts[-1:] == ["first"])


def queued(session: ChatSession) -> list[str]:
    return [prompt.text for prompt in session.queue]


def shown(app: App) -> list[str]:
    """The lines of the queue the chat shows now."""
    _, view = app.port.queues[-1]
    return ["".join(text for text, _ in line) for line in view.lines]


async def test_prompts_sent_during_a_turn_are_queued_shown_and_sent_in_order_when_it_ends() -> None:
    app, agent, session = await started()
    async with anyio.create_task_group() as tg:
        await hold_first(tg, app, agent)
        await app.turns.prompt("second")
        await app.turns.prompt(
            "third", [{"kind": "selection", "path": "/p/a.py", "start": 1, "end": 2, "text": "x"}]
        )
        # Not sent, not refused: queued, and shown under the chat.
        assert agent.prompts == ["first"] and app.port.texts() == []
        assert queued(session) == ["second", "third"]
        assert shown(app) == [
            "Queued (sent when the turn ends):",
            "  1. second",
            "  2. third ↵ @a.py:1-2",
        ]
        agent.hold.set()
    # The agent received them after the turn, in order; the selection went with its prompt.
    assert agent.prompts == ["first", "second", "third a.py:1-2:\n```\nx\n```"]
    assert session.queue == [] and shown(app) == []
    user = [
        item.text for item in session.state.items if isinstance(item, MessageItem) and item.role == "user"
    ]
    assert user == ["first", "second", "third\n@a.py:1-2"]


async def test_a_queued_prompt_is_edited_dropped_and_reordered() -> None:
    app, agent, session = await started()
    async with anyio.create_task_group() as tg:
        await hold_first(tg, app, agent)
        for text in ("one", "two", "three"):
            await app.turns.prompt(text)
        one, two, three = (prompt.id for prompt in session.queue)
        await app.turns.queue_action(None, "up", three)
        assert queued(session) == ["one", "three", "two"]
        await app.turns.queue_action(None, "down", one)
        assert queued(session) == ["three", "one", "two"]
        await app.turns.queue_action(None, "down", two)  # the last stays last
        assert queued(session) == ["three", "one", "two"]
        await app.turns.queue_action(None, "drop", one)
        assert queued(session) == ["three", "two"]
        mention = {"kind": "file", "path": "/p/b.py", "name": "b.py", "mention": True}
        await app.turns.queue_action(None, "edit", two, "two, see @b.py", [mention])
        assert queued(session) == ["three", "two, see @b.py"]
        assert session.queue[1].attachments == [mention]
        assert shown(app)[1:] == ["  1. three", "  2. two, see @b.py"]
        # What was sent meanwhile (or dropped) is named, not guessed at.
        await app.turns.queue_action(None, "drop", one)
        assert app.port.texts()[-1] == "that prompt is no longer queued (it was sent, or dropped)"
        await app.turns.queue_action(None, "list")
        assert app.port.texts()[-1] == "queued prompts:\n1. three\n2. two, see @b.py"
        agent.hold.set()
    assert agent.prompts == ["first", "three", "two, see @b.py"]


async def test_cancel_keeps_the_queue_held_until_it_is_sent_or_cleared() -> None:
    app, agent, session = await started()
    async with anyio.create_task_group() as tg:
        await hold_first(tg, app, agent)
        await app.turns.prompt("second")
        await app.turns.prompt("third")
        await app.turns.cancel()
        agent.hold.set()
    # The cancelled turn ended; nothing queued went, nothing was dropped.
    assert agent.prompts == ["first"] and queued(session) == ["second", "third"]
    assert shown(app)[0] == "Queued (held: :AcpQueue send sends the next):"
    await app.turns.queue_action(None, "send")
    assert agent.prompts == ["first", "second", "third"] and session.queue == []
    # Cleared: nothing goes.
    agent.hold = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(app.turns.prompt, "fourth")
        await until(lambda: len(agent.prompts) == 4)
        await app.turns.prompt("fifth")
        await app.turns.queue_action(None, "clear")
        agent.hold.set()
    assert agent.prompts[-1] == "fourth" and session.queue == [] and shown(app) == []


async def test_steering_sends_a_queued_prompt_into_the_running_turn_only_where_advertised() -> None:
    app, agent, session = await started()
    async with anyio.create_task_group() as tg:
        await hold_first(tg, app, agent)
        await app.turns.prompt("later")
        # An agent that does not advertise it: no steer is offered, the prompt stays queued.
        assert app.port.queues[-1][1].steer is False
        await app.turns.queue_action(None, "steer")
        assert agent.steered == [] and queued(session) == ["later"]
        assert app.port.texts()[-1] == "Fake cannot be steered: the prompt goes when the turn ends"
        agent.steerable = True
        await app.turns.steer("go left")
        assert app.port.queues[-1][1].steer is True
        # Into the turn, once; the chat shows where it went in; what was queued before it still waits.
        assert agent.steered == ["go left"] and queued(session) == ["later"]
        kinds = [(type(item).__name__, getattr(item, "text", "")) for item in session.state.items[-2:]]
        assert kinds == [
            (NoticeItem.__name__, "Sent into the running turn:"),
            (MessageItem.__name__, "go left"),
        ]
        agent.hold.set()
    assert agent.prompts == ["first", "later"]


async def test_a_steer_the_turn_ended_before_goes_as_the_next_prompt() -> None:
    app, agent, session = await started()
    agent.steerable = True
    agent.steer_outcome = "promptRequired"
    async with anyio.create_task_group() as tg:
        await hold_first(tg, app, agent)
        await app.turns.steer("too late")
        # Not in the turn: it stays queued, and goes when the turn ends.
        assert agent.steered == ["too late"] and queued(session) == ["too late"]
        agent.hold.set()
    assert agent.prompts == ["first", "too late"] and session.queue == []
    # With no turn running, a steer is a prompt.
    await app.turns.steer("plain")
    assert agent.prompts[-1] == "plain" and agent.steered == ["too late"]

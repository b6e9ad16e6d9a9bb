"""A session the user asked for (`app/sessions/asked.py`): what opening it ends with, whatever way it ends,
and whichever way it is opened (`:AcpNew` in tests/unit/app/test_commands.py, a load in test_opening.py, a
fork in test_forking.py)."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path

import anyio
import pytest

from acp_nvim.app.runs import ChatSession
from acp_nvim.app.sessions.asked import open_asked, reopen_asked
from acp_nvim.app.sessions.prompt_queue import NOT_OPENED

from ..fakes import App, FakeAgent
from .test_git_diff import repo

pytestmark = pytest.mark.anyio


async def test_an_open_that_raises_gives_the_waiting_prompts_back_and_the_error_goes_on() -> None:
    app = App()
    agent = FakeAgent()
    await app.start("a", agent)
    go = anyio.Event()

    async def opening() -> ChatSession | None:
        await go.wait()
        raise RuntimeError("cut short")

    async def asked() -> None:
        with pytest.raises(RuntimeError):
            await open_asked(app.runs, app.turns, "a", "/p", opening)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(asked)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("kept")
        go.set()
    assert app.port.refused == [NOT_OPENED] and agent.prompts == []
    assert app.runs.current().opening is None
    await app.turns.prompt("again")
    assert agent.prompts == ["again"]


async def test_the_session_opened_is_returned_once_the_first_waiting_turn_ran() -> None:
    app = App()
    agent = FakeAgent()
    run, _ = await app.start("a", agent)
    go = anyio.Event()

    async def opening() -> ChatSession | None:
        await go.wait()
        return await app.sessions.new(run)

    got: list[ChatSession | None] = []

    async def asked() -> None:
        got.append(await open_asked(app.runs, app.turns, "a", "/p", opening))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(asked)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("first")
        go.set()
    (session,) = got
    assert session is not None and not session.in_turn
    assert agent.calls[-1] == ("prompt", session.session_id) and agent.prompts == ["first"]


async def reopened_with_prompts(app: App, fail: bool) -> None:
    """Two open sessions reopened one after the other (a restart's reopen), held until a prompt from the
    first one's chat and one from no chat have come."""
    run, first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None
    go = anyio.Event()

    async def reopen(old: ChatSession) -> ChatSession | None:
        await go.wait()
        if fail:
            raise RuntimeError("cut short")
        return old

    async def reopening() -> None:
        with contextlib.suppress(RuntimeError):
            await reopen_asked(app.runs, app.turns, run, [first, second], reopen)

    # As after a restart: the agent's sessions were forgotten when it stopped, none is current.
    app.runs.clear_current()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reopening)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("mine", session_id=first.session_id)
        await app.turns.prompt("from no chat")
        go.set()


async def test_a_reopen_sends_each_chats_prompt_to_its_session_and_one_from_no_chat_to_the_last() -> None:
    app = App()
    await reopened_with_prompts(app, fail=False)
    agent = app.runs.agents["a"].connection
    assert isinstance(agent, FakeAgent)
    assert agent.prompts == ["mine", "from no chat"]
    sent = [session for call, session in agent.calls if call == "prompt"]
    assert sent == ["sess-1", "sess-2"]
    assert app.runs.current().opening is None


async def test_a_reopen_cut_short_gives_back_what_waited_for_the_sessions_not_reopened() -> None:
    app = App()
    await reopened_with_prompts(app, fail=True)
    agent = app.runs.agents["a"].connection
    assert isinstance(agent, FakeAgent)
    assert agent.prompts == [] and app.port.refused == [NOT_OPENED, NOT_OPENED]
    assert app.runs.current().opening is None


async def test_a_prompt_from_no_chat_goes_to_another_agents_current_session_rather_than_wait() -> None:
    """Agent a's session is reopened while agent b's is current: a prompt from no chat goes to b's at once;
    one from no chat waits only while the current session is the one reopened (or none is)."""
    app = App()
    run, reopened = await app.start("a", FakeAgent())
    other = FakeAgent(session_prefix="b")
    _, current = await app.start("b", other)
    assert app.runs.current().session is current
    go = anyio.Event()

    async def reopen(old: ChatSession) -> ChatSession | None:
        await go.wait()
        return old

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reopen_asked, app.runs, app.turns, run, [reopened], reopen)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("now")
        assert other.prompts == ["now"]
        app.runs.use(reopened.session_id)
        assert app.runs.current().opening is not None
        go.set()
    assert app.runs.current().opening is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
async def test_a_waiting_prompts_diff_is_of_every_folder_of_the_session_being_opened(tmp_path: Path) -> None:
    app = App()
    await app.start("a", FakeAgent())
    one, two = repo(tmp_path / "one", {"a.txt": "a\n"}), repo(tmp_path / "two", {"b.txt": "b\n"})
    go = anyio.Event()

    async def opening() -> ChatSession | None:
        await go.wait()
        return None

    async def asked() -> None:
        await open_asked(app.runs, app.turns, "a", str(one), opening, directories=[str(two)])

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(asked)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("review @diff", [{"kind": "diff", "mention": True}])
        waiting = app.runs.current().opening
        assert waiting is not None
        (taken,) = waiting.waiting[0].attachments
        go.set()
    assert isinstance(taken, dict) and isinstance(taken["text"], str)
    assert f"# git diff of the repository {one} " in taken["text"] and "a/a.txt" in taken["text"]
    assert f"# git diff of the repository {two} " in taken["text"] and "a/b.txt" in taken["text"]

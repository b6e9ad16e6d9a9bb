"""A session the user asked for (`app/sessions/asked.py`): what opening it ends with, whatever way it ends,
and whichever way it is opened (`:AcpNew` in tests/unit/app/test_commands.py, a load in test_opening.py, a
fork in test_forking.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from acp_nvim.app.runs import ChatSession
from acp_nvim.app.sessions.asked import open_asked
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

"""The per-session sandboxes on an in-memory editor: the question for a path outside the project, its
answers ("always" holds for that path and action, "noui" refuses), escapes refused without asking. No Neovim.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.config.options import SandboxOptions
from acp_nvim.app.editor.port import SandboxQuestion
from acp_nvim.app.editor.sandbox import SessionSandboxes
from acp_nvim.jsonrpc import RpcError
from tests.unit.app.editor.fake_port import FakeEditorPort

ASK = EditorOptions(sandbox=SandboxOptions(outside="ask"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project").mkdir()
    (tmp_path / "outside.txt").write_text("x")
    return tmp_path / "project"


def sandboxes(editor: FakeEditorPort, project: Path) -> SessionSandboxes:
    return SessionSandboxes(
        editor, lambda: ASK, lambda session_id: [str(project)] if session_id == "s" else None
    )


@pytest.mark.anyio
async def test_always_holds_for_that_real_path_and_that_action(project: Path) -> None:
    editor = FakeEditorPort()
    boxes = sandboxes(editor, project)
    outside = str(project.parent / "outside.txt")
    async with anyio.create_task_group() as tasks:

        async def read() -> None:
            assert await boxes.check("s", outside, "read") == outside

        tasks.start_soon(read)
        question = await editor.asked(1)
        assert question.view == SandboxQuestion(path=outside, real=outside, action="read", session_id="s")
        question.give("always")
    assert await boxes.check("s", outside, "read") == outside
    assert len(editor.questions) == 1
    async with anyio.create_task_group() as tasks:

        async def write() -> None:
            with pytest.raises(RpcError) as err:
                await boxes.check("s", outside, "write")
            assert (
                err.value.message == f"the user refused to let the agent write {outside}: outside the project"
            )

        tasks.start_soon(write)
        (await editor.asked(2)).give("deny")


@pytest.mark.anyio
async def test_without_a_ui_the_question_is_refused(project: Path) -> None:
    editor = FakeEditorPort()
    boxes = sandboxes(editor, project)
    outside = str(project.parent / "outside.txt")
    async with anyio.create_task_group() as tasks:

        async def read() -> None:
            with pytest.raises(RpcError) as err:
                await boxes.check("s", outside, "read")
            assert "there is no UI to ask the user" in err.value.message
            assert err.value.data == {"uri": Path(outside).as_uri(), "reason": "outside_project"}

        tasks.start_soon(read)
        (await editor.asked(1)).give("noui")


@pytest.mark.anyio
async def test_an_escape_through_a_symlink_is_refused_without_asking(project: Path) -> None:
    editor = FakeEditorPort()
    boxes = sandboxes(editor, project)
    os.symlink(project.parent / "outside.txt", project / "link.txt")
    with pytest.raises(RpcError) as err:
        await boxes.check("s", str(project / "link.txt"), "read")
    assert "escapes through a symlink or '..' are refused" in err.value.message
    assert editor.questions == []


@pytest.mark.anyio
async def test_a_session_this_client_does_not_run_is_unknown(project: Path) -> None:
    with pytest.raises(RpcError) as err:
        await sandboxes(FakeEditorPort(), project).check("other", str(project / "a"), "read")
    assert err.value.code == -32002

"""`fs/*` served by the file service on an in-memory editor: the sandbox's check before the editor is asked,
the disk read by the host when no buffer holds the file, the agent's error for each fact the editor reports,
an allowed edit's tool call linked to the write that follows. Real files in a temp folder; no Neovim."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.config.options import FsOptions, SandboxOptions
from acp_nvim.app.editor.files import FileService
from acp_nvim.app.editor.sandbox import SessionSandboxes
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s
from tests.unit.app.editor.fake_port import FakeEditorPort

OPTIONS = EditorOptions(
    fs=FsOptions(max_read_bytes=1 << 20, max_buffer_bytes=64, autocmds=False),
    sandbox=SandboxOptions(outside="deny"),
)


def service(editor: FakeEditorPort, root: Path) -> FileService:
    sandboxes = SessionSandboxes(editor, lambda: OPTIONS, lambda session_id: [str(root)])
    return FileService(editor, sandboxes, lambda: OPTIONS)


@pytest.mark.anyio
async def test_a_buffer_is_read_through_the_editor_and_a_file_without_one_from_disk(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path)
    editor.buffers[str(tmp_path / "open.py")] = "unsaved\n"
    (tmp_path / "closed.py").write_text("one\ntwo\nthree\n")
    read = await files.read(s.ReadTextFileRequest(session_id="s", path=str(tmp_path / "open.py")))
    assert read.content == "unsaved\n"
    sliced = s.ReadTextFileRequest(session_id="s", path=str(tmp_path / "closed.py"), line=2, limit=1)
    assert (await files.read(sliced)).content == "two"
    assert editor.reads == [str(tmp_path / "open.py"), str(tmp_path / "closed.py")]


@pytest.mark.anyio
async def test_a_path_outside_the_project_is_refused_before_the_editor_is_asked(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path / "project")
    (tmp_path / "project").mkdir()
    with pytest.raises(RpcError) as err:
        await files.read(s.ReadTextFileRequest(session_id="s", path=str(tmp_path / "secret.txt")))
    assert err.value.code == -32602
    assert err.value.data == {"uri": (tmp_path / "secret.txt").as_uri(), "reason": "outside_project"}
    assert editor.reads == [] and editor.questions == []


@pytest.mark.anyio
async def test_a_write_the_editor_refuses_is_the_agent_s_error_and_the_user_hears_of_it(
    tmp_path: Path,
) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path)
    editor.write_fact = "changed_on_disk"
    path = str(tmp_path / "a.py")
    with pytest.raises(RpcError) as err:
        await files.write(s.WriteTextFileRequest(session_id="s", path=path, content="x\n"))
    assert err.value.code == -32603
    assert err.value.data == {"uri": Path(path).as_uri(), "reason": "changed_on_disk"}
    assert [level for _, level in editor.notified] == [3]
    assert "not overwriting it with the agent's write" in editor.notified[0][0]


@pytest.mark.anyio
async def test_binary_content_is_refused_before_the_editor_is_asked(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path)
    with pytest.raises(RpcError) as err:
        await files.write(s.WriteTextFileRequest(session_id="s", path=str(tmp_path / "b"), content="a\0b"))
    assert "NUL byte" in err.value.message
    assert editor.writes == []


@pytest.mark.anyio
async def test_a_write_too_large_for_a_buffer_goes_to_disk_by_the_host(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path)
    path = tmp_path / "large.txt"
    await files.write(s.WriteTextFileRequest(session_id="s", path=str(path), content="x" * 100))
    assert path.read_text() == "x" * 100
    assert editor.writes == [] and editor.written_by_host == [str(path)]


@pytest.mark.anyio
async def test_an_allowed_edit_links_its_tool_call_to_the_write_that_follows(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    files = service(editor, tmp_path)
    path = str(tmp_path / "edited.py")
    call = s.ToolCallUpdate(
        tool_call_id="t1", content=[s.ToolCallContentDiff(path=path, new_text="new\n", old_text=None)]
    )
    options = [s.PermissionOption(option_id="ok", name="OK", kind="allow_once")]
    request = s.RequestPermissionRequest(session_id="s", tool_call=call, options=options)
    files.permission_answered(request, s.RequestPermissionOutcomeSelected(option_id="ok"))
    await files.write(s.WriteTextFileRequest(session_id="s", path=path, content="new\n"))
    await files.write(s.WriteTextFileRequest(session_id="s", path=path, content="newer\n"))
    assert [options.tool_call_id for _, _, options in editor.writes] == ["t1", None]
    files.forget("s")
    assert editor.forgotten == ["s"]

"""`terminal/*` served by the terminal service on an in-memory editor: the spec checked before the editor
runs it, ids owned by their session, the output cut at a character boundary, a session's end killing its own
commands only. No Neovim."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.config.options import SandboxOptions
from acp_nvim.app.editor.port import TerminalExit
from acp_nvim.app.editor.sandbox import SessionSandboxes
from acp_nvim.app.editor.terminal_rules import MAX_OUTPUT_BYTES
from acp_nvim.app.editor.terminals import TerminalService
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s
from tests.unit.app.editor.fake_port import FakeEditorPort

OPTIONS = EditorOptions(sandbox=SandboxOptions(outside="deny"))


def service(editor: FakeEditorPort, root: Path) -> TerminalService:
    return TerminalService(editor, SessionSandboxes(editor, lambda: OPTIONS, lambda session_id: [str(root)]))


@pytest.mark.anyio
async def test_a_command_runs_in_the_session_s_cwd_with_the_output_capped(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    terminals = service(editor, tmp_path)
    created = await terminals.create(
        s.CreateTerminalRequest(session_id="s", command="ls", env=[s.EnvVariable(name="A", value="1")])
    )
    spec = editor.specs[0]
    assert (spec.command, spec.cwd, spec.output_byte_limit) == ("ls", str(tmp_path), MAX_OUTPUT_BYTES)
    assert [(e.name, e.value) for e in spec.env] == [("A", "1")]
    assert created.terminal_id == "term-1"


@pytest.mark.anyio
async def test_a_bad_spec_is_refused_before_the_editor_runs_it(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    terminals = service(editor, tmp_path)
    for request, words in (
        (s.CreateTerminalRequest(session_id="s", command=""), "command must be a non-empty string"),
        (s.CreateTerminalRequest(session_id="s", command="ls", output_byte_limit=-1), "non-negative"),
        (
            s.CreateTerminalRequest(session_id="s", command="ls", cwd=str(tmp_path / "none")),
            "not a directory",
        ),
        (s.CreateTerminalRequest(session_id="s", command="ls", cwd="/"), "outside the project"),
    ):
        with pytest.raises(RpcError) as err:
            await terminals.create(request)
        assert err.value.code == -32602
        assert words in err.value.message
    assert editor.specs == []


@pytest.mark.anyio
async def test_a_terminal_belongs_to_the_session_that_created_it(tmp_path: Path) -> None:
    editor = FakeEditorPort()
    terminals = service(editor, tmp_path)
    created = await terminals.create(s.CreateTerminalRequest(session_id="mine", command="ls"))
    with pytest.raises(RpcError) as err:
        await terminals.output(s.TerminalOutputRequest(session_id="other", terminal_id=created.terminal_id))
    assert err.value.code == -32002
    assert err.value.message == f"unknown terminal id: {created.terminal_id}"
    await terminals.create(s.CreateTerminalRequest(session_id="other", command="ls"))
    terminals.end_session("mine")
    assert editor.killed == [created.terminal_id]


@pytest.mark.anyio
async def test_output_is_cut_at_a_character_boundary_and_the_exit_status_comes_with_it(
    tmp_path: Path,
) -> None:
    editor = FakeEditorPort()
    terminals = service(editor, tmp_path)
    request = s.CreateTerminalRequest(session_id="s", command="printf", output_byte_limit=4)
    terminal_id = (await terminals.create(request)).terminal_id
    editor.streams[terminal_id] = b"a" + "\u20ac".encode() * 2  # Neovim keeps the last 4 bytes
    editor.exits[terminal_id] = TerminalExit(exit_code=3)
    output = await terminals.output(s.TerminalOutputRequest(session_id="s", terminal_id=terminal_id))
    assert (output.output, output.truncated) == ("\u20ac", True)
    assert output.exit_status == s.TerminalExitStatus(exit_code=3)
    waited = await terminals.wait_for_exit(
        s.WaitForTerminalExitRequest(session_id="s", terminal_id=terminal_id)
    )
    assert waited.exit_code == 3
    await terminals.release(s.ReleaseTerminalRequest(session_id="s", terminal_id=terminal_id))
    assert editor.released == [terminal_id]
    with pytest.raises(RpcError):
        await terminals.kill(s.KillTerminalRequest(session_id="s", terminal_id=terminal_id))

"""Review of the agent's writes through the full stack: :AcpReview's quickfix list, the hunk mappings, and the
exact original bytes back on disk after a reject; an edit the user allowed in a permission request is linked
to its tool call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim

ORIGINAL = b"1\n2\n3\n4\n5\n6\n7\n8\n9\n"
EDITED = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"


def keys(nvim: Nvim, text: str) -> None:
    # "m": through the mappings, "x": run now.
    nvim.api.feedkeys(nvim.api.replace_termcodes(text, True, False, True), "mx", False)


def hunks(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return require('acp_nvim.editor.review').hunks()")  # type: ignore[no-any-return]


def test_review_hunks_files_and_all(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    r, s_, t = project / "r.txt", project / "s.txt", project / "t.txt"
    r.write_bytes(ORIGINAL)
    s_.write_bytes(b"keep\r\nme\r\n")
    t.write_bytes(b"old\n")
    permission = {
        "toolCall": {
            "toolCallId": "edit-1",
            "title": "Edit r.txt",
            "kind": "edit",
            "content": [{"type": "diff", "path": str(r), "oldText": ORIGINAL.decode(), "newText": EDITED}],
        }
    }
    turn1 = [
        {"permission": permission},
        {"write": {"path": str(r), "content": EDITED}},
        {"write": {"path": str(s_), "content": "changed\nme\n"}},
    ]
    turn2 = [{"write": {"path": str(t), "content": "new\n"}}]
    agent.start([turn1, turn2], project)
    nvim.lua("acp_test.answers = {'allow'}")
    agent.turn()
    assert r.read_text() == EDITED
    assert s_.read_bytes() == b"changed\r\nme\r\n"

    nvim.api.command("AcpReview")
    qf = nvim.lua("return vim.fn.getqflist()")
    names = [nvim.lua("return vim.api.nvim_buf_get_name(...)", e["bufnr"]) for e in qf]
    assert names == [str(r.resolve()), str(r.resolve()), str(s_.resolve())]
    assert [e["lnum"] for e in qf] == [2, 8, 1]
    r_hunks = [h for h in hunks(nvim) if h["path"] == str(r.resolve())]
    # Linked to the permission request whose diff the user allowed.
    assert [h["tool_call_id"] for h in r_hunks] == ["edit-1", "edit-1"]

    # From the quickfix list into the file, then the buffer mappings.
    nvim.api.command("cfirst")
    assert nvim.api.current.window.cursor[0] == 2
    keys(nvim, "]h")
    assert nvim.api.current.window.cursor[0] == 8
    # The key asks for a reason (Neovim's own input() here); <CR>: none.
    keys(nvim, "\\ar<CR>")
    assert r.read_text() == "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"
    keys(nvim, "[h")
    assert nvim.api.current.window.cursor[0] == 2
    keys(nvim, "\\aa")
    assert [h for h in hunks(nvim) if h["path"] == str(r.resolve())] == []
    assert r.read_text() == "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"

    # Reject everything that is left: the exact original bytes, CRLF included.
    nvim.api.command("AcpReview reject")
    assert s_.read_bytes() == b"keep\r\nme\r\n"
    assert hunks(nvim) == []

    agent.turn()
    assert t.read_text() == "new\n"
    assert len(hunks(nvim)) == 1
    nvim.api.command("AcpReview accept")
    assert hunks(nvim) == []
    assert t.read_text() == "new\n"
    nvim.api.command("AcpReview")
    assert any("no agent edits" in n["msg"] for n in nvim.notes())


def test_reject_a_created_file_removes_it(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    agent.start([[{"write": {"path": "${CWD}/made/new.txt", "content": "hello\n"}}]], project)
    agent.turn()
    assert (project / "made" / "new.txt").read_text() == "hello\n"
    nvim.api.command("AcpReview")
    nvim.api.command("cfirst")
    # The key asks for a reason first (Neovim's own input() here); <CR>: none.
    keys(nvim, "\\aR<CR>")
    assert not (project / "made" / "new.txt").exists()

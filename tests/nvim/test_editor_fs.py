"""fs/read_text_file and fs/write_text_file through the full stack: the scripted SDK agent asks, the client
decodes, the editor services check the sandbox and call lua/acp_nvim/editor/fs in a real headless Neovim."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.nvim.agent_io import Scripted, error, result
from tests.nvim.conftest import Nvim


def edit_buffer(nvim: Nvim, path: Path, lines: list[str]) -> int:
    """Opens `path` and replaces its text with `lines` without saving (the user's unsaved edits)."""
    nvim.api.command(f"edit {path}")
    buf = nvim.api.current.buffer
    buf[:] = lines
    assert nvim.lua("return vim.bo.modified")
    return int(buf.number)


def test_reads(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (project / "edited.txt").write_text("on disk\n")
    (project / "real.txt").write_text("real on disk\n")
    (project / "link.txt").symlink_to(project / "real.txt")
    (project / "dir").mkdir()
    (project / "latin1.txt").write_bytes(b"caf\xe9\n")
    (project / "binary.bin").write_bytes(b"ab\x00cd")
    (project / "big.txt").write_text("x" * 300)
    cwd = "${CWD}"
    reads = [
        {"path": f"{cwd}/a.txt"},
        {"path": f"{cwd}/a.txt", "line": 1, "limit": 2},
        {"path": f"{cwd}/a.txt", "line": 2, "limit": 1},
        {"path": f"{cwd}/a.txt", "line": 3, "limit": 5},
        {"path": f"{cwd}/a.txt", "line": 9},
        {"path": f"{cwd}/edited.txt"},
        {"path": f"{cwd}/link.txt"},
        {"path": f"{cwd}/missing.txt"},
        {"path": f"{cwd}/dir"},
        {"path": f"{cwd}/latin1.txt"},
        {"path": f"{cwd}/binary.bin"},
        {"path": f"{cwd}/big.txt"},
        # The SDK cannot send a negative line or limit (it drops them); 0 is the edge it can send.
        {"path": f"{cwd}/a.txt", "line": 0},
        {"path": f"{cwd}/a.txt", "line": 2, "limit": 0},
        {"path": "a.txt"},
    ]
    agent.start([[{"read": r} for r in reads]], project, fs={"max_read_bytes": 200})
    caps = agent.initialize()["clientCapabilities"]
    assert caps["fs"] == {"readTextFile": True, "writeTextFile": True} and caps["terminal"] is True
    edit_buffer(nvim, project / "edited.txt", ["unsaved", "edits"])
    # The real file is loaded and edited; the agent reads it through the symlink.
    edit_buffer(nvim, project / "real.txt", ["buffer text"])
    answers = agent.turn()
    assert len(answers) == len(reads)
    a = [result(x)["content"] if x["kind"] == "result" else x for x in answers]
    assert a[0] == "alpha\nbeta\ngamma\n"
    assert a[1] == "alpha\nbeta"
    assert a[2] == "beta"
    assert a[3] == "gamma"
    # A line past the end reads as empty text (documented), not as an error.
    assert a[4] == ""
    assert a[5] == "unsaved\nedits\n"
    assert a[6] == "buffer text\n"
    missing = error(answers[7])
    assert missing["code"] == -32002
    assert missing["data"]["uri"] == (project / "missing.txt").as_uri()
    assert error(answers[8])["code"] == -32602 and "directory" in answers[8]["message"]
    assert "UTF-8" in error(answers[9])["message"]
    assert "binary" in error(answers[10])["message"]
    assert "too large" in error(answers[11])["message"]
    assert error(answers[12])["code"] == -32602 and "line" in answers[12]["message"]
    assert a[13] == ""
    assert error(answers[14])["code"] == -32602 and "absolute" in answers[14]["message"]
    # Reading loads nothing: a file that was not open stays unopened.
    assert nvim.lua("return vim.fn.bufloaded(...)", str(project / "a.txt")) == 0


def test_writes(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "open.txt").write_text("one\ntwo\nthree\n")
    (project / "closed.txt").write_text("keep\nold\n")
    (project / "dos.txt").write_bytes(b"a\r\nb\r\n")
    (project / "noeol.txt").write_bytes(b"x\ny")
    writes = [
        {"path": "${CWD}/open.txt", "content": "one\nTWO\nthree\n"},
        {"path": "${CWD}/closed.txt", "content": "keep\nnew\n"},
        {"path": "${CWD}/new/deeper/file.txt", "content": "fresh\n"},
        {"path": "${CWD}/dos.txt", "content": "a\nB\n"},
        {"path": "${CWD}/noeol.txt", "content": "x\nY"},
    ]
    agent.start([[{"write": w} for w in writes]], project)
    buf = edit_buffer(nvim, project / "open.txt", ["one", "two", "three", "my unsaved line"])
    answers = agent.turn()
    assert [x["kind"] for x in answers] == ["result"] * len(writes), answers
    assert (project / "open.txt").read_text() == "one\nTWO\nthree\n"
    # The agent's change and the user's unsaved line are both in the buffer (merged, fs/merge.lua).
    assert nvim.api.buffers[buf][:] == ["one", "TWO", "three", "my unsaved line"]
    assert nvim.lua("return vim.bo[...].modified", buf) is True
    assert not any("unsaved" in n["msg"] or "conflict" in n["msg"] for n in nvim.notes())
    # One `u` undoes the agent's write (a single undo step): the buffer as the user left it.
    nvim.api.command("normal! u")
    assert nvim.api.buffers[buf][:] == ["one", "two", "three", "my unsaved line"]
    assert (project / "closed.txt").read_text() == "keep\nnew\n"
    assert (project / "new" / "deeper" / "file.txt").read_text() == "fresh\n"
    assert (project / "dos.txt").read_bytes() == b"a\r\nB\r\n"
    assert (project / "noeol.txt").read_bytes() == b"x\nY"


def test_overlapping_write_becomes_a_conflict_the_user_resolves(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    target = project / "clash.txt"
    target.write_text("head\nold\ntail\n")
    steps = [
        {"write": {"path": "${CWD}/clash.txt", "content": "head\nagent's line\ntail\n"}},
        {"read": {"path": "${CWD}/clash.txt"}},
    ]
    agent.start([steps], project)
    buf = edit_buffer(nvim, target, ["head", "my line", "tail"])
    answer, read_back = agent.turn()
    assert answer["kind"] == "result", answer
    # Reading it back, the agent gets its own side of the conflict, not the markers.
    assert result(read_back)["content"] == "head\nagent's line\ntail\n"
    # The agent can read back what it wrote from disk; the user's line is in the buffer, unsaved.
    assert target.read_text() == "head\nagent's line\ntail\n"
    marked = ["head", "<<<<<<< yours", "my line", "=======", "agent's line", ">>>>>>> agent", "tail"]
    assert nvim.api.buffers[buf][:] == marked
    assert nvim.lua("return vim.bo[...].modified", buf) is True
    notes = [n["msg"] for n in nvim.notes()]
    assert any("1 conflict(s) of the agent's edit" in n for n in notes), notes
    assert not any("rewrote" in n for n in notes)
    # Reading it back, the agent gets its own side of the conflict, not the markers.
    assert (
        nvim.lua("return require('acp_nvim.editor.fs').read(...).content", str(target))
        == "head\nagent's line\ntail\n"
    )
    # The review has the agent's edit as it landed in the buffer: the conflict, as one hunk.
    (hunk,) = nvim.lua("return require('acp_nvim.editor.review').hunks()")
    assert (hunk["bufnr"], hunk["lnum"], hunk["end_lnum"], hunk["old"]) == (buf, 2, 6, ["my line"]), hunk
    nvim.api.current.window.cursor = (3, 0)
    nvim.api.command("AcpConflict theirs")
    assert nvim.api.buffers[buf][:] == ["head", "agent's line", "tail"]
    nvim.api.command("normal! u")
    assert nvim.api.buffers[buf][:] == marked
    nvim.api.command("AcpConflict ours")
    assert nvim.api.buffers[buf][:] == ["head", "my line", "tail"]
    nvim.api.command("normal! u")
    nvim.api.command("AcpConflict both")
    assert nvim.api.buffers[buf][:] == ["head", "my line", "agent's line", "tail"]
    nvim.api.command("normal! uu")
    assert nvim.api.buffers[buf][:] == ["head", "my line", "tail"]


def test_write_behind_a_changed_file_is_a_conflict(nvim: Nvim, agent: Scripted, project: Path) -> None:
    target = project / "f.txt"
    target.write_text("v1\n")
    agent.start([[{"write": {"path": "${CWD}/f.txt", "content": "agent\n"}}]], project)
    nvim.api.command(f"edit {target}")
    # Someone else changes the file on disk (different size, so the stamp surely differs).
    target.write_text("changed elsewhere\n")
    (answer,) = agent.turn()
    assert error(answer)["data"]["reason"] == "changed_on_disk"
    assert target.read_text() == "changed elsewhere\n"
    assert nvim.api.current.buffer[:] == ["v1"]
    assert any("not overwriting" in n["msg"] for n in nvim.notes())


def test_capabilities_follow_the_options(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "a.txt").write_text("a\n")
    steps = [{"read": {"path": "${CWD}/a.txt"}}, {"write": {"path": "${CWD}/a.txt", "content": "b\n"}}]
    agent.start([steps], project, capabilities={"fs_write": False, "terminal": False})
    caps = agent.initialize()["clientCapabilities"]
    # Defaults (false) are left out of the wire.
    assert caps["fs"] == {"readTextFile": True}
    assert caps.get("terminal", False) is False
    read, write = agent.turn()
    assert result(read)["content"] == "a\n"
    assert error(write)["code"] == -32601
    assert (project / "a.txt").read_text() == "a\n"


def test_follow_shows_what_the_agent_reads(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "a.txt").write_text("1\n2\n3\n4\n")
    agent.start([[{"read": {"path": "${CWD}/a.txt", "line": 3, "limit": 1}}]], project, follow=True)
    agent.turn()
    nvim.wait(
        "(function() for _, w in ipairs(vim.api.nvim_list_wins()) do"
        " if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) == args[1]"
        " and vim.api.nvim_win_get_cursor(w)[1] == 3 then return true end end end)()",
        10,
        str((project / "a.txt").resolve()),
    )


def test_bad_option_is_reported(nvim: Nvim) -> None:
    ok = nvim.lua(
        "return require('acp_nvim').setup({ python = ..., sandbox = { outside = 'maybe' }, follow = 1 })",
        sys.executable,
    )
    # Named by the host, the options' owner, once it runs.
    assert ok is True
    nvim.wait_configured()
    text = "\n".join(n["msg"] for n in nvim.notes())
    assert "sandbox.outside" in text and "follow" in text

"""Per-hunk review of agent edits (lua/acp_nvim/editor/review.lua) in a real headless Neovim, real files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

R = 'require("acp_nvim.editor.review")'


def write(nvim: Any, path: Path, content: str, session: str = "s1", tool_call_id: str | None = None) -> Any:
    res = nvim.exec_lua(
        'return require("acp_nvim.editor.fs").write(...)',
        str(path),
        content,
        {"session_id": session, "tool_call_id": tool_call_id},
    )
    assert res["ok"] is True, res
    return res


def review(nvim: Any, fn: str, *args: Any) -> Any:
    return nvim.exec_lua(f"return {R}.{fn}(...)", *args)


def hunks(nvim: Any, session: str | None = "s1") -> list[dict[str, Any]]:
    return list(nvim.exec_lua(f"return {R}.hunks(...)", session))


def marks(nvim: Any, buf: int) -> list[Any]:
    return list(
        nvim.exec_lua(
            f"return vim.api.nvim_buf_get_extmarks(..., {R}.ns, 0, -1, {{}})",
            buf,
        )
    )


ORIGINAL = "".join(f"line {i}\n" for i in range(1, 21))


def three_changes() -> str:
    lines = [f"line {i}" for i in range(1, 21)]
    lines[1] = "CHANGED 2"  # change
    lines.insert(10, "ADDED")  # addition after line 10
    del lines[17]  # deletion of line 17
    return "\n".join(lines) + "\n"


def test_hunks_are_recorded_with_marks_and_tool_call(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    res = write(nvim_clean, f, three_changes(), tool_call_id="call-1")
    hs = hunks(nvim_clean)
    assert [(h["lnum"], h["added"], h["removed"]) for h in hs] == [(2, 1, 1), (11, 1, 0), (18, 0, 1)]
    assert [h["old"] for h in hs] == [["line 2"], [], ["line 17"]]
    assert {h["tool_call_id"] for h in hs} == {"call-1"}
    assert len(marks(nvim_clean, res["bufnr"])) == 3
    files = review(nvim_clean, "files", "s1")
    assert [(x["path"], x["hunks"]) for x in files] == [(str(f), 3)]
    assert hunks(nvim_clean, "other-session") == []


def test_accept_and_reject_single_hunks(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    # Reject the deletion: line 17 comes back, on disk too.
    ok = review(nvim_clean, "reject_hunk", buf, 17)
    assert ok == [True, None] or ok is True
    text = f.read_text()
    assert "line 17\n" in text and "CHANGED 2" in text and "ADDED" in text
    # Accept the change: it stays, only the record goes.
    assert review(nvim_clean, "accept_hunk", buf, 1) is True
    assert [h["lnum"] for h in hunks(nvim_clean)] == [11]
    assert "CHANGED 2" in f.read_text()
    # Reject the addition with the cursor on it, through the buffer-local mapping.
    nvim_clean.api.set_current_buf(buf)
    nvim_clean.current.window.cursor = (11, 0)
    nvim_clean.exec_lua('vim.g.mapleader = "\\\\"')
    maps = nvim_clean.exec_lua(
        "return vim.tbl_map(function(m) return m.desc end, vim.api.nvim_buf_get_keymap(..., 'n'))", buf
    )
    assert "ACP: reject agent hunk" in maps
    nvim_clean.exec_lua(f"{R}.reject_hunk()")
    assert f.read_text() == ORIGINAL.replace("line 2\n", "CHANGED 2\n")
    assert hunks(nvim_clean) == []
    assert marks(nvim_clean, buf) == []
    maps = nvim_clean.exec_lua(
        "return vim.tbl_map(function(m) return m.desc or '' end, vim.api.nvim_buf_get_keymap(..., 'n'))", buf
    )
    assert not any(m.startswith("ACP:") for m in maps)


def test_reject_is_undoable(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    review(nvim_clean, "reject_file", buf)
    assert f.read_text() == ORIGINAL
    nvim_clean.api.set_current_buf(buf)
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == three_changes().splitlines()


def test_reject_file_and_all_restore_exact_bytes(nvim_clean: Any, tmp_path: Path) -> None:
    crlf = tmp_path / "dos.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    noeol = tmp_path / "noeol.txt"
    noeol.write_bytes(b"x\ny")
    plain = tmp_path / "plain.txt"
    plain.write_text(ORIGINAL)
    created = tmp_path / "new" / "made.txt"
    write(nvim_clean, crlf, "one\nTWO\nthree\nfour\n")
    write(nvim_clean, noeol, "x\nY\nz\n")
    write(nvim_clean, plain, three_changes())
    write(nvim_clean, created, "brand new\n")
    assert crlf.read_bytes() == b"one\r\nTWO\r\nthree\r\nfour\r\n"
    assert noeol.read_bytes() == b"x\nY\nz\n"
    assert created.exists()
    # One file rejected alone.
    plain_buf = int(nvim_clean.funcs.bufnr(str(plain)))
    assert review(nvim_clean, "reject_file", plain_buf) in (True, [True, None])
    assert plain.read_text() == ORIGINAL
    # The rest at once.
    ok = review(nvim_clean, "reject_all", "s1")
    assert ok in (True, [True, {}])
    assert crlf.read_bytes() == b"one\r\ntwo\r\nthree\r\n"
    assert noeol.read_bytes() == b"x\ny"
    assert not created.exists()
    assert hunks(nvim_clean, None) == []


def test_reject_restores_an_empty_file(nvim_clean: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    write(nvim_clean, empty, "content\n")
    review(nvim_clean, "reject_all", "s1")
    assert empty.exists() and empty.read_bytes() == b""
    full = tmp_path / "full.txt"
    full.write_text("a\nb\n")
    write(nvim_clean, full, "")
    assert full.read_bytes() == b""
    review(nvim_clean, "reject_all", "s1")
    assert full.read_bytes() == b"a\nb\n"


def test_accept_file_and_all(nvim_clean: Any, tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(ORIGINAL)
    b.write_text(ORIGINAL)
    buf_a = write(nvim_clean, a, three_changes())["bufnr"]
    buf_b = write(nvim_clean, b, three_changes(), session="s2")["bufnr"]
    assert review(nvim_clean, "accept_file", buf_a) == 3
    assert marks(nvim_clean, buf_a) == []
    assert a.read_text() == three_changes()
    assert review(nvim_clean, "accept_all", None) == 3
    assert marks(nvim_clean, buf_b) == []
    assert hunks(nvim_clean, None) == []
    assert b.read_text() == three_changes()


def test_successive_writes_reject_to_the_first_original(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    write(nvim_clean, f, ORIGINAL.replace("line 5\n", "five\n"), tool_call_id="c1")
    write(
        nvim_clean,
        f,
        ORIGINAL.replace("line 5\n", "FIVE\nand more\n").replace("line 15\n", "fifteen\n"),
        tool_call_id="c2",
    )
    hs = hunks(nvim_clean)
    assert [(h["lnum"], h["added"], h["old"], h["tool_call_id"]) for h in hs] == [
        (5, 2, ["line 5"], "c2"),
        (16, 1, ["line 15"], "c2"),
    ]
    review(nvim_clean, "reject_all", "s1")
    assert f.read_text() == ORIGINAL


def test_hunks_follow_user_edits_and_user_edits_survive_reject(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    nvim_clean.command(f"edit {f}")
    write(nvim_clean, f, ORIGINAL.replace("line 10\n", "agent ten\n"))
    # The user adds lines above the hunk; the hunk moves with its text.
    nvim_clean.current.buffer.append(["user 1", "user 2"], 0)
    nvim_clean.command("write")
    assert [h["lnum"] for h in hunks(nvim_clean)] == [12]
    assert review(nvim_clean, "reject_hunk", 0, 11) in (True, [True, None])
    assert f.read_text() == "user 1\nuser 2\n" + ORIGINAL


def test_quickfix_and_hunk_navigation(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    assert review(nvim_clean, "quickfix", "s1") == 3
    qf = nvim_clean.funcs.getqflist()
    assert [(e["bufnr"], e["lnum"]) for e in qf] == [(buf, 2), (buf, 11), (buf, 18)]
    assert all(e["text"].startswith("agent edit") for e in qf)
    nvim_clean.api.set_current_win(nvim_clean.funcs.win_getid(1))
    nvim_clean.api.set_current_buf(buf)
    nvim_clean.current.window.cursor = (1, 0)
    review(nvim_clean, "next_hunk")
    assert nvim_clean.current.window.cursor[0] == 2
    review(nvim_clean, "next_hunk")
    assert nvim_clean.current.window.cursor[0] == 11
    review(nvim_clean, "prev_hunk")
    assert nvim_clean.current.window.cursor[0] == 2
    review(nvim_clean, "prev_hunk")  # wraps
    assert nvim_clean.current.window.cursor[0] == 18


def buffer_maps(nvim: Any, buf: int) -> dict[str, str]:
    """The normal-mode mappings of `buf`: key -> description."""
    return nvim.exec_lua(  # type: ignore[no-any-return]
        """local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_keymap(..., "n")) do out[m.lhs] = m.desc end
        return out""",
        buf,
    )


def setup(nvim: Any, opts: dict[str, Any]) -> Any:
    """`require("acp_nvim").setup(opts)` as a user calls it (no host started ahead), and what it notified once
    the host, started as a command starts it, has validated the options."""
    return nvim.exec_lua(
        """local notes = {}
        local notify = vim.notify
        vim.notify = function(msg) table.insert(notes, msg) end
        local defaults = { prestart_host = false, python = ... }
        local ok = require("acp_nvim").setup(vim.tbl_extend("force", defaults, select(2, ...)))
        require("acp_nvim.host").start()
        local configured = vim.wait(15000, require("acp_nvim.config").is_configured, 10)
        vim.notify = notify
        return { ok and configured, notes }""",
        sys.executable,
        opts,
    )


def test_setup_changes_the_mappings(nvim_clean: Any, tmp_path: Path) -> None:
    ok, notes = setup(nvim_clean, {"review": {"keymaps": {"accept_hunk": "ga", "reject_hunk": False}}})
    assert ok is True, notes
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    maps = buffer_maps(nvim_clean, buf)
    assert maps.get("ga") == "ACP: accept agent hunk"
    assert "ACP: reject agent hunk" not in maps.values()
    assert maps.get("]h") == "ACP: next agent hunk"


def test_a_configured_key_settles_the_hunk_under_the_cursor(nvim_clean: Any, tmp_path: Path) -> None:
    ok, notes = setup(nvim_clean, {"review": {"keymaps": {"accept_hunk": "ga"}}})
    assert ok is True, notes
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    nvim_clean.api.set_current_buf(buf)
    nvim_clean.current.window.cursor = (2, 0)
    nvim_clean.exec_lua('vim.api.nvim_feedkeys("ga", "x", false)')
    assert [h["lnum"] for h in hunks(nvim_clean)] == [11, 18]
    assert "CHANGED 2" in nvim_clean.current.buffer[1]


def test_an_invalid_review_key_is_named_and_the_default_kept(nvim_clean: Any, tmp_path: Path) -> None:
    ok, notes = setup(nvim_clean, {"review": {"keymaps": {"accept_hunk": 42, "next_hunk": "", "nope": "x"}}})
    # setup() itself names only the options read before a host runs; the host names these.
    assert ok is True
    (note,) = notes
    assert "`review.keymaps.accept_hunk` must be a key (a non-empty string) or false, got number" in note
    assert "`review.keymaps.next_hunk` must be a key (a non-empty string) or false, got string" in note
    assert "unknown option `review.keymaps.nope`" in note
    f = tmp_path / "a.txt"
    f.write_text(ORIGINAL)
    buf = write(nvim_clean, f, three_changes())["bufnr"]
    maps = buffer_maps(nvim_clean, buf)
    assert maps.get("]h") == "ACP: next agent hunk"
    assert "ACP: accept agent hunk" in maps.values()

"""fs/read_text_file and fs/write_text_file served by lua/acp_nvim/editor/fs/ and the host's decisions
(`tests/nvim/fs_calls.py`) in a real headless Neovim."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.fs_calls import read, write


def edit(nvim: Any, path: Path) -> int:
    nvim.command(f"edit {path}")
    return int(nvim.current.buffer.number)


def bufnr(nvim: Any, path: Path) -> int:
    return int(nvim.funcs.bufnr(str(path)))


# --- reads ----------------------------------------------------------------------------------------------


def test_read_answers_unsaved_buffer_text(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("on disk\n")
    edit(nvim_clean, f)
    nvim_clean.current.buffer[:] = ["typed", "but not saved"]
    res = read(nvim_clean, f)
    assert res == {"ok": True, "content": "typed\nbut not saved\n", "from_buffer": True}
    assert f.read_text() == "on disk\n"


def test_read_file_not_loaded_loads_no_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "b.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    res = read(nvim_clean, f)
    assert res == {"ok": True, "content": "alpha\nbeta\ngamma\n", "from_buffer": False}
    assert bufnr(nvim_clean, f) == -1


@pytest.mark.parametrize("loaded", [False, True], ids=["disk", "buffer"])
@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (1, 2, "alpha\nbeta"),
        (2, 1, "beta"),
        (2, None, "beta\ngamma"),
        (3, 5, "gamma"),
        (3, 1, "gamma"),
        (4, None, ""),
        (4, 2, ""),
        (100, 1, ""),
        (None, 1, "alpha"),
        (1, 0, ""),
    ],
)
def test_read_line_and_limit(
    nvim_clean: Any, tmp_path: Path, loaded: bool, line: int | None, limit: int | None, expected: str
) -> None:
    f = tmp_path / "c.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    if loaded:
        edit(nvim_clean, f)
    res = read(nvim_clean, f, line, limit)
    assert res["ok"] is True
    assert res["content"] == expected
    assert res["from_buffer"] is loaded


def test_read_slice_of_file_without_final_newline(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "noeol.txt"
    f.write_bytes(b"one\ntwo")
    assert read(nvim_clean, f)["content"] == "one\ntwo"
    assert read(nvim_clean, f, 2, 3)["content"] == "two"
    edit(nvim_clean, f)
    assert read(nvim_clean, f)["content"] == "one\ntwo"


def test_read_invalid_line_and_relative_path(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "c.txt"
    f.write_text("x\n")
    bad = read(nvim_clean, f, 0)
    assert bad["ok"] is False and bad["code"] == -32602 and "line" in bad["message"]
    rel = read(nvim_clean, "relative/path.txt")
    assert rel["ok"] is False and rel["code"] == -32602 and "absolute" in rel["message"]


def test_read_through_symlink_sees_the_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("disk\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    edit(nvim_clean, link)
    nvim_clean.current.buffer[:] = ["edited via link"]
    assert read(nvim_clean, real)["content"] == "edited via link\n"
    assert read(nvim_clean, f"{tmp_path}/./sub/../real.txt")["content"] == "edited via link\n"


def test_read_missing_file_is_resource_not_found(nvim_clean: Any, tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "missing.txt"
    res = read(nvim_clean, missing)
    assert res["ok"] is False
    assert res["code"] == -32002
    assert res["data"] == {"uri": f"file://{missing}"}


def test_read_directory_binary_non_utf8_and_too_large_are_refused(nvim_clean: Any, tmp_path: Path) -> None:
    res = read(nvim_clean, tmp_path)
    assert res["ok"] is False and str(tmp_path) in res["message"] and "directory" in res["message"]

    binary = tmp_path / "blob.bin"
    binary.write_bytes(b"ELF\x00\x01\x02text")
    res = read(nvim_clean, binary)
    assert res["ok"] is False and "binary" in res["message"] and str(binary) in res["message"]

    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("caf\u00e9\n".encode("latin-1"))
    res = read(nvim_clean, latin1)
    assert res["ok"] is False and "UTF-8" in res["message"]

    utf8 = tmp_path / "utf8.txt"
    utf8.write_text("caf\u00e9 \u2603 \U0001f600\n", encoding="utf-8")
    assert read(nvim_clean, utf8)["content"] == "caf\u00e9 \u2603 \U0001f600\n"

    big = tmp_path / "big.txt"
    big.write_text("x" * 2000)
    res = read(nvim_clean, big, max_bytes=1000)
    assert res["ok"] is False and "too large" in res["message"] and "1000" in res["message"]
    assert read(nvim_clean, big, max_bytes=4000)["ok"] is True


def test_read_crlf_file_gives_lf(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "dos.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    assert read(nvim_clean, f)["content"] == "one\ntwo\nthree\n"
    assert read(nvim_clean, f, 2, 1)["content"] == "two"
    edit(nvim_clean, f)
    assert nvim_clean.current.buffer.options["fileformat"] == "dos"
    assert read(nvim_clean, f)["content"] == "one\ntwo\nthree\n"


def test_read_big_buffer_is_exact(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    lines = [f"line {i} " + "y" * 90 for i in range(100_000)]
    f.write_text("\n".join(lines) + "\n")
    edit(nvim_clean, f)
    res = read(nvim_clean, f, 50_001, 3)
    assert res["content"] == "\n".join(lines[50_000:50_003])
    assert len(read(nvim_clean, f)["content"]) == f.stat().st_size


# --- writes ---------------------------------------------------------------------------------------------


def test_write_file_not_loaded_uses_hidden_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "w.txt"
    f.write_text("a\nb\nc\n")
    res = write(nvim_clean, f, "a\nB\nc\n")
    assert res["ok"] is True
    assert res["lines_touched"] == 1 and res["created"] is False
    assert f.read_text() == "a\nB\nc\n"
    buf = res["bufnr"]
    assert nvim_clean.eval(f"getbufvar({buf}, '&buflisted')") == 0
    assert nvim_clean.eval(f"getbufvar({buf}, '&modified')") == 0
    assert nvim_clean.eval(f"bufwinid({buf})") == -1


def test_write_new_file_in_new_folder(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "new" / "deeper" / "file.py"
    res = write(nvim_clean, f, "print('hi')\n")
    assert res["ok"] is True and res["created"] is True
    assert f.read_bytes() == b"print('hi')\n"
    empty = tmp_path / "new" / "empty.txt"
    assert write(nvim_clean, empty, "")["ok"] is True
    assert empty.read_bytes() == b""
    # Emptying a file leaves 0 bytes, not a lone newline.
    assert write(nvim_clean, f, "")["ok"] is True
    assert f.read_bytes() == b""
    assert read(nvim_clean, f)["content"] == ""


def test_write_over_unsaved_edits_is_undoable(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "u.txt"
    f.write_text("one\ntwo\nthree\n")
    edit(nvim_clean, f)
    nvim_clean.command("normal! ggcwUSER")
    assert nvim_clean.current.buffer[:] == ["USER", "two", "three"]
    res = write(nvim_clean, f, "one\ntwo\nthree\nfour\n")
    assert res["ok"] is True and res["had_unsaved_edits"] is True
    assert f.read_text() == "one\ntwo\nthree\nfour\n"
    # Merged (fs/merge.lua): the agent's line is added, the user's edit stays, unsaved.
    assert nvim_clean.current.buffer[:] == ["USER", "two", "three", "four"]
    assert nvim_clean.current.buffer.options["modified"] is True
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == ["USER", "two", "three"]
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == ["one", "two", "three"]


def test_agent_write_is_one_undo_step(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "multi.txt"
    f.write_text("".join(f"{i}\n" for i in range(20)))
    edit(nvim_clean, f)
    new = [str(i) for i in range(20)]
    new[2], new[10], new[18] = "two", "ten", "eighteen"
    res = write(nvim_clean, f, "\n".join(new) + "\n")
    assert res["hunks"] == 3 and res["lines_touched"] == 3
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == [str(i) for i in range(20)]


def test_write_keeps_crlf(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "dos.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    assert write(nvim_clean, f, "one\n2\nthree\n")["ok"] is True
    assert f.read_bytes() == b"one\r\n2\r\nthree\r\n"
    # Loaded buffer too, and content sent with CRLF is not doubled.
    edit(nvim_clean, f)
    assert write(nvim_clean, f, "uno\r\n2\r\nthree\r\n")["ok"] is True
    assert f.read_bytes() == b"uno\r\n2\r\nthree\r\n"


def test_write_keeps_missing_final_newline(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "noeol.txt"
    f.write_bytes(b"a\nb")
    assert write(nvim_clean, f, "a\nB")["ok"] is True
    assert f.read_bytes() == b"a\nB"
    assert write(nvim_clean, f, "a\nB\n")["ok"] is True
    assert f.read_bytes() == b"a\nB\n"
    g = tmp_path / "eol.txt"
    g.write_bytes(b"x\ny\n")
    edit(nvim_clean, g)
    assert write(nvim_clean, g, "x\ny")["ok"] is True
    assert g.read_bytes() == b"x\ny"
    assert read(nvim_clean, g)["content"] == "x\ny"


def test_write_keeps_encoding(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "latin.txt"
    f.write_bytes("caf\u00e9\n".encode("latin-1"))
    nvim_clean.command(f"edit ++enc=latin1 {f}")
    assert write(nvim_clean, f, "caf\u00e9\nna\u00efve\n")["ok"] is True
    assert f.read_bytes() == "caf\u00e9\nna\u00efve\n".encode("latin-1")


def test_one_line_change_in_big_file_touches_one_line(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    lines = [f"{i:08d} " + "z" * 70 for i in range(13_000)]
    f.write_text("\n".join(lines) + "\n")
    assert f.stat().st_size > 1_000_000
    lines[6_500] = "CHANGED"
    res = write(nvim_clean, f, "\n".join(lines) + "\n")
    assert res["ok"] is True
    assert res["lines_touched"] == 1 and res["hunks"] == 1
    assert f.read_text().splitlines()[6_500] == "CHANGED"


def test_diff_hunks_rebuild_the_new_text_exactly(nvim_clean: Any) -> None:
    """The hunks fs.write applies (common head and tail cut before xdiff) turn any old text into the new one,
    including edits at either end, repeated lines and emptied or filled buffers."""
    rng = random.Random(6)
    alphabet = ["a", "b", "c", "", "a b"]
    apply = """
    local old, new = ...
    local fs = require("acp_nvim.editor.fs")
    local buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, old)
    if #old == 0 then fs.make_empty(buf) end
    local hunks = fs.diff(old, new)
    local touched = fs.apply_hunks(buf, hunks, new)
    local got = fs.buf_lines(buf)
    vim.api.nvim_buf_delete(buf, { force = true })
    return { got, touched }
    """
    for _ in range(300):
        old = [rng.choice(alphabet) for _ in range(rng.randrange(0, 12))]
        new = list(old)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(0, len(new) + 1)
            if new and rng.random() < 0.4:
                del new[min(at, len(new) - 1)]
            elif new and rng.random() < 0.5:
                new[min(at, len(new) - 1)] = rng.choice(alphabet) + "x"
            else:
                new.insert(at, rng.choice(alphabet))
        got, touched = nvim_clean.exec_lua(apply, old, new)
        assert got == new, (old, new)
        assert touched <= len(old) + len(new), (old, new, touched)


@pytest.mark.parametrize(
    ("lines", "options"),
    [
        (["a", "b"], {}),
        (["a", "b"], {"fileformat": "dos"}),
        (["a", "b"], {"eol": False, "fixeol": False}),
        (["a", "b"], {"eol": False, "fixeol": True}),
        ([""], {}),
        (["", ""], {"fileformat": "dos", "eol": False, "fixeol": False}),
        (["ünïcödé ✓", "tab\tend  "], {}),
        (["a"], {"fileformat": "mac"}),
        (["a", "b"], {"bomb": True}),
        (["é"], {"fileencoding": "latin1"}),
    ],
)
def test_saved_bytes_are_what_write_saves(
    nvim_clean: Any, tmp_path: Path, lines: list[str], options: dict[str, Any]
) -> None:
    """Joining the lines itself (the fast path) or leaving it to :write, the file gets :write's bytes."""
    target, reference = tmp_path / "saved.txt", tmp_path / "reference.txt"
    target.write_bytes(b"old\n")
    buf = edit(nvim_clean, target)
    nvim_clean.api.buf_set_lines(buf, 0, -1, False, lines)
    for name, value in options.items():
        nvim_clean.api.set_option_value(name, value, {"buf": buf})
    assert nvim_clean.exec_lua("return require('acp_nvim.editor.fs').write_buffer(...)", buf) is None
    nvim_clean.command(f"noautocmd silent write! {reference}")
    assert target.read_bytes() == reference.read_bytes()


def test_cursor_and_extmarks_outside_the_change_stay(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "marks.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 31)))
    edit(nvim_clean, f)
    nvim_clean.command("normal! 3Gmx")
    nvim_clean.current.window.cursor = (25, 3)
    mark = nvim_clean.exec_lua(
        """local ns = vim.api.nvim_create_namespace("test_marks")
        return vim.api.nvim_buf_set_extmark(0, ns, 27, 2, {})"""
    )
    lines = [f"line {i}" for i in range(1, 31)]
    lines[9:11] = ["ten", "new line", "eleven"]  # one change, one line added
    assert write(nvim_clean, f, "\n".join(lines) + "\n")["ok"] is True
    assert nvim_clean.current.window.cursor == (26, 3)
    pos = nvim_clean.exec_lua(
        'return vim.api.nvim_buf_get_extmark_by_id(0, vim.api.nvim_create_namespace("test_marks"), ..., {})',
        mark,
    )
    assert pos == [28, 2]
    assert nvim_clean.funcs.line("'x") == 3
    assert nvim_clean.current.buffer[25] == "line 25"


@pytest.mark.parametrize("module_first", [True, False], ids=["module-loaded-first", "buffer-loaded-first"])
def test_changed_on_disk_is_refused(nvim_clean: Any, tmp_path: Path, module_first: bool) -> None:
    if module_first:
        nvim_clean.exec_lua('require("acp_nvim.editor.fs")')
    f = tmp_path / "race.txt"
    f.write_text("original\n")
    edit(nvim_clean, f)
    f.write_text("changed behind Neovim's back\n")
    res = write(nvim_clean, f, "agent text\n")
    assert res["ok"] is False
    assert res["data"]["reason"] == "changed_on_disk" and str(f) in res["message"]
    assert f.read_text() == "changed behind Neovim's back\n"
    assert nvim_clean.current.buffer[:] == ["original"]
    # Once the user reloads, the agent may write.
    nvim_clean.command("edit!")
    assert write(nvim_clean, f, "agent text\n")["ok"] is True
    assert f.read_text() == "agent text\n"


def test_failed_write_leaves_buffer_as_it_was(nvim_clean: Any, tmp_path: Path) -> None:
    d = tmp_path / "dir"
    d.mkdir()
    f = d / "f.txt"
    f.write_text("keep\n")
    edit(nvim_clean, f)
    # The folder becomes a file: the write cannot succeed.
    f.unlink()
    d.rmdir()
    d.write_text("I am a file now")
    res = write(nvim_clean, f, "agent\n")
    assert res["ok"] is False and res["code"] == -32603
    assert nvim_clean.current.buffer[:] == ["keep"]
    assert nvim_clean.current.buffer.options["modified"] is False
    assert d.read_text() == "I am a file now"
    # A hidden buffer made for the failed write does not linger.
    g = d / "other.txt"
    assert write(nvim_clean, g, "x\n")["ok"] is False
    assert bufnr(nvim_clean, g) == -1


def test_write_runs_no_bufwritepre_autocmds_by_default(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "fmt.txt"
    f.write_text("a\n")
    nvim_clean.command("autocmd BufWritePre * call setline(1, 'FORMATTED')")
    assert write(nvim_clean, f, "agent\n")["ok"] is True
    assert f.read_text() == "agent\n"
    assert write(nvim_clean, f, "agent2\n", autocmds=True)["ok"] is True
    assert f.read_text() == "FORMATTED\n"


def test_write_refuses_bad_params(nvim_clean: Any, tmp_path: Path) -> None:
    assert write(nvim_clean, "rel.txt", "x")["code"] == -32602
    assert write(nvim_clean, tmp_path, "x")["code"] == -32602
    res = write(nvim_clean, tmp_path / "nul.txt", "a\0b")
    assert res["ok"] is False and not (tmp_path / "nul.txt").exists()


def test_write_through_symlink_keeps_the_link(nvim_clean: Any, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("r\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    assert write(nvim_clean, link, "via link\n")["ok"] is True
    assert os.path.islink(link)
    assert real.read_text() == "via link\n"

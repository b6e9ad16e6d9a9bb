"""The three-way merge of an agent's edit with the user's unsaved buffer (lua/acp_nvim/editor/fs/merge.lua),
its conflicts (lua/acp_nvim/editor/fs/conflict.lua) and `fs.write` onto a buffer with unsaved edits, in a real
headless Neovim."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Nvim, help_tags
from tests.nvim.test_review import buffer_maps, setup

MERGE3 = "return require('acp_nvim.editor.fs.merge').merge3(...)"
WRITE = "return require('acp_nvim.editor.fs').write(...)"
NOTES = """
_G.merge_notes = {}
vim.notify = function(msg, level) table.insert(merge_notes, { msg = msg, level = level }) end
"""


def merge3(nvim: Any, base: list[str], ours: list[str], theirs: list[str]) -> tuple[list[str], list[Any]]:
    # An empty Lua list must cross as a list: pynvim sends Python's [] as one.
    result = nvim.exec_lua(MERGE3, base, ours, theirs)
    return result["lines"], [(c["first"], c["last"]) for c in result["conflicts"]]


def conflict(ours: list[str], theirs: list[str]) -> list[str]:
    return ["<<<<<<< yours", *ours, "=======", *theirs, ">>>>>>> agent"]


@pytest.mark.parametrize(
    ("base", "ours", "theirs", "lines", "conflicts"),
    [
        pytest.param(
            ["a", "b", "c", "d"],
            ["A", "b", "c", "d"],
            ["a", "b", "c", "D"],
            ["A", "b", "c", "D"],
            [],
            id="apart",
        ),
        pytest.param(
            ["a", "b", "c", "d"],
            ["a", "B", "c", "d"],
            ["a", "b", "C", "d"],
            ["a", "B", "C", "d"],
            [],
            id="next-to-each-other",
        ),
        pytest.param(["a", "b"], ["a", "X"], ["a", "X"], ["a", "X"], [], id="same-change-on-both-sides"),
        pytest.param(
            ["a", "b", "c"],
            ["a", "U", "c"],
            ["a", "T", "c"],
            ["a", *conflict(["U"], ["T"]), "c"],
            [(2, 6)],
            id="overlap",
        ),
        pytest.param(
            ["a", "b"],
            ["a", "U", "b"],
            ["a", "T", "b"],
            ["a", *conflict(["U"], ["T"]), "b"],
            [(2, 6)],
            id="insertions-at-one-point",
        ),
        pytest.param(["a", "b"], ["a", "S", "b"], ["a", "S", "b"], ["a", "S", "b"], [], id="same-insertion"),
        pytest.param(
            ["a", "b", "c"],
            ["a", "c"],
            ["a", "B", "c"],
            ["a", *conflict([], ["B"]), "c"],
            [(2, 5)],
            id="user-deleted-agent-edited",
        ),
        pytest.param(
            ["a", "b", "c"],
            ["a", "B", "c"],
            ["a", "c"],
            ["a", *conflict(["B"], []), "c"],
            [(2, 5)],
            id="user-edited-agent-deleted",
        ),
        pytest.param(["a", "b", "c"], ["a", "c"], ["a", "c"], ["a", "c"], [], id="both-deleted"),
        pytest.param(["a", "b", "c"], ["b", "c"], ["a", "b"], ["b"], [], id="deletions-apart"),
        pytest.param([], ["u"], ["t"], conflict(["u"], ["t"]), [(1, 5)], id="new-file-both-sides"),
        pytest.param([], [], ["t"], ["t"], [], id="new-file-agent-only"),
        pytest.param([], ["u"], [], ["u"], [], id="new-file-user-only"),
        pytest.param(["a"], ["a"], [], [], [], id="agent-empties-the-file"),
        pytest.param(
            ["a", "b"],
            ["a", "b", "u"],
            [],
            # The user's line is kept; the lines the agent deleted were not the user's.
            ["u"],
            [],
            id="agent-empties-a-file-the-user-extended",
        ),
        pytest.param(
            ["x"],
            ["a", "u", "z"],
            ["a", "t", "z"],
            ["a", *conflict(["u"], ["t"]), "z"],
            [(2, 6)],
            id="shared-lines-outside-the-markers",
        ),
        pytest.param(
            ["a", "b", "c"],
            ["a", "I", "b", "c"],
            ["a", "B", "c"],
            ["a", "I", "B", "c"],
            [],
            id="insertion-before-a-change",
        ),
        pytest.param(
            ["a"], ["a", "u"], ["a", "t"], ["a", *conflict(["u"], ["t"])], [(2, 6)], id="both-append"
        ),
        pytest.param(
            ["a", "b", "c", "d", "e"],
            ["a", "B", "c", "D", "e"],
            ["a", "b", "C", "d", "E"],
            ["a", "B", "C", "D", "E"],
            [],
            id="interleaved",
        ),
    ],
)
def test_merge3(
    nvim_clean: Any,
    base: list[str],
    ours: list[str],
    theirs: list[str],
    lines: list[str],
    conflicts: list[tuple[int, int]],
) -> None:
    assert merge3(nvim_clean, base, ours, theirs) == (lines, conflicts)


def test_merge3_keeps_every_user_line(nvim_clean: Any) -> None:
    """Whatever the agent does, each line the user typed is still in the result."""
    base = [f"line {i}" for i in range(40)]
    ours = list(base)
    ours[3], ours[20] = "user 3", "user 20"
    ours.insert(30, "user inserted")
    theirs = [line.upper() if i % 7 == 0 else line for i, line in enumerate(base) if i != 20]
    lines, conflicts = merge3(nvim_clean, base, ours, theirs)
    for mine in ("user 3", "user 20", "user inserted"):
        assert mine in lines
    assert "LINE 7" in lines and "LINE 35" in lines
    # Line 20: the user edited it, the agent deleted it.
    assert len(conflicts) == 1


# --- fs.write onto a buffer with unsaved edits ----------------------------------------------------------


def open_with_unsaved(nvim: Any, path: Path, lines: list[str]) -> Any:
    nvim.exec_lua(NOTES)
    nvim.command(f"edit {path}")
    buf = nvim.current.buffer
    buf[:] = lines
    assert buf.options["modified"]
    return buf


def notes(nvim: Any) -> list[str]:
    return [n["msg"] for n in nvim.exec_lua("return merge_notes")]


def undo_then_save(nvim: Any, buf: Any, before_merge: list[str], f: Path) -> None:
    """Neovim took the agent's file as the buffer's own (no W11/W12 at `:checktime`, no "changed since
    reading it" prompt at `:w`, which would hold the call), and one `u` gives back the buffer before the
    merge."""
    merged = buf[:]
    nvim.command("checktime")
    assert nvim.eval("v:warningmsg") == ""
    nvim.command("undo")
    assert buf[:] == before_merge
    nvim.command("redo")
    nvim.command("write")
    assert f.read_text() == "\n".join(merged) + "\n"


def test_write_merges_with_unsaved_edits_elsewhere(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "m.txt"
    f.write_text("one\ntwo\nthree\nfour\n")
    buf = open_with_unsaved(nvim_clean, f, ["USER", "two", "three", "four"])
    nvim_clean.command("normal! ggmk")
    nvim_clean.current.window.cursor = (1, 2)
    res = nvim_clean.exec_lua(WRITE, str(f), "one\ntwo\nthree\nFOUR\n", None)
    assert res["ok"] is True and res["conflicts"] == 0 and res["had_unsaved_edits"] is True
    # Both kept in the buffer; the disk has exactly what the agent wrote; the user's edit is still unsaved.
    assert buf[:] == ["USER", "two", "three", "FOUR"]
    assert f.read_text() == "one\ntwo\nthree\nFOUR\n"
    assert buf.options["modified"] is True
    assert tuple(nvim_clean.current.window.cursor) == (1, 2)
    assert nvim_clean.funcs.getpos("'k")[1] == 1
    # All merged: nothing to tell the user.
    assert notes(nvim_clean) == []
    undo_then_save(nvim_clean, buf, ["USER", "two", "three", "four"], f)


def test_overlapping_write_leaves_a_conflict_to_resolve(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "c.txt"
    f.write_text("keep\nold\nend\n")
    for how, expected in (
        ("ours", ["keep", "mine", "end"]),
        ("theirs", ["keep", "agent's", "end"]),
        ("both", ["keep", "mine", "agent's", "end"]),
    ):
        f.write_text("keep\nold\nend\n")
        nvim_clean.command(f"silent! bwipeout! {f}")
        buf = open_with_unsaved(nvim_clean, f, ["keep", "mine", "end"])
        res = nvim_clean.exec_lua(WRITE, str(f), "keep\nagent's\nend\n", None)
        assert res["ok"] is True and res["conflicts"] == 1
        assert buf[:] == ["keep", *conflict(["mine"], ["agent's"]), "end"]
        assert f.read_text() == "keep\nagent's\nend\n"
        assert buf.options["modified"] is True
        (note,) = notes(nvim_clean)
        assert "1 conflict(s) of the agent's edit" in note and "c.txt" in note and "rewrote" not in note
        # `]x` goes to the conflict, `:AcpConflict` resolves the one under the cursor.
        nvim_clean.current.window.cursor = (5, 0)
        nvim_clean.command("normal ]x")
        assert nvim_clean.current.window.cursor[0] == 2
        nvim_clean.command("normal! j")
        nvim_clean.command(f"AcpConflict {how}")
        assert buf[:] == expected, how
        assert (
            nvim_clean.exec_lua("return #require('acp_nvim.editor.fs.conflict').list(...)", buf.number) == 0
        )
        # Undo: the markers again; once more: the buffer before the agent's write.
        nvim_clean.command("undo")
        assert buf[:] == ["keep", *conflict(["mine"], ["agent's"]), "end"]
        nvim_clean.command("undo")
        assert buf[:] == ["keep", "mine", "end"]


def test_conflict_keys_are_set_by_setup_and_a_bad_one_is_named(nvim_clean: Any, tmp_path: Path) -> None:
    ok, setup_notes = setup(nvim_clean, {"conflict": {"keymaps": {"next": "gn", "prev": False}}})
    assert ok is True, setup_notes
    f = tmp_path / "k.txt"
    f.write_text("keep\nold\nend\n")
    buf = open_with_unsaved(nvim_clean, f, ["keep", "mine", "end"])
    assert nvim_clean.exec_lua(WRITE, str(f), "keep\nagent's\nend\n", None)["conflicts"] == 1
    maps = buffer_maps(nvim_clean, buf.number)
    assert "]x" not in maps and "[x" not in maps
    nvim_clean.current.window.cursor = (6, 0)
    nvim_clean.exec_lua('vim.api.nvim_feedkeys("gg", "x", false)')
    nvim_clean.exec_lua('vim.api.nvim_feedkeys("gn", "x", false)')
    assert nvim_clean.current.window.cursor[0] == 2

    ok, setup_notes = setup(nvim_clean, {"conflict": {"keymaps": {"next": 1, "nope": "x"}}})
    # setup() itself names only the options read before a host runs; the host names these.
    assert ok is True
    (note,) = setup_notes
    assert "`conflict.keymaps.next` must be a key (a non-empty string) or false, got number" in note
    assert "unknown option `conflict.keymaps.nope`" in note


def test_conflict_command_outside_a_conflict_says_so(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "n.txt"
    f.write_text("a\n<<<<<<< not ours\nb\n=======\nc\n>>>>>>> theirs\n")
    nvim_clean.exec_lua(NOTES)
    nvim_clean.command(f"edit {f}")
    nvim_clean.current.window.cursor = (3, 0)
    # A file's own markers are not the merge's: left alone.
    nvim_clean.command("AcpConflict theirs")
    assert nvim_clean.current.buffer[:][2] == "b"
    assert any("no agent merge conflict" in n for n in notes(nvim_clean))
    nvim_clean.command("AcpConflict sideways")
    assert any("ours, theirs, both" in n for n in notes(nvim_clean))


def test_conflict_with_edited_markers_is_left_to_the_user(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "e.txt"
    f.write_text("x\n")
    buf = open_with_unsaved(nvim_clean, f, ["mine"])
    nvim_clean.exec_lua(WRITE, str(f), "agent\n", None)
    assert buf[:] == conflict(["mine"], ["agent"])
    buf[2] = "== edited by hand"
    nvim_clean.current.window.cursor = (2, 0)
    nvim_clean.command("AcpConflict theirs")
    assert buf[:] == ["<<<<<<< yours", "mine", "== edited by hand", "agent", ">>>>>>> agent"]


def test_write_merges_crlf_and_no_final_newline(nvim_clean: Any, tmp_path: Path) -> None:
    dos = tmp_path / "dos.txt"
    dos.write_bytes(b"a\r\nb\r\nc\r\n")
    buf = open_with_unsaved(nvim_clean, dos, ["a", "b", "c", "typed"])
    assert buf.options["fileformat"] == "dos"
    res = nvim_clean.exec_lua(WRITE, str(dos), "A\r\nb\r\nc\r\n", None)
    assert res["ok"] is True and res["conflicts"] == 0
    assert buf[:] == ["A", "b", "c", "typed"]
    assert dos.read_bytes() == b"A\r\nb\r\nc\r\n"

    noeol = tmp_path / "noeol.txt"
    noeol.write_bytes(b"x\ny")
    buf = open_with_unsaved(nvim_clean, noeol, ["typed", "x", "y"])
    res = nvim_clean.exec_lua(WRITE, str(noeol), "x\nY", None)
    assert res["ok"] is True and res["conflicts"] == 0
    assert buf[:] == ["typed", "x", "Y"]
    assert noeol.read_bytes() == b"x\nY"
    assert buf.options["eol"] is False


def test_write_of_a_new_file_under_an_unsaved_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "new.txt"
    buf = open_with_unsaved(nvim_clean, f, ["typed before the file existed"])
    res = nvim_clean.exec_lua(WRITE, str(f), "from the agent\n", None)
    assert res["ok"] is True and res["created"] is True and res["conflicts"] == 1
    assert buf[:] == conflict(["typed before the file existed"], ["from the agent"])
    assert f.read_text() == "from the agent\n"
    # Binding the buffer to the file it never read takes a reload (fs/save.lua): the undo takes two steps
    # here, through the agent's text, back to the user's.
    nvim_clean.command("undo")
    assert buf[:] == ["from the agent"]
    nvim_clean.command("undo")
    assert buf[:] == ["typed before the file existed"]


def test_apply_to_buffer_follows_an_edit_on_disk(nvim_clean: Any, tmp_path: Path) -> None:
    """The interface for edits the agent made on disk itself: the buffer merges them and takes the file."""
    f = tmp_path / "d.txt"
    f.write_text("1\n2\n3\n")
    buf = open_with_unsaved(nvim_clean, f, ["1", "2", "3", "typed"])
    f.write_text("1\nTWO\n3\n")
    res = nvim_clean.exec_lua(
        "return require('acp_nvim.editor.fs.merge').apply_to_buffer(...)",
        buf.number,
        ["1", "2", "3"],
        ["1", "TWO", "3"],
        {"eol": True, "label": "codex"},
    )
    assert res == {"conflicts": 0, "user_text_replaced": False, "lines": ["1", "TWO", "3", "typed"]}
    assert buf[:] == ["1", "TWO", "3", "typed"] and buf.options["modified"] is True
    undo_then_save(nvim_clean, buf, ["1", "2", "3", "typed"], f)
    f.write_text("1\nTWO\n3\n")
    nvim_clean.command("edit!")
    buf[:] = ["1", "TWO", "3", "typed"]
    f.write_text("1\nTWO\n3\nagent\n")
    res = nvim_clean.exec_lua(
        "return require('acp_nvim.editor.fs.merge').apply_to_buffer(...)",
        buf.number,
        ["1", "TWO", "3"],
        ["1", "TWO", "3", "agent"],
        {"label": "codex"},
    )
    assert res["conflicts"] == 1
    assert buf[-3:] == ["=======", "agent", ">>>>>>> codex"]


def test_the_help_documents_the_merge(nvim_clean: Any, tmp_path: Path) -> None:
    tags = help_tags(Nvim(nvim_clean), tmp_path)
    for tag in (":AcpConflict", "acp_nvim-merge", "AcpNvimConflictMarker", "AcpNvimConflictTheirs"):
        assert tag in tags, tag


def test_merge3_properties_on_random_edits(nvim_clean: Any) -> None:
    """Edits drawn at random (changes, insertions, deletions on few distinct lines, so that sides collide):
    a side left as base yields the other; equal sides yield that side; conflicts are well formed; every line
    the user added is in the result."""
    rng = random.Random(14)

    def mutate(lines: list[str], tag: str) -> list[str]:
        out = list(lines)
        for _ in range(rng.randint(0, 4)):
            i = rng.randint(0, len(out))
            op = rng.choice(("change", "insert", "delete"))
            if op == "insert" or not out:
                out.insert(i, f"{tag}{rng.randint(0, 3)}")
            elif op == "change":
                out[min(i, len(out) - 1)] = f"{tag}{rng.randint(0, 3)}"
            else:
                del out[min(i, len(out) - 1)]
        return out

    cases = []
    for _ in range(300):
        base = [rng.choice("abcde") for _ in range(rng.randint(0, 12))]
        ours = mutate(base, "u") if rng.random() < 0.9 else list(base)
        theirs = mutate(base, "t") if rng.random() < 0.9 else list(base)
        if rng.random() < 0.1:
            theirs = list(ours)
        cases.append([base, ours, theirs])
    results = nvim_clean.exec_lua(
        "local m = require('acp_nvim.editor.fs.merge') local out = {}"
        " for i, c in ipairs(...) do out[i] = m.merge3(c[1], c[2], c[3]) end return out",
        cases,
    )

    def side(lines: list[str], conflicts: list[dict[str, int]], which: str) -> list[str]:
        out, at = [], 0
        for c in conflicts:
            first, last = c["first"] - 1, c["last"] - 1
            sep = lines.index("=======", first)
            out += lines[at:first]
            out += lines[first + 1 : sep] if which == "ours" else lines[sep + 1 : last]
            at = last + 1
        return out + lines[at:]

    for (base, ours, theirs), got in zip(cases, results, strict=True):
        lines, conflicts = got["lines"], got["conflicts"]
        if ours in (base, theirs):
            assert (lines, conflicts) == (theirs, []), (base, ours, theirs)
        if theirs == base:
            assert (lines, conflicts) == (ours, []), (base, ours, theirs)
        # Each conflict is well formed, and either side of it can be taken.
        assert len(side(lines, conflicts, "ours")) <= len(lines)
        assert len(side(lines, conflicts, "theirs")) <= len(lines)
        # Nothing of the user's is lost: every line the user has that base lacks is in the result.
        for line in set(ours) - set(base):
            assert line in lines, (base, ours, theirs, lines)


def test_review_shows_each_conflict_as_one_hunk(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_text("a\nb\nc\nd\ne\nf\ng\n")
    buf = open_with_unsaved(nvim_clean, f, ["a", "B mine", "c", "d", "E mine", "f", "g"])
    res = nvim_clean.exec_lua(WRITE, str(f), "a\nB agent\nc\nd\nE agent\nf\nG agent\n", {"session_id": "s"})
    assert res["conflicts"] == 2
    assert buf[:] == [
        "a",
        *conflict(["B mine"], ["B agent"]),
        "c",
        "d",
        *conflict(["E mine"], ["E agent"]),
        "f",
        "G agent",
    ]
    hunks = nvim_clean.exec_lua("return require('acp_nvim.editor.review').hunks('s')")
    assert [(h["lnum"], h["end_lnum"], h["old"]) for h in hunks] == [
        (2, 6, ["B mine"]),
        (9, 13, ["E mine"]),
        (15, 15, ["g"]),
    ]
    # Rejecting a conflict's hunk keeps the user's lines, markers gone.
    ok = nvim_clean.exec_lua("return require('acp_nvim.editor.review').reject_hunk(..., 8)", buf.number)
    assert ok is True
    assert buf[8:] == ["E mine", "f", "G agent"]
    # On disk, the lines put back there are the user's; the rest is still the agent's text.
    assert f.read_text() == "a\nB agent\nc\nd\nE mine\nf\nG agent\n"
    assert buf.options["modified"] is True


def test_conflicts_are_highlighted_until_resolved(nvim_clean: Any, tmp_path: Path) -> None:
    """What is drawn: the markers and both sides highlighted; nothing once resolved; again after `u`."""
    nvim_clean.ui_attach(60, 12, rgb=True)
    try:
        f = tmp_path / "h.txt"
        f.write_text("keep\nold\nend\n")
        buf = open_with_unsaved(nvim_clean, f, ["keep", "mine", "end"])
        nvim_clean.exec_lua(WRITE, str(f), "keep\nagent\nend\n", None)

        def attrs() -> list[int]:
            nvim_clean.command("redraw!")
            return [int(nvim_clean.funcs.screenattr(row, 1)) for row in range(1, len(buf) + 1)]

        marked = attrs()
        plain = marked[0]
        marker, ours, theirs = marked[1], marked[2], marked[4]
        assert len({plain, marker, ours, theirs}) == 4, marked
        assert marked == [plain, marker, ours, marker, theirs, marker, plain]
        nvim_clean.current.window.cursor = (3, 0)
        nvim_clean.command("AcpConflict theirs")
        assert attrs() == [plain] * 3
        nvim_clean.command("undo")
        assert attrs() == marked
    finally:
        nvim_clean.ui_detach()


def test_rejecting_a_merged_edit_keeps_the_user_edits_unsaved(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "j.txt"
    f.write_text("a\nb\nc\nd\n")
    buf = open_with_unsaved(nvim_clean, f, ["A mine", "b", "c", "d"])
    nvim_clean.exec_lua(WRITE, str(f), "a\nb\nc\nD agent\n", {"session_id": "s"})
    assert buf[:] == ["A mine", "b", "c", "D agent"]
    assert f.read_text() == "a\nb\nc\nD agent\n"
    assert (
        nvim_clean.exec_lua("return require('acp_nvim.editor.review').reject_hunk(..., 3)", buf.number)
        is True
    )
    # The agent's line is gone from the buffer and the disk; the user's edit is still only in the buffer.
    assert buf[:] == ["A mine", "b", "c", "d"]
    assert f.read_text() == "a\nb\nc\nd\n"
    assert buf.options["modified"] is True
    nvim_clean.command("checktime")
    assert nvim_clean.eval("v:warningmsg") == ""
    nvim_clean.command("undo")
    assert buf[:] == ["A mine", "b", "c", "D agent"]


def test_write_merges_into_a_latin1_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    """The base is the file as Neovim decoded it ('fileencoding'), not its raw bytes."""
    f = tmp_path / "latin1.txt"
    f.write_bytes("café\nthé\nfin\n".encode("latin-1"))
    nvim_clean.command("set fileencodings=utf-8,latin1")
    buf = open_with_unsaved(nvim_clean, f, ["café", "thé", "fin", "tapé"])
    assert buf.options["fileencoding"] == "latin1"
    res = nvim_clean.exec_lua(WRITE, str(f), "café\nTHÉ\nfin\n", None)
    assert res["ok"] is True and res["conflicts"] == 0
    assert buf[:] == ["café", "THÉ", "fin", "tapé"]
    assert f.read_bytes() == "café\nTHÉ\nfin\n".encode("latin-1")

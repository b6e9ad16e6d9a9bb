"""The base of the merge of an agent's write with the user's edits is the text the agent's write derives from
(its last read of the file through Neovim after its last write, else that write, else the disk:
`lua/acp_nvim/editor/fs/view.lua`, chosen by `acp_nvim/app/editor/files.py`), in a real Neovim with the
scripted agent; and a conflict left to resolve stays tracked through later writes, undo, redo and saves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted, result
from tests.nvim.conftest import Nvim

CONFLICTS = "return require('acp_nvim.editor.fs.conflict').list(...)"


def conflict(ours: list[str], theirs: list[str]) -> list[str]:
    return ["<<<<<<< yours", *ours, "=======", *theirs, ">>>>>>> agent"]


def open_edited(nvim: Nvim, path: Path, lines: list[str]) -> Any:
    """`path` open in the current window with `lines` typed over it (unsaved)."""
    nvim.api.command(f"edit {path}")
    buf = nvim.api.current.buffer
    buf[:] = lines
    assert buf.options["modified"]
    return buf


def conflicts_of(nvim: Nvim, buf: Any) -> list[tuple[int, int]]:
    return [(c["lnum"], c["end_lnum"]) for c in nvim.lua(CONFLICTS, buf.number)]


def test_a_write_after_a_read_merges_against_what_the_agent_read(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The user changes line 2 (unsaved); the agent reads the file (seeing that line) and writes it back with
    line 3 changed: both changes are in the buffer, no conflict; the disk has the agent's text."""
    f = project / "a.txt"
    f.write_text("a\nb\nc\nd\n")
    agent.start(
        [
            [
                {"read": {"path": str(f)}},
                {"write": {"path": str(f), "content": "a\nB mine\nC agent\nd\n"}},
            ]
        ],
        project,
    )
    buf = open_edited(nvim, f, ["a", "B mine", "c", "d"])
    read, wrote = agent.turn()
    assert result(read)["content"] == "a\nB mine\nc\nd\n"
    assert wrote["kind"] == "result"
    assert buf[:] == ["a", "B mine", "C agent", "d"]
    assert f.read_text() == "a\nB mine\nC agent\nd\n"
    assert conflicts_of(nvim, buf) == []
    assert not [n for n in nvim.notes() if "conflict" in n["msg"]]


def test_a_slice_read_is_the_base_only_for_the_lines_it_showed(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The agent reads lines 1-2 (seeing the user's line 2, not the user's line 4) and writes the whole file
    from what it knows: the user's line 4, which it never saw, is kept; line 2 merges as read."""
    f = project / "s.txt"
    f.write_text("a\nb\nc\nd\n")
    agent.start(
        [
            [
                {"read": {"path": str(f), "line": 1, "limit": 2}},
                {"write": {"path": str(f), "content": "a\nB mine\nC agent\nd\n"}},
            ]
        ],
        project,
    )
    buf = open_edited(nvim, f, ["a", "B mine", "c", "D mine"])
    read, _ = agent.turn()
    assert result(read)["content"] == "a\nB mine"
    assert buf[:] == ["a", "B mine", "C agent", "D mine"]
    assert f.read_text() == "a\nB mine\nC agent\nd\n"
    assert conflicts_of(nvim, buf) == []


def test_a_write_after_the_user_saved_keeps_the_saved_edit(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The agent writes, the user edits another line and saves (`:w`), the agent writes again from its own
    text: the user's saved line is kept in the buffer (the base is the agent's first write, not the disk)."""
    f = project / "w.txt"
    f.write_text("a\nb\nc\n")
    agent.start(
        [
            [{"write": {"path": str(f), "content": "A agent\nb\nc\n"}}],
            [{"write": {"path": str(f), "content": "A agent\nb\nC agent\n"}}],
        ],
        project,
    )
    nvim.api.command(f"edit {f}")
    buf = nvim.api.current.buffer
    agent.turn()
    assert buf[:] == ["A agent", "b", "c"]
    buf[1] = "B mine"
    nvim.api.command("write")
    agent.turn()
    assert buf[:] == ["A agent", "B mine", "C agent"]
    assert f.read_text() == "A agent\nb\nC agent\n"
    assert conflicts_of(nvim, buf) == []


def test_a_second_write_onto_a_conflict_merges_it_again(nvim: Nvim, agent: Scripted, project: Path) -> None:
    """A conflict left unresolved: the agent's next write (changing its side, and another line) re-merges
    the user's side with the agent's new text: markers never nested, the conflict still tracked, `]x` finds
    it, the read-back is the agent's side."""
    f = project / "c.txt"
    f.write_text("keep\nold\nend\n")
    agent.start(
        [
            [{"write": {"path": str(f), "content": "keep\nagent 1\nend\n"}}],
            [
                {"write": {"path": str(f), "content": "keep\nagent 2\nend\nmore\n"}},
                {"read": {"path": str(f)}},
            ],
            [{"write": {"path": str(f), "content": "keep\nold\nend\nmore\n"}}],
        ],
        project,
    )
    buf = open_edited(nvim, f, ["keep", "mine", "end"])
    agent.turn()
    assert buf[:] == ["keep", *conflict(["mine"], ["agent 1"]), "end"]
    _, read = agent.turn()
    assert buf[:] == ["keep", *conflict(["mine"], ["agent 2"]), "end", "more"]
    assert f.read_text() == "keep\nagent 2\nend\nmore\n"
    assert conflicts_of(nvim, buf) == [(2, 6)]
    assert result(read)["content"] == "keep\nagent 2\nend\nmore\n"
    nvim.api.current.window.cursor = (8, 0)
    nvim.api.command("normal ]x")
    assert nvim.api.current.window.cursor[0] == 2
    # The agent gives its change up (back to the base there): the user's line is taken, no conflict left.
    agent.turn()
    assert buf[:] == ["keep", "mine", "end", "more"]
    assert conflicts_of(nvim, buf) == []


def test_a_conflict_comes_back_with_undo_and_redo(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "u.txt"
    f.write_text("keep\nold\nend\n")
    agent.start([[{"write": {"path": str(f), "content": "keep\nagent\nend\n"}}]], project)
    buf = open_edited(nvim, f, ["keep", "mine", "end"])
    agent.turn()
    merged = ["keep", *conflict(["mine"], ["agent"]), "end"]
    assert buf[:] == merged
    nvim.api.command("undo")
    assert buf[:] == ["keep", "mine", "end"]
    assert conflicts_of(nvim, buf) == []
    nvim.api.command("redo")
    assert buf[:] == merged
    assert conflicts_of(nvim, buf) == [(2, 6)]
    nvim.api.current.window.cursor = (3, 0)
    nvim.api.command("AcpConflict ours")
    assert buf[:] == ["keep", "mine", "end"]
    nvim.api.command("undo")
    assert conflicts_of(nvim, buf) == [(2, 6)]


def test_a_saved_conflict_stays_tracked_and_merges_again(nvim: Nvim, agent: Scripted, project: Path) -> None:
    """The user saves the buffer with its markers (`:w`): the conflict still counts, and the agent's next
    write merges it again instead of replacing the user's side."""
    f = project / "v.txt"
    f.write_text("keep\nold\nend\n")
    agent.start(
        [
            [{"write": {"path": str(f), "content": "keep\nagent 1\nend\n"}}],
            [{"write": {"path": str(f), "content": "keep\nagent 2\nend\n"}}],
        ],
        project,
    )
    buf = open_edited(nvim, f, ["keep", "mine", "end"])
    agent.turn()
    nvim.api.command("write")
    assert conflicts_of(nvim, buf) == [(2, 6)]
    agent.turn()
    assert buf[:] == ["keep", *conflict(["mine"], ["agent 2"]), "end"]
    assert conflicts_of(nvim, buf) == [(2, 6)]
    assert f.read_text() == "keep\nagent 2\nend\n"


def reject_with(nvim: Nvim, answer: str | None) -> list[dict[str, Any]]:
    """`:AcpReview reject`, the picker (if it opens) answered `answer`; the pickers shown."""
    nvim.lua("acp_test.selects = {} acp_test.answers = { ... }", *([answer] if answer else []))
    nvim.api.command("AcpReview reject")
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def test_a_reject_asks_before_it_takes_back_a_line_the_user_edited(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The user edits a line the agent wrote and saves: rejecting asks; "keep" leaves the user's line (the
    rest of the agent's change taken back), "old" puts the old line back; no answer, nothing happens."""
    for answer, line2 in (("keep", "B mine"), ("old", "b"), (None, "B mine")):
        f = project / f"r-{answer}.txt"
        f.write_text("a\nb\nc\nd\n")
        agent.start(
            [[{"write": {"path": str(f), "content": "a\nB agent\nc\nD agent\n"}}]],
            project,
        )
        nvim.api.command(f"edit {f}")
        buf = nvim.api.current.buffer
        agent.turn()
        assert buf[:] == ["a", "B agent", "c", "D agent"]
        nvim.api.command("normal! 2GccB mine")
        nvim.api.command("write")
        (picker,) = reject_with(nvim, answer)
        assert "You edited 1 of the agent's hunk(s)" in picker["prompt"]
        if answer is None:
            assert buf[:] == ["a", "B mine", "c", "D agent"]
            assert f.read_text() == "a\nB mine\nc\nD agent\n"
            nvim.lua("require('acp_nvim').stop()")
            nvim.wait("require('acp_nvim').status().state == 'stopped'")
            continue
        assert buf[:] == ["a", line2, "c", "d"], answer
        assert f.read_text() == f"a\n{line2}\nc\nd\n"
        nvim.lua("require('acp_nvim').stop()")
        nvim.wait("require('acp_nvim').status().state == 'stopped'")


# The agent (session "s") reads the file through Neovim, the user adds a line after the first (and saves
# it when `save`),
# then the agent writes its text, line 3 changed: the buffer's lines and the file's text after.
READ_EDIT_WRITE = """
local path, save = ...
local fs = require("acp_nvim.editor.fs")
vim.cmd("silent edit " .. vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
assert(fs.read(path, nil, nil, { view = "s" }).ok)
vim.api.nvim_buf_set_lines(buf, 1, 1, false, { "mine" })
if save then
  vim.cmd("silent write")
end
local answer = fs.write(path, "a\\nb\\nC agent\\nd\\n", { view = "s" })
return { ok = answer.ok, lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false) }
"""


def test_an_edit_made_after_the_agents_read_is_kept_by_its_write(nvim_clean: Any, tmp_path: Path) -> None:
    """The session's view stands for the buffer's lines only while the buffer is unchanged since: the user's
    line added (or added and saved) after the agent's read stays where it is, the agent's where it was."""
    for save in (False, True):
        f = tmp_path / f"read-edit-write-{save}.txt"
        f.write_text("a\nb\nc\nd\n")
        got = nvim_clean.exec_lua(READ_EDIT_WRITE, str(f), save)
        assert got["ok"]
        assert got["lines"] == ["a", "mine", "b", "C agent", "d"]
        # The disk gets the agent's text; the user's line stays in the buffer, unsaved.
        assert f.read_text() == "a\nb\nC agent\nd\n"

"""Issue 26: a file named by the agent's tool call that becomes a link out of the project during the call
(the file itself, or its folder) is never read into a buffer and never written by a reject. The scripted
agent on the Python SDK makes the link while its call runs; a real headless Neovim follows the call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim

ORIGINAL = "one\ntwo\nthree\n"
SECRET = "the text outside the project\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "a.txt").write_text(SECRET)
    return folder


def every_buffer(nvim: Nvim) -> str:
    """The text of every loaded buffer, joined."""
    return nvim.lua(  # type: ignore[no-any-return]
        """
        local out = {}
        for _, b in ipairs(vim.api.nvim_list_bufs()) do
          if vim.api.nvim_buf_is_loaded(b) then
            out[#out + 1] = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\\n')
          end
        end
        return table.concat(out, '\\n')
        """
    )


def wait_note(nvim: Nvim, text: str) -> None:
    nvim.wait(
        "#vim.tbl_filter(function(n) return n.msg:find(args[1], 1, true) end, acp_test.notes) > 0", 10, text
    )


def hunks(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return require('acp_nvim.editor.review').hunks()")  # type: ignore[no-any-return]


def assert_outside_kept(nvim: Nvim, outside: Path) -> None:
    assert (outside / "a.txt").read_text() == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["a.txt"]
    assert "outside the project" not in every_buffer(nvim)


def then_a_plain_edit(project: Path) -> dict[str, Any]:
    """A call after the hostile one, of another file: once its edit is in the review, the hostile call's
    end has been followed too (they are followed in order)."""
    (project / "z.txt").write_text("z\n")
    return {"disk_edit": {"path": str(project / "z.txt"), "content": "Z\n", "toolCallId": "z1"}}


def wait_followed(nvim: Nvim, project: Path) -> None:
    nvim.wait(
        "#vim.tbl_filter(function(h) return h.path == args[1] end,"
        " require('acp_nvim.editor.review').hunks()) > 0",
        10,
        str(project / "z.txt"),
    )


def others(nvim: Nvim, project: Path) -> list[dict[str, Any]]:
    return [h for h in hunks(nvim) if h["path"] != str(project / "z.txt")]


def turn_then_reject(nvim: Nvim, agent: Scripted, project: Path, outside: Path) -> None:
    """The turn, its calls followed: nothing of the file outside read, nothing of it reviewed; then a
    reject of everything, which writes nothing there."""
    agent.turn()
    wait_followed(nvim, project)
    assert_outside_kept(nvim, outside)
    assert others(nvim, project) == []
    nvim.api.command("AcpReview reject")
    assert_outside_kept(nvim, outside)


def link(kind: str, outside: Path) -> dict[str, Any]:
    """The hostile step: made once the client has seen the call start (it then checked the file)."""
    made = {"linkTo": str(outside / "a.txt")} if kind == "file" else {"linkParentTo": str(outside)}
    return {**made, "waitMs": 200}


@pytest.mark.parametrize("style", ["codex", "claude"])
@pytest.mark.parametrize("kind", ["file", "folder"])
@pytest.mark.parametrize("loaded", [True, False], ids=["loaded", "not-loaded"])
def test_a_file_that_became_a_link_out_is_never_read_nor_rejected_onto(
    nvim: Nvim, agent: Scripted, project: Path, outside: Path, style: str, kind: str, loaded: bool
) -> None:
    f = project / "sub" / "a.txt"
    f.parent.mkdir()
    f.write_text(ORIGINAL)
    edit = {"path": str(f), "content": "changed\n", "style": style, "toolCallId": "e1", **link(kind, outside)}
    agent.start([[{"disk_edit": edit}, then_a_plain_edit(project)]], project)
    if loaded:
        nvim.api.command(f"edit {f}")
    turn_then_reject(nvim, agent, project, outside)
    if loaded:
        assert nvim.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ORIGINAL.splitlines()


@pytest.mark.parametrize("kind", ["file", "folder"])
@pytest.mark.parametrize("first", ["disk_edit", "write"])
def test_a_reviewed_file_that_became_a_link_out_is_skipped_by_reject_which_says_why(
    nvim: Nvim, agent: Scripted, project: Path, outside: Path, kind: str, first: str
) -> None:
    """The agent's first edit is in the review; its next call turns the file into a link out of the
    project: the reject writes nothing through it, and says why."""
    f = project / "sub" / "a.txt"
    f.parent.mkdir()
    f.write_text(ORIGINAL)
    if first == "write":
        edit: dict[str, Any] = {"write": {"path": str(f), "content": "one\nTWO\nthree\n"}}
    else:
        edit = {"disk_edit": {"path": str(f), "old": "two", "new": "TWO", "toolCallId": "e1"}}
    relink = {"disk_edit": {"path": str(f), "content": "x\n", "toolCallId": "e2", **link(kind, outside)}}
    agent.start([[edit, relink, then_a_plain_edit(project)]], project)
    nvim.api.command(f"edit {f}")
    agent.turn()
    wait_followed(nvim, project)
    assert len(others(nvim, project)) == 1
    assert_outside_kept(nvim, outside)
    nvim.api.command("AcpReview reject")
    assert_outside_kept(nvim, outside)
    warnings = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert any(
        w.startswith(
            f"acp.nvim: {f} now leads to {outside.resolve() / 'a.txt'}, not to the file the agent edited"
        )
        and w.endswith("not rejecting the agent's edit there")
        for w in warnings
    ), nvim.notes()


def test_an_unnamed_edit_that_makes_a_loaded_file_a_link_out_is_not_followed(
    nvim: Nvim, agent: Scripted, project: Path, outside: Path
) -> None:
    """The disk watch sees the loaded file change: its new target, out of the project, is never read."""
    f = project / "a.txt"
    f.write_text(ORIGINAL)
    shell = {"shell": {"command": f"ln -sf {outside / 'a.txt'} a.txt", "toolCallId": "x1"}}
    sed = {"shell": {"command": "sed -i s/z/Z/ z.txt", "toolCallId": "x2"}}
    (project / "z.txt").write_text("z\n")
    agent.start([[shell, {"sleep": 100}, sed, {"sleep_until_cancel": True}]], project)
    nvim.api.command(f"edit {project / 'z.txt'}")
    nvim.api.command(f"edit {f}")
    assert nvim.lua("return require('acp_nvim').prompt('go')"), nvim.notes()
    agent.turns_done += 1
    wait_followed(nvim, project)
    nvim.lua("require('acp_nvim').cancel()")
    nvim.wait_state("ready")
    assert_outside_kept(nvim, outside)
    nvim.api.command("AcpReview reject")
    assert_outside_kept(nvim, outside)


# Between the host's look at the file and Neovim's read of it: the file is made a link out of the project
# right before the follower runs, so the race is certain.
LINK_BEFORE_FOLLOW = """
local path, target = ...
local follow = require('acp_nvim.editor.fs.follow_disk')
local apply = follow.apply
follow.apply = function(...)
  if not vim.uv.fs_lstat(path .. '.old') then
    assert(vim.uv.fs_rename(path, path .. '.old'))
    assert(vim.uv.fs_symlink(target, path))
  end
  return apply(...)
end
"""


@pytest.mark.parametrize("loaded", [True, False], ids=["loaded", "not-loaded"])
def test_a_link_made_after_the_hosts_look_is_not_read_by_neovim(
    nvim: Nvim, agent: Scripted, project: Path, outside: Path, loaded: bool
) -> None:
    f = project / "a.txt"
    f.write_text(ORIGINAL)
    real = f.resolve()
    agent.start([[{"disk_edit": {"path": str(f), "content": "changed\n", "toolCallId": "e1"}}]], project)
    if loaded:
        nvim.api.command(f"edit {f}")
    nvim.lua(LINK_BEFORE_FOLLOW, str(f), str(outside / "a.txt"))
    agent.turn()
    wait_note(nvim, "is not followed")
    warnings = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert any(w.endswith(f"a.txt is not followed: it no longer leads to {real}") for w in warnings), warnings
    assert_outside_kept(nvim, outside)
    assert hunks(nvim) == []
    nvim.api.command("AcpReview reject")
    assert_outside_kept(nvim, outside)


def test_a_call_that_never_ends_is_judged_again_at_the_turns_end(
    nvim: Nvim, agent: Scripted, project: Path, outside: Path
) -> None:
    """Calls that never completed are followed when the turn ends: the same check, at that moment."""
    f = project / "a.txt"
    f.write_text(ORIGINAL)
    (project / "z.txt").write_text("z\n")

    def opened(call_id: str, path: Path) -> dict[str, Any]:
        return {
            "update": {
                "sessionUpdate": "tool_call",
                "toolCallId": call_id,
                "title": f"Edit {path.name}",
                "kind": "edit",
                "status": "pending",
                "locations": [{"path": str(path)}],
            }
        }

    steps = [
        opened("never-1", f),
        opened("never-2", project / "z.txt"),
        {"sleep": 200},
        {"shell": {"command": f"ln -sf {outside / 'a.txt'} a.txt && sed -i s/z/Z/ z.txt", "toolCallId": "x"}},
    ]
    agent.start([steps], project)
    nvim.api.command(f"edit {f}")
    turn_then_reject(nvim, agent, project, outside)

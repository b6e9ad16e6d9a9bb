"""Bursts (issue 26): many things at once come out whole. 2,000 tool calls creating files, completed at
once, all land in the review while what the user types meanwhile arrives whole and in order; a buffer's file
changed among 10,000 new files beside 100 loaded buffers is followed and none of the new files gets a buffer;
200 `terminal/create` at once all run, and after :AcpStop all 200 have ended, nothing of them left running;
300 `fs/write_text_file` at once all land.
What the figures are (how long Neovim is held) is measured in bench/bursts.py, not asserted here."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.harness import wait_until
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_orphans import MARKER_ENV, alive, scan

FILES = 2000
NEW_FILES = 10_000
BUFFERS = 100
TERMINALS = 200
WRITES = 300

# A scratch buffer in Insert mode, for the keys the test types while the burst runs.
TYPING = """
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_set_current_buf(buf)
vim.cmd("startinsert")
return buf
"""


def typed_meanwhile(nvim: Nvim, done: Callable[[], bool], timeout: float) -> tuple[int, str]:
    """Types numbered words into a scratch buffer until `done()` is true; (the buffer, what was typed)."""
    buf = int(nvim.lua(TYPING))
    typed: list[str] = []

    def type_and_check() -> bool:
        word = f"w{len(typed)} "
        typed.append(word)
        nvim.api.input(word)
        return done()

    wait_until(type_and_check, timeout, "the burst's outcome", 0.01)
    nvim.api.input("<Esc>")
    return buf, "".join(typed)


def test_every_file_of_2000_tool_calls_completed_at_once_is_in_the_review(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    folder = project / "new"
    agent.start([[{"disk_burst": {"dir": str(folder), "count": FILES}}]], project)
    assert nvim.lua("return require('acp_nvim').prompt('go')"), nvim.notes()
    agent.turns_done += 1
    in_review = "return #require('acp_nvim.editor.review').files()"
    queued: list[int] = []

    def done() -> bool:
        queued.append(nvim.lua("return require('acp_nvim.editor.fs.follow_disk').pending()"))
        return agent.turn_ends() >= 1 and nvim.lua(in_review) == FILES

    buf, typed = typed_meanwhile(nvim, done, 240)
    # Neovim answered while edits were still to follow: they go in slices, not in one hold.
    assert max(queued) > 0
    nvim.wait_state("ready")
    # Every key typed while the edits were followed is in the buffer, in order.
    assert nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf) == [typed]
    files = nvim.lua("return require('acp_nvim.editor.review').files()")
    expected = sorted(str((folder / f"new-{i:05d}.txt").resolve()) for i in range(FILES))
    assert sorted(f["path"] for f in files) == expected
    assert all(f["created"] and f["hunks"] == 1 for f in files)
    # Each is a hunk of the file's one line, created by its own tool call.
    hunks = nvim.lua("return require('acp_nvim.editor.review').hunks()")
    by_path = {h["path"]: h for h in hunks}
    sample = str((folder / "new-01234.txt").resolve())
    assert (by_path[sample]["tool_call_id"], by_path[sample]["added"]) == ("burst-1234", 1)
    nvim.api.command("AcpReview reject")
    assert sorted(os.listdir(folder)) == []


def test_acpreview_during_a_burst_waits_for_its_edits_and_then_lists_them_all(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """:AcpReview typed while 2,000 edits are still being followed: the command returns with edits still
    queued (it does not follow them all in one hold), says so, and once they are followed the quickfix list
    holds every file."""
    folder = project / "new"
    agent.start([[{"disk_burst": {"dir": str(folder), "count": FILES}}]], project)
    assert nvim.lua("return require('acp_nvim').prompt('go')"), nvim.notes()
    agent.turns_done += 1
    pending = "return require('acp_nvim.editor.fs.follow_disk').pending()"
    wait_until(lambda: nvim.lua(pending) > FILES // 2, 60, "the burst's edits queued", 0.01)
    nvim.api.command("AcpReview")
    assert nvim.lua(pending) > 0
    assert any("more agent edit(s) first" in str(note["msg"]) for note in nvim.notes()), nvim.notes()
    nvim.wait("#vim.fn.getqflist() >= args[1]", 120, FILES)
    listed = nvim.lua(
        "return vim.tbl_map(function(e) return vim.fn.bufname(e.bufnr) end, vim.fn.getqflist())"
    )
    assert len({Path(name).name for name in listed}) == FILES
    assert nvim.lua(pending) == 0
    assert nvim.errors() == []


def test_a_read_right_after_a_burst_finds_the_edit_of_its_file_followed(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The edit of a loaded file completes last, behind 2,000 others still being followed; the agent's read of
    it that comes next reads the buffer as that edit left it, not as it was."""
    loaded = project / "a.txt"
    loaded.write_text("old text\n")
    turn = [
        {"disk_burst": {"dir": str(project / "new"), "count": FILES}},
        {"disk_edit": {"path": str(loaded), "content": "new text\n", "toolCallId": "last"}},
        {"read": {"path": str(loaded)}},
    ]
    agent.start([turn], project)
    nvim.api.command(f"edit {loaded}")
    buf = int(nvim.api.current.buffer.number)
    (answer,) = [a for a in agent.turn(240) if a.get("call") == "fs/read_text_file"]
    assert answer["result"]["content"] == "new text\n"
    assert nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf) == ["new text"]
    nvim.wait("#require('acp_nvim.editor.review').files() == args[1]", 120, FILES + 1)


def test_a_file_changed_among_10000_new_ones_beside_100_buffers_is_followed(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    folder = project / "src"
    folder.mkdir()
    paths = [folder / f"open-{i:03d}.txt" for i in range(BUFFERS)]
    for i, path in enumerate(paths):
        path.write_text(f"buffer {i}\n")
    # The agent's shell: 10,000 new files in the buffers' folder, and one of the buffers' files edited.
    command = (
        f"i=0; while [ $i -lt {NEW_FILES} ]; do : > src/new-$i.txt; i=$((i+1)); done;"
        " sed -i 's/^buffer 42$/EDITED 42/' src/open-042.txt"
    )
    agent.start([[{"shell": {"command": command, "toolCallId": "x1"}}, {"sleep": 500}]], project)
    nvim.lua(
        "for _, p in ipairs(...) do local b = vim.fn.bufadd(p); vim.bo[b].swapfile = false;"
        " vim.fn.bufload(b) end",
        [str(p) for p in paths],
    )
    buffers = nvim.lua("return #vim.api.nvim_list_bufs()")
    agent.turn(120)
    buf = nvim.lua("return vim.fn.bufnr(...)", str(paths[42]))
    nvim.wait("vim.api.nvim_buf_get_lines(args[1], 0, 1, false)[1] == 'EDITED 42'", 20, buf)
    assert nvim.lua("return vim.bo[...].modified", buf) is False
    (hunk,) = nvim.lua("return require('acp_nvim.editor.review').hunks()")
    assert (hunk["bufnr"], hunk["old"]) == (buf, ["buffer 42"])
    # No new file got a buffer; the other buffers are as they were.
    assert nvim.lua("return #vim.api.nvim_list_bufs()") == buffers
    others = nvim.lua(
        "local out = {} for _, p in ipairs(...) do out[#out + 1] = vim.api.nvim_buf_get_lines("
        "vim.fn.bufnr(p), 0, -1, false)[1] end return out",
        [str(p) for i, p in enumerate(paths) if i != 42],
    )
    assert others == [f"buffer {i}" for i in range(BUFFERS) if i != 42]


def test_300_writes_at_once_all_land_on_disk_and_in_the_review(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    folder = project / "w"
    agent.start([[{"writes": {"dir": str(folder), "count": WRITES}}]], project)
    agent.turn(120)
    # Journaled once every write was answered without an error.
    assert [e["count"] for e in agent.entries() if e["kind"] == "writes"] == [WRITES]
    for i in range(WRITES):
        assert (folder / f"w-{i:05d}.txt").read_text() == f"written {i}\n"
    files = nvim.lua("return require('acp_nvim.editor.review').files()")
    assert len(files) == WRITES and all(f["created"] for f in files)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="the scan reads /proc")
def test_200_terminals_created_at_once_all_run_and_all_end_with_acp_stop(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    marker = uuid.uuid4().hex
    step = {
        "count": TERMINALS,
        "command": "sleep",
        "args": ["120"],
        "env": [{"name": MARKER_ENV, "value": marker}],
    }
    agent.start([[{"terminals": step}]], project)
    agent.turn(120)
    (entry,) = [e for e in agent.entries() if e["kind"] == "terminals"]
    ids = entry["ids"]
    assert len(set(ids)) == TERMINALS
    pids = nvim.lua(
        "local out = {} for _, id in ipairs(...) do"
        " out[#out + 1] = require('acp_nvim.editor.terminal').pid(id) end return out",
        ids,
    )
    assert len(set(pids)) == TERMINALS
    # Every command runs: each terminal's group leads a live `sleep` of its own.
    wait_until(lambda: len(scan(marker, set())) >= 2 * TERMINALS, 30, "every terminal's command to run")
    assert all(alive(pid) for pid in pids)
    nvim.api.command("AcpStop")
    wait_until(lambda: scan(marker, set(pids)) == [], 30, "every terminal's processes to end")
    # Each terminal saw its command end: its exit status (as `terminal/wait_for_exit` answers), a death by
    # SIGTERM.
    statuses = "local out = {} for _, id in ipairs(...) do"
    statuses += " local exit = require('acp_nvim.editor.terminal').wait_for_exit(id).exit_status"
    statuses += " out[#out + 1] = exit and exit.signal or '' end return out"
    wait_until(lambda: "" not in nvim.lua(statuses, ids), 10, "every terminal's exit status")
    assert set(nvim.lua(statuses, ids)) == {"SIGTERM"}

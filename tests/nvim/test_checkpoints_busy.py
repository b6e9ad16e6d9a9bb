"""Checkpoints of a folder another Neovim holds (issue 31's follow-up): while another process holds the
folder's shadow index past the deadline (a stuck Neovim), the prompt goes without its checkpoint and the user
is told why, as is a listing of the checkpoints; once it lets go, the next prompt has its checkpoint again.
Real headless Neovim, real git, the other process a real one holding the real lock."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from acp_nvim.app.checkpoints.store import Store
from acp_nvim.client.files import shadow_lock
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_checkpoints import make_project, restore
from tests.unit.client.files.test_shadow_lock import HOLD

WARN = 3


@contextlib.contextmanager
def held_elsewhere(nvim: Nvim, project: Path) -> Iterator[None]:
    """Another process holds the lock of the project's shadow index (in Neovim's state folder) meanwhile."""
    state = nvim.lua("return vim.fn.stdpath('state')")
    index = Store(str(Path(state) / "acp_nvim" / "checkpoints")).git_dir(str(project)) + ".index"
    lock = Path(shadow_lock.lock_path(index))
    lock.parent.mkdir(parents=True, exist_ok=True)
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        yield
    finally:
        # Its process ended, its lock is let go.
        other.kill()
        other.wait()


def test_a_folder_held_by_a_stuck_neovim_gets_no_checkpoint_and_the_prompt_goes(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    make_project(project, repo=False)
    agent.start([[{"write": {"path": str(project / "a.txt"), "content": "new\n"}}], []], project)
    with held_elsewhere(nvim, project):
        agent.turn()
        # The prompt went (after the deadline) and the agent did its work.
        assert (project / "a.txt").read_text() == "new\n"
        said = [n for n in nvim.notes() if "no checkpoint before turn 1" in n["msg"]]
        assert len(said) == 1, nvim.notes()
        assert "another Neovim" in said[0]["msg"] and str(project) in said[0]["msg"], said
        assert said[0]["level"] == WARN
    # The other let go: the next prompt has its checkpoint.
    agent.turn()
    assert "restored to 2" in restore(nvim, "2"), nvim.notes()
    nvim.api.command("AcpCheckpoint restore 1")
    nvim.wait("acp_test.notes[#acp_test.notes].msg:find('no checkpoint 1 in this session', 1, true)")
    with held_elsewhere(nvim, project):
        # The list counts what changed since each checkpoint: a snapshot of the folder, which waits too.
        nvim.api.command("AcpCheckpoint")
        nvim.wait("acp_test.notes[#acp_test.notes].msg:find('no checkpoints listed', 1, true)")
    (error,) = nvim.errors()
    assert "no checkpoints listed: another Neovim" in error and "internal error" not in error, error

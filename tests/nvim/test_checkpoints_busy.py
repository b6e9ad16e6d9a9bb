"""Checkpoints of a folder another Neovim holds (issue 31's follow-up): while another process holds the
folder's shadow index past the deadline (a stuck Neovim), the prompt goes without its checkpoint and the user
is told why; once it lets go, the next prompt has its checkpoint again. Real headless Neovim, real git, the
other process a real one holding the real lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from acp_nvim.app.checkpoints.store import Store
from acp_nvim.client.files import shadow_lock
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_checkpoints import make_project, restore
from tests.unit.client.files.test_shadow_lock import HOLD


def test_a_folder_held_by_a_stuck_neovim_gets_no_checkpoint_and_the_prompt_goes(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    make_project(project, repo=False)
    state = nvim.lua("return vim.fn.stdpath('state')")
    index = Store(str(Path(state) / "acp_nvim" / "checkpoints")).git_dir(str(project)) + ".index"
    lock = Path(shadow_lock.lock_path(index))
    lock.parent.mkdir(parents=True, exist_ok=True)
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "held\n"
        agent.start([[{"write": {"path": str(project / "a.txt"), "content": "new\n"}}], []], project)
        agent.turn()
        # The prompt went (after the deadline) and the agent did its work.
        assert (project / "a.txt").read_text() == "new\n"
        said = [n for n in nvim.notes() if "no checkpoint before turn 1" in n["msg"]]
        assert len(said) == 1, nvim.notes()
        assert "another Neovim" in said[0]["msg"] and str(project) in said[0]["msg"], said
        assert said[0]["level"] == 3  # WARN
    finally:
        other.kill()
        other.wait()
    # The other let go (its process ended): the next prompt has its checkpoint.
    agent.turn()
    assert "restored to 2" in restore(nvim, "2"), nvim.notes()
    nvim.api.command("AcpCheckpoint restore 1")
    nvim.wait("acp_test.notes[#acp_test.notes].msg:find('no checkpoint 1 in this session', 1, true)")
    assert nvim.errors() == []

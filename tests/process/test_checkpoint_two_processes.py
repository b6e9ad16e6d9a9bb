"""Two Neovims on one folder (issue 31's follow-up): two processes, each the project's checkpoint code on real
git, checkpoint the same folder at the same time, many times. They share the folder's shadow repository and
its index; none fails for the other's use of it, each snapshot holds the folder as it was when it was taken
(its own file exactly, the other's as it was at some moment of the snapshot), and a restore of each gives
back exactly that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from acp_nvim.app.checkpoints.store import Store
from tests.conftest import ROOT
from tests.process.checkpoint_worker import Outcome, number_in
from tests.process.test_checkpoint_git import GIT, NoBuffers, snapshots

pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

COUNT = 40
NAMES = ("A", "B")


def run_both(store: Path, folder: Path, scratch: Path) -> dict[str, Outcome]:
    paths = [str(store), str(folder), str(scratch)]
    workers = {
        name: subprocess.Popen(
            [sys.executable, "-m", "tests.process.checkpoint_worker", *paths, name, other, str(COUNT)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, other in zip(NAMES, NAMES[::-1], strict=True)
    }
    try:
        for worker in workers.values():
            assert worker.stdout is not None
            # (A worker that dies says nothing: its EOF ends the wait.)
            assert worker.stdout.readline() == "ready\n"
        # Both go at once.
        for worker in workers.values():
            assert worker.stdin is not None
            worker.stdin.write("go\n")
            worker.stdin.flush()
        outcomes = {}
        for name, worker in workers.items():
            out, _ = worker.communicate(timeout=120)
            assert worker.returncode == 0, out
            outcomes[name] = msgspec.json.decode(out.splitlines()[-1], type=Outcome)
        return outcomes
    finally:
        for worker in workers.values():
            if worker.poll() is None:
                worker.kill()
                worker.wait()


def test_two_processes_checkpointing_one_folder_both_get_exact_snapshots(tmp_path: Path) -> None:
    folder, store, scratch = tmp_path / "project", tmp_path / "store", tmp_path / "scratch"
    folder.mkdir()
    scratch.mkdir()
    (folder / "shared.txt").write_text("both\n")
    outcomes = run_both(store, folder, scratch)

    assert {name: outcome.failures for name, outcome in outcomes.items()} == {"A": [], "B": []}
    shadow = snapshots(store)
    repo = shadow.repo(str(folder))

    async def files_of(commit: str) -> dict[str, str]:
        names = (await repo.run("ls-tree", "-r", "--name-only", commit)).decode().split()
        return {name: (await repo.run("show", f"{commit}:{name}")).decode() for name in names}

    async def main() -> None:
        for name, other in zip(NAMES, NAMES[::-1], strict=True):
            record = Store(str(store)).load(name)
            assert record is not None
            assert len(outcomes[name].taken) == COUNT
            for taken in outcomes[name].taken:
                held = await files_of(taken.commit)
                assert held.pop(f"{name}.txt") == f"{name} {taken.number}\n", (name, taken)
                assert held.pop("shared.txt") == "both\n"
                # The other's file as it was at some moment while the snapshot was taken.
                others = int(held.pop(f"{other}.txt", f"{other} 0").split()[1])
                assert taken.before <= others <= taken.after, (name, taken, others)
                assert held == {}
                # A restore gives back exactly what the snapshot holds.
                (checkpoint,) = [c for c in record.checkpoints if c.id == str(taken.number)]
                await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
                on_disk = sorted(os.listdir(folder))
                assert on_disk == sorted(["shared.txt", f"{name}.txt", *([f"{other}.txt"] if others else [])])
                assert (folder / f"{name}.txt").read_text() == f"{name} {taken.number}\n"
                assert number_in(str(folder / f"{other}.txt")) == others

    anyio.run(main)

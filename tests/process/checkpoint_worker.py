"""One process taking checkpoints of a folder another process checkpoints too (the test is
`tests/process/test_checkpoint_two_processes.py`): the project's own checkpoint code on real git, as a second
Neovim's host runs it.

    python -m tests.process.checkpoint_worker STORE FOLDER SCRATCH NAME OTHER COUNT

Says "ready", waits for a line on stdin (both start together), then COUNT times: writes its own file
NAME.txt (whole, by a rename), reads the other's file, takes a checkpoint, reads the other's file again. Its
last line is JSON: each checkpoint's commit with the other's file before and after it, and every failure."""

from __future__ import annotations

import os
import shutil
import sys

import anyio
import msgspec

from acp_nvim.app.checkpoints.restore import Snapshots
from acp_nvim.app.checkpoints.store import SessionRecord, Store
from acp_nvim.app.config.options import CheckpointOptions


class Taken(msgspec.Struct):
    number: int
    commit: str
    # The other's file just before the checkpoint and just after it (0: not there yet).
    before: int
    after: int


class Outcome(msgspec.Struct):
    taken: list[Taken]
    failures: list[str]


def number_in(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as file:
            return int(file.read().split()[1])
    except FileNotFoundError:
        return 0


def write_whole(path: str, scratch: str, text: str) -> None:
    temp = os.path.join(scratch, os.path.basename(path) + ".tmp")
    with open(temp, "w", encoding="utf-8") as file:
        file.write(text)
    os.replace(temp, path)


async def main(store: str, folder: str, scratch: str, name: str, other: str, count: int) -> Outcome:
    git = shutil.which("git")
    assert git is not None
    options = CheckpointOptions(max_count=10_000)
    shadow = Snapshots(Store(store), git, lambda: options, None)
    record = SessionRecord(session_id=name, folders=[folder])
    outcome = Outcome(taken=[], failures=[])
    print("ready", flush=True)
    await anyio.to_thread.run_sync(sys.stdin.readline)
    for number in range(1, count + 1):
        write_whole(os.path.join(folder, f"{name}.txt"), scratch, f"{name} {number}\n")
        before = number_in(os.path.join(folder, f"{other}.txt"))
        try:
            checkpoint = await shadow.take(record, str(number), number, "prompt", "go")
        except Exception as err:
            outcome.failures.append(f"{number}: {type(err).__name__}: {err}")
            continue
        after = number_in(os.path.join(folder, f"{other}.txt"))
        outcome.taken.append(Taken(number, checkpoint.commits[folder], before, after))
    return outcome


if __name__ == "__main__":
    store, folder, scratch, name, other, count = sys.argv[1:7]
    result = anyio.run(main, store, folder, scratch, name, other, int(count))
    print(msgspec.json.encode(result).decode(), flush=True)

"""The lock that keeps two Neovims' uses of one shadow index apart (`acp_nvim/client/files/shadow_lock.py`),
on real `flock`s: a second holder, in this process or another, waits for the first and goes the moment it
lets go; a dead holder lets go with its process; a stuck one is waited for only until the deadline, then a
message names the folder; the event loop runs on meanwhile."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from acp_nvim.client.files import shadow_lock
from acp_nvim.client.files.shadow_lock import held, lock_path

HOLD = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def other_process(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock until it is told to stop (or killed)."""
    path = tmp_path / "store" / "x.git.index.flock"
    path.parent.mkdir()
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        yield process
    finally:
        process.kill()
        process.wait()


def test_the_lock_is_beside_the_index_and_never_gits_own() -> None:
    assert lock_path("/s/abc.git.index") == "/s/abc.git.index.flock"


def test_the_lock_and_its_folder_are_made_when_missing(tmp_path: Path) -> None:
    path = tmp_path / "state" / "checkpoints" / "x.git.index.flock"

    async def main() -> None:
        async with held(str(path), "/project"):
            assert path.is_file()

    anyio.run(main)


def test_a_second_holder_waits_for_the_first_and_goes_when_it_lets_go(tmp_path: Path) -> None:
    path = str(tmp_path / "x.flock")
    order: list[str] = []

    async def main() -> None:
        first_in, first_may_go = anyio.Event(), anyio.Event()

        async def first() -> None:
            async with held(path, "/project"):
                order.append("first in")
                first_in.set()
                await first_may_go.wait()
                order.append("first out")

        async def second() -> None:
            await first_in.wait()
            async with held(path, "/project"):
                order.append("second in")

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(first)
                group.start_soon(second)
                await first_in.wait()
                # The second is waiting (each of its tries yields to the loop, which runs this meanwhile).
                await anyio.to_thread.run_sync(lambda: None)
                assert order == ["first in"]
                first_may_go.set()

    anyio.run(main)
    assert order == ["first in", "first out", "second in"]


def test_a_stuck_holder_is_waited_for_until_the_deadline_with_the_loop_running(
    tmp_path: Path, other_process: subprocess.Popen[str]
) -> None:
    path = str(tmp_path / "store" / "x.git.index.flock")
    ticks: list[float] = []

    async def main() -> float:
        async def tick() -> None:
            # Another task of the loop (a chat being drawn) runs while the lock is waited for.
            while True:
                ticks.append(anyio.current_time())
                await anyio.to_thread.run_sync(lambda: None)

        async with anyio.create_task_group() as group:
            group.start_soon(tick)
            start = anyio.current_time()
            with pytest.raises(TimeoutError) as raised:
                async with held(path, "/home/u/project", wait_s=0.3):
                    pytest.fail("the lock another process holds was taken")
            waited = anyio.current_time() - start
            group.cancel_scope.cancel()
        assert "another Neovim" in str(raised.value) and "/home/u/project" in str(raised.value)
        return waited

    waited = anyio.run(main)
    assert 0.3 <= waited < 2.0, waited
    assert len(ticks) > 10, ticks


def test_a_holder_that_dies_lets_go_with_its_process(
    tmp_path: Path, other_process: subprocess.Popen[str]
) -> None:
    path = str(tmp_path / "store" / "x.git.index.flock")
    other_process.kill()
    other_process.wait()

    async def main() -> None:
        with anyio.fail_after(1):
            async with held(path, "/project", wait_s=10):
                # This process's now: a third one does not get it.
                fd = os.open(path, os.O_RDWR)
                try:
                    with pytest.raises(BlockingIOError):
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                finally:
                    os.close(fd)

    anyio.run(main)


def test_a_holder_that_lets_go_is_followed_at_once(
    tmp_path: Path, other_process: subprocess.Popen[str]
) -> None:
    path = str(tmp_path / "store" / "x.git.index.flock")
    stdin = other_process.stdin
    assert stdin is not None

    async def main() -> None:
        entered = anyio.Event()

        async def wait_for_it() -> None:
            async with held(path, "/project", wait_s=10):
                entered.set()

        async with anyio.create_task_group() as group:
            group.start_soon(wait_for_it)
            await anyio.to_thread.run_sync(lambda: None)
            assert not entered.is_set()
            stdin.write("go\n")
            stdin.flush()
            # Within the longest interval between tries (and the other's exit).
            with anyio.fail_after(shadow_lock.RETRY_MAX_S + 2):
                await entered.wait()

    anyio.run(main)

"""The agent process: its own process group, stderr capture, and a stop that leaves nothing behind."""

from __future__ import annotations

import os
import signal
import sys

import anyio
import pytest

from acp_nvim.client.agent.process import (
    AgentCommand,
    AgentNotFound,
    AgentProcess,
    StderrTail,
    group_has_members,
)
from tests.conftest import process_alive

pytestmark = pytest.mark.anyio


async def _read_pids(process: AgentProcess, count: int) -> list[int]:
    pids: list[int] = []
    buffer = b""
    with anyio.fail_after(10):
        async for chunk in process.stdout:
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                pids.append(int(line))
            if len(pids) >= count:
                return pids
    raise AssertionError(f"agent printed only {pids}")


async def test_stop_ends_grandchildren_that_ignore_sigterm() -> None:
    # A launcher (sh) starts a grandchild that ignores SIGTERM, like an agent behind npx would.
    script = "sh -c 'trap \"\" TERM; echo $$; exec sleep 300' & echo $$; wait"
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(AgentCommand("sh", ["-c", script]), tasks)
        assert os.getpgid(process.pid) == process.pid != os.getpgid(0)
        pids = await _read_pids(process, 2)
        assert all(os.getpgid(pid) == process.pgid for pid in pids)
        await process.stop(grace=0.2, term_grace=0.5)
        assert not group_has_members(process.pgid)
        assert not any(process_alive(pid) for pid in pids)


async def test_stop_reaches_children_after_the_leader_exited() -> None:
    script = "sleep 300 & echo $!"
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(AgentCommand("sh", ["-c", script]), tasks)
        (child,) = await _read_pids(process, 1)
        with anyio.fail_after(10):
            await process.wait()
        assert process_alive(child)
        await process.stop(grace=0.1, term_grace=1)
        assert not process_alive(child)
        assert not group_has_members(process.pgid)


async def test_exit_reason_names_code_and_stderr_tail() -> None:
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(
            AgentCommand(
                sys.executable, ["-c", "import sys; print('boom: no API key', file=sys.stderr); sys.exit(3)"]
            ),
            tasks,
        )
        with anyio.fail_after(10):
            assert await process.wait() == 3
        await process.stop()
    assert process.exit_reason().endswith("exited with code 3: boom: no API key")


async def test_exit_reason_names_the_signal() -> None:
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(AgentCommand("sleep", ["300"]), tasks)
        os.kill(process.pid, signal.SIGKILL)
        with anyio.fail_after(10):
            await process.wait()
        await process.stop()
    assert "killed by SIGKILL" in process.exit_reason()


async def test_missing_command_is_a_clear_start_error() -> None:
    async with anyio.create_task_group() as tasks:
        with pytest.raises(AgentNotFound, match="agent command not found: no-such-agent-xyz"):
            await AgentProcess.spawn(AgentCommand("no-such-agent-xyz"), tasks)


def test_stderr_tail_is_bounded() -> None:
    tail = StderrTail(max_lines=5)
    tail.feed(b"x" * 10_000_000)  # one enormous line without newline
    for number in range(100):
        tail.feed(f"line {number}\n".encode())
    lines = tail.lines(5)
    assert lines[-1] == "line 99"
    assert len(lines) == 5
    # All of it was taken: the enormous line (ended by the newline of `line 0`, past its bound) and 99 more.
    assert tail.count == 100
    tail.feed(b"\xff\xfe broken utf-8\n")
    assert tail.lines(1) == ["\ufffd\ufffd broken utf-8"]

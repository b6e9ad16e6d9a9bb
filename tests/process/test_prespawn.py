"""An agent spawned before the host has loaded (acp_nvim/client/prespawn.py) and adopted by the client."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from acp_nvim.client import prespawn
from acp_nvim.client.agent import AgentConnection
from acp_nvim.client.process import AgentCommand, AgentProcess, GroupEvent, group_has_members, observe_groups
from tests.conftest import NODE, TS_EXAMPLE_AGENT, process_alive
from tests.process.recording_editor import RecordingEditor

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_leftover() -> Iterator[None]:
    yield
    waiting = prespawn.take()
    if waiting is not None:
        waiting.discard()


@pytest.fixture
def group_events() -> Iterator[list[tuple[GroupEvent, int]]]:
    events: list[tuple[GroupEvent, int]] = []
    unsubscribe = observe_groups(lambda event, pgid, _command: events.append((event, pgid)))
    yield events
    unsubscribe()


async def test_the_client_adopts_the_prespawned_agent(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    command = AgentCommand(NODE, [str(TS_EXAMPLE_AGENT)], env={"ACP_TEST_MARK": "1"}, cwd=str(tmp_path))
    early = prespawn.spawn(command.command, command.args, command.env, command.cwd)
    assert early is not None
    # Neovim learns the group from this line before the host talks to it.
    stderr = capfd.readouterr().err
    assert f"{prespawn.STDERR_MARK} {early.pid}\n" in stderr, stderr
    assert os.getpgid(early.pid) == early.pid != os.getpgid(0)
    async with AgentConnection.launch(command, RecordingEditor(), handshake_timeout=20) as agent:
        assert agent.process.pid == early.pid
        assert agent.protocol_version == 1
        session = await agent.new_session(str(tmp_path))
        assert session.session_id
    assert not group_has_members(early.pid), f"left in group {early.pid} after the stop"


async def test_the_prespawned_agent_starts_as_a_spawned_one_would(tmp_path: Path) -> None:
    """Its working directory, its extra environment, and SIGPIPE at its default (Python ignores it)."""
    script = 'printf "%s|%s|" "$(pwd -P)" "$ACP_TEST_MARK"; grep SigIgn /proc/$$/status'
    command = AgentCommand("sh", ["-c", script], env={"ACP_TEST_MARK": "1"}, cwd=str(tmp_path))
    assert prespawn.spawn(command.command, command.args, command.env, command.cwd) is not None
    output = b""
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(command, tasks)
        with anyio.fail_after(10):
            async for chunk in process.stdout:
                output += chunk
        await process.stop(grace=1)
    cwd, mark, ignored = output.decode().split("|")
    assert (cwd, mark) == (str(tmp_path.resolve()), "1")
    assert not int(ignored.split()[1], 16) & (1 << (signal.SIGPIPE - 1)), ignored


async def test_another_command_ends_the_prespawned_agent(group_events: list[tuple[GroupEvent, int]]) -> None:
    early = prespawn.spawn("sh", ["-c", "sleep 300"], {}, None)
    assert early is not None
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(AgentCommand("sh", ["-c", "echo other"]), tasks)
        assert process.pid != early.pid
        assert not process_alive(early.pid)
        assert ("gone", early.pid) in group_events
        assert (await process.stdout.receive()).strip() == b"other"
        await process.stop(grace=1)
    assert prespawn.take() is None


@pytest.mark.parametrize(
    ("script", "expected"),
    [("exit 3", 3), ("kill -TERM $$", -signal.SIGTERM)],
)
async def test_adopted_exit_status(script: str, expected: int) -> None:
    command = AgentCommand("sh", ["-c", script])
    assert prespawn.spawn(command.command, command.args, command.env, command.cwd) is not None
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(command, tasks)
        with anyio.fail_after(10):
            assert await process.wait() == expected
        assert process.exit_reason().startswith("agent sh ")
        await process.stop(grace=0.1)


async def test_adopted_pipes_carry_a_large_exchange() -> None:
    # `cat` echoes what it reads: more than a pipe holds, in both directions at once.
    command = AgentCommand("cat")
    assert prespawn.spawn(command.command, command.args, command.env, command.cwd) is not None
    payload = os.urandom(1 << 20)
    received = bytearray()
    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(command, tasks)

        async def write() -> None:
            await process.stdin.send(payload)
            await process.stdin.aclose()

        tasks.start_soon(write)
        with anyio.fail_after(20):
            async for chunk in process.stdout:
                received += chunk
        assert bytes(received) == payload
        assert await process.wait() == 0
        await process.stop(grace=0.1)


async def test_reading_a_flooding_agent_lets_other_tasks_run() -> None:
    """asyncio's own pipes yield to the loop between reads; the adopted ones must too, or a flooding agent
    keeps the host's other tasks (the flush to Neovim each frame) waiting until the flood ends."""
    command = AgentCommand("yes")
    assert prespawn.spawn(command.command, command.args, command.env, command.cwd) is not None
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tasks:
        process = await AgentProcess.spawn(command, tasks)
        await process.stdout.receive(16)  # the pipe fills meanwhile: every read below finds data
        tasks.start_soon(tick)
        before = ticks
        for _ in range(200):
            await process.stdout.receive(16)
        assert ticks - before >= 150
        await process.stop(grace=0.1)
        tasks.cancel_scope.cancel()


def test_the_environment_record_lua_writes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The layout lua/acp_nvim/host.lua writes: cwd, command line, NAME=value entries.
    record = "\x1e".join([str(tmp_path), "\x1f".join(["sh", "-c", "sleep 300"]), "A=1\x1fB=x=y"])
    monkeypatch.setenv(prespawn.ENV, record)
    prespawn.spawn_from_environment()
    assert prespawn.ENV not in os.environ
    waiting = prespawn.take()
    assert waiting is not None
    assert waiting.matches("sh", ["-c", "sleep 300"], {"B": "x=y", "A": "1"}, str(tmp_path))
    assert not waiting.matches("sh", ["-c", "sleep 300"], {"A": "1"}, str(tmp_path))
    waiting.discard()
    assert not process_alive(waiting.pid)


def test_nothing_is_spawned_for_a_missing_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(prespawn.ENV, "\x1e".join(["", "no-such-agent-xyz", ""]))
    prespawn.spawn_from_environment()
    assert prespawn.take() is None
    monkeypatch.setenv(prespawn.ENV, "garbage")
    prespawn.spawn_from_environment()
    assert prespawn.take() is None

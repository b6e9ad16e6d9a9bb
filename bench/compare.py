"""The streaming benchmark against other Neovim ACP clients, interleaved with acp.nvim in one run.

    .venv/bin/python -m bench.compare [--codecompanion PATH [--plenary PATH]] [--agentic PATH]
                                      [--counts 10000 100000] [--runs 5] [--timeout 60]

Each client is a checkout the user points to, never part of this repository: codecompanion.nvim
(https://github.com/olimorris/codecompanion.nvim, which needs plenary.nvim: --plenary, or a `plenary.nvim`
beside it) and agentic.nvim (https://github.com/carlos-algms/agentic.nvim); or the environment variables
ACP_BENCH_CODECOMPANION, ACP_BENCH_PLENARY, ACP_BENCH_AGENTIC. A client not given is skipped with a message;
with none given, only acp.nvim runs.

Every client talks to the same stdlib flood agent (bench/flood_agent.py), which streams `prose N`: N one-word
chunks as ordinary prose, with a line break after every 12th word and a blank line after every 8th line (the
bench agent's `words N` is one long line, on which codecompanion is quadratic: 10,000 words took it 60 s).
Beside them, the two in-process Lua floors of the streaming benchmark (bench/lua_floor.lua, a bare Neovim that
is its own ACP client of the same agent): the plain floor, a buffer without highlighting changed once per
frame, against which every ratio is taken (issue 31); and the highlighted floor, a markdown buffer with
tree-sitter highlighting changed once per read, shown beside it. Each client's Neovim is headless and started
afresh for every run (the floors' are kept running); a first small turn ("prose 100") pays for the agent's
start and the session, then the measured turn. Measured inside Neovim with vim.uv.hrtime: from the call that
submits the prompt to the first buffer change after which the chat's last lines hold the last word (for
acp.nvim, bench/instrument.lua's stamps, as in the streaming benchmark). CPU time (/proc/PID/task/*/schedstat)
from the submit to the end of the turn (acp.nvim: its status back to "ready"; codecompanion: no request
running; the floors: the prompt's answer and the last word shown), or to the last word seen for agentic.nvim,
which shows no end of its turn: the client's (Neovim's, and for acp.nvim its host's too) and the flood agent's
own (all the agents the client started: codecompanion starts two). The runs alternate (the floors, acp.nvim,
codecompanion, agentic, then again), so that they share the machine's drifting load; a run that takes longer
than --timeout is killed and counted as timed out. The medians end as markdown rows, for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script: make the repository importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pynvim

from bench.flood_agent import final_text
from bench.floor import LuaFloor
from bench.harness import (
    FLOOD_AGENT,
    NS_PER_S,
    NVIM,
    Neovim,
    flood_agent_pid,
    flood_agent_pids,
    median,
    ms,
    settle,
    task_cpu_seconds,
    wait_until,
)

# Stamps, in the peer's Neovim, the first change of `buf` after which one of its last lines holds `needle`.
WATCH_LUA = r"""
local buf, needle = ...
_G.cmp_bench = { t0 = vim.uv.hrtime(), t_done = nil }
local function holds(lines)
  for _, line in ipairs(lines) do
    if line:find(needle, 1, true) then
      return true
    end
  end
  return false
end
vim.api.nvim_buf_attach(buf, false, {
  on_lines = function(_, b)
    if cmp_bench.t_done ~= nil then
      return true
    end
    if holds(vim.api.nvim_buf_get_lines(b, -4, -1, false)) then
      cmp_bench.t_done = vim.uv.hrtime()
      return true
    end
  end,
})
"""

CODECOMPANION_SETUP = r"""
local python, agent = ...
require("codecompanion").setup({
  adapters = {
    acp = {
      flood = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "flood",
          formatted_name = "Flood agent",
          commands = { default = { python, agent } },
          -- The flood agent offers no authentication: nothing to choose.
          defaults = { auth_method = nil, mcpServers = {} },
          env = {},
        })
      end,
    },
  },
  interactions = { chat = { adapter = "flood" } },
  opts = { log_level = "ERROR" },
})
"""

# One chat for both turns: a new chat would connect (spawn, initialize, session/new) in the measured turn.
CODECOMPANION_SUBMIT = r"""
local text = ...
local cc = require("codecompanion")
local chat = cc.last_chat() or cc.chat()
assert(chat, "codecompanion did not open a chat")
chat:add_buf_message({ role = "user", content = text })
chat:submit()
"""

CODECOMPANION_CHAT_BUF = (
    "local c = require('codecompanion').last_chat() or require('codecompanion').chat(); return c.bufnr"
)
CODECOMPANION_IDLE = (
    "local c = require('codecompanion').last_chat(); return c ~= nil and c.current_request == nil"
)

AGENTIC_SETUP = r"""
local python, agent = ...
require("agentic").setup({
  provider = "flood",
  acp_providers = { flood = { command = python, args = { agent }, env = {} } },
})
-- setup() turns its debug messages on (a leftover it marks FIXIT); as a user runs it: off.
require("agentic.config").debug = false
require("agentic").open()
"""

# The chat buffer, found by its filetype; the prompt typed into the input buffer and sent with its <C-s>.
AGENTIC_CHAT_BUF = r"""
for _, buf in ipairs(vim.api.nvim_list_bufs()) do
  if vim.bo[buf].filetype == "AgenticChat" then
    return buf
  end
end
return nil
"""
AGENTIC_SUBMIT = r"""
local text = ...
for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.bo[buf].filetype == "AgenticInput" then
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, { text })
    local keys = vim.api.nvim_replace_termcodes("<C-s>", true, false, true)
    vim.api.nvim_feedkeys(keys, "x", false)
    return true
  end
end
return false
"""


class TimedOut(Exception):
    pass


@dataclass
class Peer:
    """A Neovim ACP client from a checkout: how to set it up, find its chat, submit, and see its turn end."""

    name: str
    rtp: list[Path]
    setup: str
    chat_buf: str
    submit: str
    idle: str | None = None  # a Lua expression true once the turn is over (None: the last word suffices)


@dataclass(frozen=True)
class Sample:
    """One run of one client: seconds to the last word; CPU seconds of its Neovim, of acp.nvim's host (0 for
    the others), and of the flood agent it talks to (0 when it could not be found)."""

    took: float
    nvim_cpu: float
    host_cpu: float = 0.0
    agent_cpu: float = 0.0

    @property
    def client_cpu(self) -> float:
        return self.nvim_cpu + self.host_cpu


@dataclass
class Runs:
    samples: list[Sample] = field(default_factory=list)
    timeouts: int = 0

    def median(self) -> float:
        """The median of all runs, a timed-out one counted as longer than any (inf when it is the median)."""
        return median([*(s.took for s in self.samples), *[float("inf")] * self.timeouts])

    def cpu(self, what: Callable[[Sample], float]) -> float:
        return median([what(s) for s in self.samples])


PLAIN_FLOOR = "the plain floor"
HIGHLIGHTED_FLOOR = "the highlighted floor"
FLOOR_LABELS = {
    PLAIN_FLOOR: "the plain floor (in-process Lua, no highlighting, one change per frame)",
    HIGHLIGHTED_FLOOR: "the highlighted floor (in-process Lua, markdown tree-sitter, one change per read)",
}


def _guarded(proc: subprocess.Popen[bytes], timeout: float, run: Callable[[], Sample]) -> Sample:
    """Runs `run`, killing the Neovim it drives once `timeout` has passed (a call into a Neovim busy in a
    long Lua loop would otherwise wait for it)."""
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        return run()
    except Exception as error:
        if killed.is_set():
            raise TimedOut() from error
        raise
    finally:
        timer.cancel()


def peer_once(peer: Peer, count: int, workdir: Path, timeout: float) -> Sample:
    workdir.mkdir(parents=True, exist_ok=True)
    socket = str(workdir / "nvim.sock")
    argv = [NVIM, "--headless", "--clean", "-n", "--listen", socket]
    for path in peer.rtp:
        argv += ["--cmd", f"set rtp^={path}"]
    env = dict(os.environ)
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        env[name] = str(workdir / name.lower())
    log = (workdir / "nvim.out").open("wb")
    proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    nvim: Any = None
    try:
        nvim = wait_until(lambda: _attach(socket), 30, f"{peer.name}'s Neovim")

        def run() -> Sample:
            nvim.exec_lua(peer.setup, sys.executable, str(FLOOD_AGENT))
            result = Sample(0.0, 0.0)
            for text in ("prose 100", f"prose {count}"):
                needle = final_text("prose", int(text.split()[1]))
                buf = wait_until(lambda: nvim.exec_lua(peer.chat_buf), 30, f"{peer.name}'s chat")
                # The agents (codecompanion starts two) are spawned by the first turn: the measured one is
                # the second.
                agents = flood_agent_pids(proc.pid)
                cpu, agent_cpu = task_cpu_seconds(proc.pid), sum(map(task_cpu_seconds, agents))
                nvim.exec_lua(WATCH_LUA, buf, needle)
                nvim.exec_lua(peer.submit, text)
                wait_until(lambda: nvim.exec_lua("return cmp_bench.t_done ~= nil"), timeout, repr(needle))
                if peer.idle is not None:
                    # A submit before the turn's end is refused ("in progress").
                    wait_until(lambda: nvim.exec_lua(peer.idle), timeout, f"the {peer.name} turn to end")
                took = float(nvim.exec_lua("return cmp_bench.t_done - cmp_bench.t0")) / NS_PER_S
                agent_cpu = sum(map(task_cpu_seconds, agents)) - agent_cpu
                result = Sample(took, task_cpu_seconds(proc.pid) - cpu, agent_cpu=agent_cpu)
            return result

        return _guarded(proc, timeout, run)
    finally:
        with contextlib.suppress(Exception):
            if nvim is not None:
                nvim.command("qa!")
        with contextlib.suppress(Exception):
            proc.wait(5)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


def _attach(socket: str) -> Any:
    try:
        return pynvim.attach("socket", path=socket)
    except OSError:
        return None


def acp_nvim_once(count: int, workdir: Path, timeout: float) -> Sample:
    nv = Neovim(workdir)
    try:
        nv.start_agent()
        host = nv.host_pid()
        agent = flood_agent_pid(host) if host else None
        nv.prompt_and_wait("prose 100", final_text("prose", 100))

        def cpus() -> tuple[float, float, float]:
            return (
                task_cpu_seconds(nv.pid),
                task_cpu_seconds(host) if host else 0.0,
                task_cpu_seconds(agent) if agent else 0.0,
            )

        before = cpus()
        record = nv.prompt_and_wait(f"prose {count}", final_text("prose", count), timeout)
        nvim_cpu, host_cpu, agent_cpu = (after - was for after, was in zip(cpus(), before, strict=True))
        return Sample(float(record["t_done"] - record["t0"]) / NS_PER_S, nvim_cpu, host_cpu, agent_cpu)
    finally:
        nv.close()


def _checkout(value: Path | None, variable: str) -> Path | None:
    if value is None and os.environ.get(variable):
        value = Path(os.environ[variable])
    return value.expanduser().resolve() if value is not None else None


def peers(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Peer]:
    found: list[Peer] = []
    codecompanion = _checkout(args.codecompanion, "ACP_BENCH_CODECOMPANION")
    if codecompanion is None:
        print(
            "codecompanion.nvim: skipped (give its checkout: --codecompanion PATH or ACP_BENCH_CODECOMPANION)"
        )
    else:
        plenary = _checkout(args.plenary, "ACP_BENCH_PLENARY") or codecompanion.parent / "plenary.nvim"
        for path in (codecompanion / "lua" / "codecompanion", plenary / "lua" / "plenary"):
            if not path.is_dir():
                parser.error(f"not found: {path} (codecompanion.nvim needs plenary.nvim: --plenary PATH)")
        found.append(
            Peer(
                "codecompanion.nvim",
                [plenary, codecompanion],
                CODECOMPANION_SETUP,
                CODECOMPANION_CHAT_BUF,
                CODECOMPANION_SUBMIT,
                CODECOMPANION_IDLE,
            )
        )
    agentic = _checkout(args.agentic, "ACP_BENCH_AGENTIC")
    if agentic is None:
        print("agentic.nvim: skipped (give its checkout: --agentic PATH or ACP_BENCH_AGENTIC)")
    else:
        if not (agentic / "lua" / "agentic").is_dir():
            parser.error(f"not found: {agentic / 'lua' / 'agentic'}")
        found.append(Peer("agentic.nvim", [agentic], AGENTIC_SETUP, AGENTIC_CHAT_BUF, AGENTIC_SUBMIT))
    return found


def _ratio(value: float, base: float) -> str:
    if value == float("inf"):
        return "-"
    return f"{value / base:.2f}x" if base > 0 and base == base else "n/a"


def table(count: int, results: dict[str, Runs], runs: int, timeout: float) -> list[str]:
    """The medians as markdown rows: each client's time and CPU, and their ratios to both floors."""
    plain, lit = results[PLAIN_FLOOR], results[HIGHLIGHTED_FLOOR]
    rows = [
        f"| prose {count:,} ({runs} runs) | to the last word | ÷ plain floor | ÷ highlighted floor "
        "| client CPU (Neovim + host) | ÷ plain floor's | the agent's CPU | ÷ under the plain floor |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        took = result.median()
        shown = f"> {timeout:g} s" if took == float("inf") else ms(took)
        if result.timeouts:
            shown += f" ({result.timeouts} of {result.timeouts + len(result.samples)} timed out)"
        cpu, agent = result.cpu(lambda s: s.client_cpu), result.cpu(lambda s: s.agent_cpu)
        if name == "acp.nvim":
            cpu_shown = f"{ms(cpu)} (Neovim {ms(result.cpu(lambda s: s.nvim_cpu))})"
        else:
            cpu_shown = ms(cpu)
        rows.append(
            f"| {FLOOR_LABELS.get(name, name)} | {shown} | {_ratio(took, plain.median())} "
            f"| {_ratio(took, lit.median())} | {cpu_shown} "
            f"| {_ratio(cpu, plain.cpu(lambda s: s.client_cpu))} | {ms(agent)} "
            f"| {_ratio(agent, plain.cpu(lambda s: s.agent_cpu))} |"
        )
    return rows


def compare(count: int, others: list[Peer], runs: int, timeout: float, scratch: Path) -> list[str]:
    """`prose count` through the two Lua floors, acp.nvim and each other client, their runs alternating;
    prints each run and returns the medians as markdown rows."""
    names = [PLAIN_FLOOR, HIGHLIGHTED_FLOOR, "acp.nvim", *(peer.name for peer in others)]
    results = {name: Runs() for name in names}
    text, needle = f"prose {count}", final_text("prose", count)
    floors: dict[str, LuaFloor] = {}
    try:
        # The floors' Neovims are kept running across the runs, as a user's Neovim is; idle, they cost the
        # others nothing. Each warmed by a first small turn, as every client is.
        for name, plain in ((PLAIN_FLOOR, True), (HIGHLIGHTED_FLOOR, False)):
            workdir = scratch / f"{'plain' if plain else 'highlighted'}-floor-{count}"
            workdir.mkdir(parents=True)
            floors[name] = LuaFloor(workdir, plain=plain)
            floors[name].stream("prose 100", final_text("prose", 100))
        floor_pids = [floor.pid for floor in floors.values()]

        def once(name: str, workdir: Path) -> Sample:
            if name in floors:
                run = floors[name].stream(text, needle, timeout)
                return Sample(run.seconds, run.cpu, agent_cpu=run.agent_cpu)
            for peer in others:
                if peer.name == name:
                    return peer_once(peer, count, workdir, timeout)
            return acp_nvim_once(count, workdir, timeout)

        for i in range(runs):
            for name in names:
                # The highlighted floor's Neovim highlights its buffer for a while after its stream.
                settle(floor_pids)
                started = time.monotonic()
                try:
                    sample = once(name, scratch / f"{name}-{count}-{i}")
                except (TimedOut, TimeoutError):
                    results[name].timeouts += 1
                    waited = time.monotonic() - started
                    print(f"  prose {count:,} run {i + 1}: {name} timed out after {waited:.0f} s", flush=True)
                    continue
                results[name].samples.append(sample)
                cpus = (
                    f"Neovim {ms(sample.nvim_cpu)}, host {ms(sample.host_cpu)}, agent {ms(sample.agent_cpu)}"
                )
                print(f"  prose {count:,} run {i + 1}: {name} {ms(sample.took)}; CPU {cpus}", flush=True)
    finally:
        for floor in floors.values():
            floor.close()
    rows = table(count, results, runs, timeout)
    print(f"prose {count:,} (medians of {runs} interleaved runs; submit -> last word in the chat):")
    for name, result in results.items():
        ratio = _ratio(result.median(), results[PLAIN_FLOOR].median())
        print(f"  {name}: {ms(result.median())}, {ratio} the plain floor")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--codecompanion", type=Path, default=None, help="codecompanion.nvim checkout")
    parser.add_argument("--plenary", type=Path, default=None, help="plenary.nvim checkout")
    parser.add_argument("--agentic", type=Path, default=None, help="agentic.nvim checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--counts", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run before it is killed")
    args = parser.parse_args(argv)
    others = peers(args, parser)
    scratch = Path(tempfile.mkdtemp(prefix="acp-compare-"))
    rows: list[str] = []
    try:
        for count in args.counts:
            rows += ["", *compare(count, others, args.runs, args.timeout, scratch)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

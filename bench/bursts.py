"""Bursts (issue 26): many things at once, and how long any one of them holds Neovim.

Each case runs a burst with the responsiveness probe (`probe.py`: a second client making an `nvim_eval("1")`
round trip and typing a key every 10 ms) and prints the worst round trip sent during the burst, the keys typed
and the keys Neovim saw, and the burst's total time, beside a floor measured in the same Neovim:

- watch: `touch N DIR` (the flood agent creates 10,000 new files while its turn runs) into a folder holding
  100 loaded buffers, which the turn's disk watch watches; floor: the same files into a folder no buffer is in
  (no watch sees them);
- edits: `create N DIR` (2,000 tool calls, each creating a file, completed in one write) followed into the
  review, from the agent's clock just before it writes the completions to the review holding every file;
  floor: the same calls with kind `read`, which the follower of edits leaves alone (the chat draws both);
- terminals: `terms N 60` (200 `terminal/create` in one write, each `sleep 60`), from their sending to the
  last answer, then `:AcpStop`, to the last of their processes gone; floor: Neovim's own `jobstart(...,
  {term = true})` of the same 200 commands in one Lua call, and their process groups signalled in one loop.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from bench.harness import NS_PER_S, ROOT, Neovim, Result, median, ms, wait_until

# Issue 26: no single request, update or burst holds Neovim longer than this.
HELD_S = 0.100


class Config(Protocol):
    quick: bool
    runs: int

    def size(self, full: int, quick: int) -> int: ...

    def workdir(self, name: str) -> Path: ...


class Probe:
    """The responsiveness probe over `--listen`, typing into a scratch buffer in Insert mode."""

    def __init__(self, nv: Neovim, workdir: Path) -> None:
        self._nv = nv
        nv.lua("acp_bench.typing_target()")
        self._out = workdir / f"probe-{time.monotonic_ns()}.json"
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.probe", nv.socket, str(self._out)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline().strip() != "ready":
            raise RuntimeError("the responsiveness probe did not start")

    def stop(self) -> dict[str, Any]:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(30)
        keys: list[int] = self._nv.lua("local k = acp_bench.keys; acp_bench.keys = {}; return k")
        self._nv.api.input("<Esc>")
        data: dict[str, Any] = json.loads(self._out.read_text(encoding="utf-8"))
        data["arrived"] = len(keys)
        # A key's round trip: from its `nvim_input` to its InsertCharPre (the same clock). The probe sends the
        # key, waits for `nvim_input`'s answer, then times its `nvim_eval`: a stall while the key waits shows
        # only here.
        data["key_trips"] = [
            [sent, stamped - sent] for sent, stamped in zip(data["keys"], keys, strict=False)
        ]
        return data


def worst_round_trip(probe: dict[str, Any], t0: int, t1: int) -> float:
    """The longest round trip (seconds), of an `nvim_eval` or a typed key, of those sent within [t0, t1]
    (monotonic ns) or still waiting at t0."""
    trips = [*probe["evals"], *probe["key_trips"]]
    return max((rtt / NS_PER_S for sent, rtt in trips if sent <= t1 and sent + rtt >= t0), default=0.0)


def _reports(path: Path, show: str) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [e for e in entries if e.get("show") == show]


def _held(result: Result, label: str, worst: float, floor: float | None, judged: bool) -> None:
    result.judge(f"{label}: Neovim held at most {ms(HELD_S)} ({ms(worst)})", worst <= HELD_S, judged)
    if floor is not None:
        result.figures[f"{label}: worst round trip"] = f"{ms(worst)} (floor {ms(floor)})"
    else:
        result.figures[f"{label}: worst round trip"] = ms(worst)


def _keys(result: Result, label: str, probe: dict[str, Any], judged: bool) -> None:
    typed, arrived = len(probe["keys"]), probe["arrived"]
    result.figures[f"{label}: keys typed / seen"] = f"{typed} / {arrived}"
    result.judge(
        f"{label}: every key typed meanwhile arrives ({arrived} of {typed})", typed == arrived, judged
    )


# ---- 10,000 new files beside 100 loaded buffers ------------------------------------------------------------


def _touch(nv: Neovim, report: Path, count: int, folder: Path) -> tuple[int, int]:
    """One `touch` turn; (its start, the end of its turn) in monotonic ns."""
    before = len(_reports(report, "touch"))
    t0 = time.monotonic_ns()
    nv.api.command(f"AcpPrompt touch {count} {folder}")
    wait_until(lambda: len(_reports(report, "touch")) > before, 120, "the agent's files")
    nv.wait_state("ready", 120)
    return t0, time.monotonic_ns()


def watch(config: Config) -> Result:
    result = Result("watch_burst")
    workdir = config.workdir("watch-burst")
    watched, elsewhere = workdir / "watched", workdir / "elsewhere"
    watched.mkdir()
    elsewhere.mkdir()
    count, buffers = config.size(10_000, 500), config.size(100, 10)
    for i in range(buffers):
        (watched / f"open-{i:03d}.txt").write_text(f"buffer {i}\n", encoding="utf-8")
    nv = Neovim(workdir)
    judged = not config.quick
    report = workdir / "report.jsonl"
    try:
        nv.start_agent()
        nv.lua(
            "for _, p in ipairs(...) do local b = vim.fn.bufadd(p); vim.bo[b].swapfile = false;"
            " vim.fn.bufload(b) end",
            [str(watched / f"open-{i:03d}.txt") for i in range(buffers)],
        )
        worst: list[tuple[int, int]] = []
        floor: list[tuple[int, int]] = []
        took: list[float] = []
        floor_took: list[float] = []
        probe = Probe(nv, workdir)
        try:
            for _ in range(config.runs):
                for folder, worsts, tooks in ((watched, worst, took), (elsewhere, floor, floor_took)):
                    t0, t1 = _touch(nv, report, count, folder)
                    worsts.append((t0, t1))
                    tooks.append((t1 - t0) / NS_PER_S)
        finally:
            data = probe.stop()
        held = median([worst_round_trip(data, a, b) for a, b in worst])
        held_floor = median([worst_round_trip(data, a, b) for a, b in floor])
        label = f"{count:,} new files beside {buffers} loaded buffers"
        _held(result, label, held, held_floor, judged)
        result.figures[f"{label}: turn"] = (
            f"{ms(median(took))} (floor, into a folder no buffer is in: {ms(median(floor_took))})"
        )
        _keys(result, label, data, judged)
        result.notes.append(
            "floor: the same files created in a folder that holds no loaded buffer, so no watch sees them; "
            "the turn includes the agent's 0.3 s wait after its last file"
        )
    finally:
        nv.close()
    return result


# ---- 2,000 tool calls, each creating a file, completed at once ---------------------------------------------

REVIEW_FILES = "return #require('acp_nvim.editor.review').files()"


def _create(nv: Neovim, report: Path, count: int, folder: Path, kind: str) -> tuple[int, int, int]:
    """One `create` turn; (the agent's stamp before its completions, the review complete, the turn's end)."""
    before = len(_reports(report, "create"))
    folder.mkdir()
    nv.api.command(f"AcpPrompt create {count} {folder} {kind}")
    wait_until(lambda: len(_reports(report, "create")) > before, 300, "the agent's tool calls")
    if kind != "read":
        wait_until(lambda: nv.lua(REVIEW_FILES) >= count, 300, "every file in the review", 0.01)
    done = time.monotonic_ns()
    nv.wait_state("ready", 300)
    files = nv.lua(REVIEW_FILES)
    expected = 0 if kind == "read" else count
    if files != expected:
        raise RuntimeError(f"{files} files in the review, {expected} expected")
    nv.lua("require('acp_nvim.editor.review').accept_all()")
    return _reports(report, "create")[-1]["completed_ns"], done, time.monotonic_ns()


# Neovim's own loading of the files into hidden buffers, which the review of each needs: one Lua call.
FLOOR_LOAD = """
local t0 = vim.uv.hrtime()
for _, path in ipairs(...) do
  local buf = vim.fn.bufadd(path)
  vim.bo[buf].swapfile = false
  vim.bo[buf].buflisted = false
  vim.fn.bufload(buf)
end
return (vim.uv.hrtime() - t0) / 1e9
"""


def _floor_load(nv: Neovim, folder: Path, count: int) -> float:
    folder.mkdir()
    paths = []
    for i in range(count):
        path = folder / f"new-{i:05d}.txt"
        path.write_text(f"file {i}\nwritten by the agent\n", encoding="utf-8")
        paths.append(str(path))
    return float(nv.lua(FLOOR_LOAD, paths))


def edits(config: Config) -> Result:
    result = Result("edit_burst")
    workdir = config.workdir("edit-burst")
    counts = [config.size(250, 20), config.size(2_000, 100)]
    nv = Neovim(workdir)
    judged = not config.quick
    report = workdir / "report.jsonl"
    try:
        nv.start_agent()
        for count in counts:
            held: list[tuple[int, int]] = []
            floor: list[tuple[int, int]] = []
            took: list[float] = []
            floor_took: list[float] = []
            probe = Probe(nv, workdir)
            try:
                for run in range(config.runs):
                    for kind, helds, tooks in (("edit", held, took), ("read", floor, floor_took)):
                        folder = workdir / f"{kind}-{count}-{run}"
                        completed, done, end = _create(nv, report, count, folder, kind)
                        helds.append((completed, end))
                        tooks.append(((done if kind != "read" else end) - completed) / NS_PER_S)
            finally:
                data = probe.stop()
            label = f"{count:,} tool calls creating files, completed at once"
            worst = median([worst_round_trip(data, a, b) for a, b in held])
            _held(result, label, worst, median([worst_round_trip(data, a, b) for a, b in floor]), judged)
            loaded = _floor_load(nv, workdir / f"floor-load-{count}", count)
            result.figures[f"{label}: completed -> all in the review"] = (
                f"{ms(median(took))} (floors: the same calls as reads, to the turn's end: "
                f"{ms(median(floor_took))}; Neovim's own bufload of {count:,} such files: {ms(loaded)})"
            )
            _keys(result, label, data, judged)
        result.notes.append(
            "the round trips from the agent's stamp just before it writes the completions to the end of the "
            "turn; floor: the same tool calls of kind read (drawn in the chat, not followed)"
        )
    finally:
        nv.close()
    return result


# ---- 500 fs/write_text_file at once ------------------------------------------------------------------------


def writes(config: Config) -> Result:
    result = Result("write_burst")
    workdir = config.workdir("write-burst")
    count = config.size(500, 20)
    nv = Neovim(workdir)
    judged = not config.quick
    report = workdir / "report.jsonl"
    windows: list[tuple[int, int]] = []
    took: list[float] = []
    try:
        nv.start_agent()
        probe = Probe(nv, workdir)
        try:
            for run in range(config.runs):
                folder = workdir / f"run-{run}"
                folder.mkdir()
                before = len(_reports(report, "writes"))
                t0 = time.monotonic_ns()
                nv.api.command(f"AcpPrompt writes {count} {folder}")
                wait_until(lambda b=before: len(_reports(report, "writes")) > b, 300, "the writes' answers")  # type: ignore[misc]
                entry = _reports(report, "writes")[-1]
                if entry["errors"]:
                    raise RuntimeError(f"fs/write_text_file failed: {entry['errors'][:3]}")
                nv.wait_state("ready", 120)
                windows.append((t0, time.monotonic_ns()))
                took.append((entry["answered_ns"] - entry["sent_ns"]) / NS_PER_S)
                nv.lua("require('acp_nvim.editor.review').accept_all()")
        finally:
            data = probe.stop()
        label = f"{count} fs/write_text_file of new files at once"
        _held(result, label, median([worst_round_trip(data, a, b) for a, b in windows]), None, judged)
        result.figures[f"{label}: sent -> last answer"] = ms(median(took))
        _keys(result, label, data, judged)
    finally:
        nv.close()
    return result


# ---- 200 terminals, then :AcpStop ------------------------------------------------------------------------

# Neovim's own terminals: what one Lua call holds for `jobstart(..., {term = true})` of the same commands,
# then for signalling their process groups.
FLOOR_TERMINALS = """
local count = ...
local uv = vim.uv
local t0 = uv.hrtime()
local jobs, bufs = {}, {}
for i = 1, count do
  local buf = vim.api.nvim_create_buf(false, true)
  bufs[i] = buf
  vim.api.nvim_buf_call(buf, function()
    jobs[i] = vim.fn.jobstart({ "sleep", "60" }, { term = true })
  end)
end
local t1 = uv.hrtime()
-- Each job must have become its group's leader before a signal can reach its group.
vim.wait(5000, function()
  for _, job in ipairs(jobs) do
    local pid = vim.fn.jobpid(job)
    local stat = io.open("/proc/" .. pid .. "/stat")
    local line = stat and stat:read("*l") or ""
    if stat then stat:close() end
    local pgrp = line:match("^.*%)%s+%S+%s+%d+%s+(%d+)")
    if tonumber(pgrp) ~= pid then
      return false
    end
  end
  return true
end, 5)
local t2 = uv.hrtime()
for _, job in ipairs(jobs) do
  uv.kill(-vim.fn.jobpid(job), "sigterm")
end
local t3 = uv.hrtime()
vim.wait(5000, function()
  return vim.fn.jobwait(jobs, 0)[count] ~= -1
end, 5)
for _, buf in ipairs(bufs) do
  pcall(vim.api.nvim_buf_delete, buf, { force = true })
end
return { (t1 - t0) / 1e9, (t3 - t2) / 1e9 }
"""


def _alive(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            continue
    return alive


def terminals(config: Config) -> Result:
    result = Result("terminal_burst")
    workdir = config.workdir("terminal-burst")
    count = config.size(200, 20)
    judged = not config.quick
    create_held: list[float] = []
    stop_held: list[float] = []
    create_took: list[float] = []
    stop_took: list[float] = []
    floors: list[list[float]] = []
    for _ in range(config.runs):
        nv = Neovim(workdir / f"run-{len(floors)}")
        report = nv.workdir / "report.jsonl"
        try:
            nv.start_agent()
            floors.append(nv.lua(FLOOR_TERMINALS, count))
            probe = Probe(nv, nv.workdir)
            try:
                t0 = time.monotonic_ns()
                nv.api.command(f"AcpPrompt terms {count} 60")
                wait_until(lambda r=report: _reports(r, "terms"), 120, "the terminals' answers")  # type: ignore[misc]
                entry = _reports(report, "terms")[-1]
                if entry["errors"] or len(entry["terminals"]) != count:
                    raise RuntimeError(f"terminal/create failed: {entry['errors'][:3]}")
                t1 = time.monotonic_ns()
                nv.wait_state("ready", 60)
                pids = [int(p) for p in nv.lua(TERMINAL_PIDS, entry["terminals"])]
                t2 = time.monotonic_ns()
                nv.api.command("AcpStop")
                wait_until(lambda p=pids: not _alive(p), 60, "the terminals' processes to end", 0.01)  # type: ignore[misc]
                t3 = time.monotonic_ns()
                # Round trips a while after the stop too: a sweep scheduled for later is the stop's.
                time.sleep(3)
                t4 = time.monotonic_ns()
            finally:
                data = probe.stop()
            create_held.append(worst_round_trip(data, t0, t1))
            stop_held.append(worst_round_trip(data, t2, t4))
            create_took.append((entry["answered_ns"] - entry["sent_ns"]) / NS_PER_S)
            stop_took.append((t3 - t2) / NS_PER_S)
            _keys(result, f"{count} terminals", data, judged)
        finally:
            nv.close()
    floor_create = median([f[0] for f in floors])
    floor_kill = median([f[1] for f in floors])
    _held(result, f"{count} terminal/create in one burst", median(create_held), floor_create, judged)
    _held(result, f":AcpStop with {count} terminals running", median(stop_held), floor_kill, judged)
    result.figures[f"{count} terminal/create: sent -> last answer"] = (
        f"{ms(median(create_took))} (floor, {count} jobstart in one Lua call: {ms(floor_create)})"
    )
    result.figures[f":AcpStop -> the {count} terminals' processes gone"] = (
        f"{ms(median(stop_took))} (floor, their groups signalled in one loop: {ms(floor_kill)})"
    )
    result.notes.append(
        "the :AcpStop round trips are those of the 3 s after it (the SIGKILL sweeps come later); the floors "
        "are how long one Lua call holds Neovim for the same jobs, and for signalling their groups"
    )
    return result


TERMINAL_PIDS = """
local out = {}
for _, id in ipairs(...) do
  out[#out + 1] = require('acp_nvim.editor.terminal').pid(id)
end
return out
"""

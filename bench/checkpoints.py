"""Checkpoints (issue 27): what the snapshot before each prompt costs, and a restore.

A real headless Neovim, the flood agent, a project of 10,000 files (and, in full mode, a tree of 100 MB). From
the `:AcpPrompt` (stamped in the Lua call that runs it, `vim.uv.hrtime`) to the agent receiving the prompt
(the flood agent stamps it with the same monotonic clock): the first prompt (cold: every file hashed into
the shadow repository), then later ones (warm: git's stat cache, nothing changed, and 10 files changed).
Floor: the same in a Neovim with `checkpoints.enabled = false`, alternated. Then the restore of a turn that
touched 1,000 files: `:AcpCheckpoint restore N` to its report, polled from here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Protocol

from bench.harness import Neovim, Result, median, ms, wait_until

WARM_TARGET_S = 0.100

PROMPT = """
acp_bench.checkpoint_t0 = vim.uv.hrtime()
vim.cmd("AcpPrompt words 1")
return acp_bench.checkpoint_t0
"""


class Config(Protocol):
    quick: bool
    runs: int

    def size(self, full: int, quick: int) -> int: ...

    def workdir(self, name: str) -> Path: ...


def _project(root: Path, files: int, size: int) -> None:
    for n in range(files):
        folder = root / f"pkg{n // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{n:05d}.py").write_text(f"# file {n}\n" + "x = 1\n" * (size // 6), encoding="utf-8")
    (root / ".gitignore").write_text("*.log\n")


def _received(nv: Neovim, report: Path, seen: int) -> int:
    import json

    def entries() -> list[dict[str, Any]]:
        if not report.exists():
            return []
        lines = report.read_text(encoding="utf-8").splitlines()
        return [e for e in map(json.loads, filter(None, lines)) if e.get("show") == "stream"]

    wait_until(lambda: len(entries()) > seen, 120, "the prompt to reach the agent")
    nv.wait_state("ready", 120)
    return int(entries()[-1]["prompt_received_ns"])


def _prompt(nv: Neovim, report: Path, seen: int) -> float:
    t0 = int(nv.lua(PROMPT))
    return (_received(nv, report, seen) - t0) / 1e9


def _neovim(workdir: Path, project: Path, enabled: bool) -> tuple[Neovim, Path]:
    report = workdir / "report.jsonl"
    nv = Neovim(
        workdir,
        agent_env={"ACP_FLOOD_REPORT": str(report)},
        options={"checkpoints": {"enabled": enabled}},
    )
    nv.api.command(f"cd {project}")
    nv.start_agent()
    return nv, report


def _send_times(config: Config, project: Path, label: str, result: Result) -> float:
    """Cold and warm times to the agent, with and without checkpoints; the warm median with them."""
    with_cp, report = _neovim(config.workdir(f"cp-{label}"), project, True)
    without, floor_report = _neovim(config.workdir(f"nocp-{label}"), project, False)
    try:
        cold = _prompt(with_cp, report, 0)
        floor_first = _prompt(without, floor_report, 0)
        warm, changed, floor = [], [], []
        files = sorted(project.glob("pkg*/mod*.py"))
        for run in range(config.runs):
            warm.append(_prompt(with_cp, report, 1 + 2 * run))
            for f in files[run * 10 : run * 10 + 10]:
                f.write_text(f.read_text(encoding="utf-8") + f"# run {run}\n", encoding="utf-8")
            changed.append(_prompt(with_cp, report, 2 + 2 * run))
            floor.append(_prompt(without, floor_report, 1 + run))
        base = median(floor)
        result.figures[f"{label}: <CR> -> prompt at the agent, cold (first prompt)"] = (
            f"{ms(cold)} (without checkpoints {ms(floor_first)})"
        )
        result.figures[f"{label}: warm, nothing changed"] = (
            f"{ms(median(warm))} (without checkpoints {ms(base)}, +{ms(median(warm) - base)})"
        )
        result.figures[f"{label}: warm, 10 files changed"] = f"{ms(median(changed))}"
        return max(median(warm), median(changed))
    finally:
        with_cp.close()
        without.close()


def _restore_time(config: Config, project: Path, touched: int, result: Result) -> float:
    nv, report = _neovim(config.workdir("cp-restore"), project, True)
    try:
        _prompt(nv, report, 0)
        times = []
        files = sorted(project.glob("pkg*/mod*.py"))[:touched]
        for run in range(config.runs):
            # The turn: `touched` files changed, one in ten removed, ten created.
            for n, f in enumerate(files):
                if n % 10 == 0:
                    f.unlink()
                else:
                    f.write_text(f"changed {run}\n", encoding="utf-8")
            made = project / f"made{run}"
            made.mkdir()
            for n in range(10):
                (made / f"new{n}.txt").write_text("new\n", encoding="utf-8")
            notes = int(nv.lua("return #acp_bench.notes"))
            start = time.perf_counter()
            nv.api.command("AcpCheckpoint restore 1")
            wait_until(lambda n=notes: nv.lua("return #acp_bench.notes") > n, 120, "the restore's report")  # type: ignore[misc]
            times.append(time.perf_counter() - start)
            message = nv.lua("return acp_bench.notes[#acp_bench.notes].msg")
            assert "restored to 1" in message, message
            assert not made.exists() and all(f.exists() for f in files)
        took = median(times)
        result.figures[f"restore of a turn that touched {touched} files (+10 created)"] = (
            f"{ms(took)} (command -> report, polled; the undo checkpoint included)"
        )
        return took
    finally:
        nv.close()


def checkpoints(config: Config) -> Result:
    result = Result("checkpoints")
    judged = not config.quick
    files = config.size(10_000, 200)
    project = config.workdir("project")
    _project(project, files, 400)
    warm = _send_times(config, project, f"{files} files", result)
    result.judge(f"warm <= 100 ms for {files} files ({ms(warm)})", warm <= WARM_TARGET_S, judged)
    _restore_time(config, project, config.size(1000, 20), result)
    if not config.quick:
        big = config.workdir("project-100mb")
        _project(big, 1000, 100 * 1024)
        _send_times(config, big, "100 MB tree (1,000 files)", result)
    result.notes.append(
        "cold: the first prompt of a project hashes every file into the shadow repository; warm: git's stat "
        "cache (its private index) finds what changed; the floor is the same Neovim and agent with "
        "checkpoints.enabled = false"
    )
    return result

"""Load from the agent's stream in a real headless Neovim: huge updates and very many tool calls in one turn.

The round trip is measured by the probe of test_hostile_nvim.py (a second client on Neovim's server socket)
while the show runs; the figures, and the VmRSS of Neovim and of the Python host before and after, are printed
(`pytest -s`).
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.nvim.conftest import Nvim
from tests.nvim.test_hostile_nvim import STAMP_KEYS, configure, hostile_agent, measure

# The bound, met by the huge updates on a loaded 2-core machine (max ~15 ms measured; 6.3 s before).
MAX_ROUND_TRIP_MS = 50.0
HUGE_MB = 50


def vm_rss(pid: int) -> int:
    """Resident set size of a process, in bytes (/proc/PID/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def pids(nvim: Nvim) -> tuple[int, int]:
    nvim_pid = int(nvim.lua("return vim.fn.getpid()"))
    host_pid = int(nvim.lua("return require('acp_nvim.host').info().pid"))
    return nvim_pid, host_pid


def start(nvim: Nvim, tmp_path: Path, **env: str) -> dict[str, object]:
    configure(nvim, tmp_path, hostile=hostile_agent(**env))
    nvim.lua(STAMP_KEYS)
    nvim.api.command("AcpStart hostile")
    nvim.wait_state("ready")
    return measure(nvim, "none")


def memory(nvim: Nvim) -> dict[str, int]:
    nvim_pid, host_pid = pids(nvim)
    return {"nvim": vm_rss(nvim_pid), "host": vm_rss(host_pid)}


def report(name: str, before: dict[str, int], after: dict[str, int], **extra: object) -> None:
    mib = {f"{k}_mib": [round(before[k] / 2**20, 1), round(after[k] / 2**20, 1)] for k in before}
    print(f"\nMEMORY {name} {json.dumps({**mib, **extra})}")


def line_index(lines: list[str], needle: str, *, last: bool = False) -> int:
    indexes = range(len(lines) - 1, -1, -1) if last else range(len(lines))
    for index in indexes:
        if needle in lines[index]:
            return index
    raise AssertionError(f"{needle!r} not in the chat:\n" + "\n".join(line[:120] for line in lines[-40:]))


def test_huge_updates_are_cut_with_a_note_and_what_follows_renders_in_order(
    nvim: Nvim, tmp_path: Path
) -> None:
    start(nvim, tmp_path, HOSTILE_HUGECHUNK_MB=str(HUGE_MB))
    before = memory(nvim)
    figures = measure(nvim, "hugechunk")
    nvim.wait("not require('acp_nvim.chat').pending(require('acp_nvim.chat').current)")
    after = memory(nvim)
    report("hugechunk", before, after, rtt_max_ms=figures["rtt_ms"]["max"])
    lines = nvim.chat_lines()
    # Each huge text shows its beginning, then a note of what is not shown; what came after follows in order.
    order = [
        line_index(lines, "HUGE-BEGIN"),
        line_index(lines, "MiB more not shown"),
        line_index(lines, "after the huge chunk"),
    ]
    rest = lines[order[-1] :]
    order += [
        order[-1] + line_index(rest, "HUGE-BEGIN"),
        order[-1] + line_index(rest, "MiB more not shown"),
        order[-1] + line_index(rest, "after the huge thought"),
    ]
    rest = lines[order[-1] :]
    order += [
        order[-1] + line_index(rest, "huge edit"),
        order[-1] + line_index(rest, "HUGE-BEGIN"),
        order[-1] + line_index(rest, "not shown"),
        order[-1] + line_index(rest, "after the huge tool call"),
        order[-1] + line_index(rest, "survived"),
    ]
    assert order == sorted(order), order
    # Far less than the 250 MiB the agent sent reached the buffer.
    chat_bytes = sum(len(line) + 1 for line in lines)
    assert chat_bytes < 8 * 2**20, chat_bytes
    assert figures["rtt_ms"]["max"] < MAX_ROUND_TRIP_MS, figures
    assert figures["key_ms"]["max"] < MAX_ROUND_TRIP_MS, figures
    # Before: Neovim +1074 MiB, the host +332 MiB.
    assert after["nvim"] - before["nvim"] < 32 * 2**20, (before, after)
    assert after["host"] - before["host"] < 128 * 2**20, (before, after)
    nvim.wait_state("ready")
    assert nvim.lua("return 1 + 1") == 2

"""Neovim's responsiveness while a test runs: a second client, in its own process (so the test's own work
never stands in its way), connected to Neovim's server socket, times an `nvim_eval("1")` round trip every
10 ms until told to stop."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.conftest import ROOT

# A round trip every 10 ms until a line arrives on stdin, then the figures as JSON.
PROBE = r"""
import json, select, sys, time
import pynvim

nvim = pynvim.attach("socket", path=sys.argv[1])
rtts = []
while True:
    t0 = time.monotonic_ns()
    nvim.eval("1")
    rtts.append((time.monotonic_ns() - t0) / 1e6)
    if len(rtts) == 1:
        print("ready", flush=True)
    if select.select([sys.stdin], [], [], 0.01)[0]:
        break
print(json.dumps(rtts), flush=True)
"""


class RoundTrips:
    """The figures of one measured block, filled in when it ends."""

    def __init__(self, case: str) -> None:
        self.case = case
        self.samples_ms: list[float] = []
        # Further figures a test records beside the round trips (printed with them).
        self.extra: dict[str, Any] = {}

    def __setitem__(self, name: str, value: Any) -> None:
        self.extra[name] = value

    @property
    def max_ms(self) -> float:
        return max(self.samples_ms, default=0.0)

    @property
    def p50_ms(self) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[len(ordered) // 2] if ordered else 0.0

    def __repr__(self) -> str:
        return f"RoundTrips({self.figures()!r})"

    def figures(self) -> dict[str, Any]:
        return {
            "case": self.case,
            "n": len(self.samples_ms),
            "max_ms": round(self.max_ms, 2),
            "p50_ms": round(self.p50_ms, 2),
            **self.extra,
        }


@contextmanager
def round_trips(api: Any, case: str) -> Iterator[RoundTrips]:
    """Measures round trips of the Neovim of pynvim session `api` while the block runs; prints them (`-s`)."""
    address = api.exec_lua("return vim.fn.serverstart()")
    probe = subprocess.Popen(
        [sys.executable, "-c", PROBE, address],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert probe.stdout is not None
    figures = RoundTrips(case)
    try:
        ready, _, _ = select.select([probe.stdout], [], [], 30)
        assert ready and probe.stdout.readline().strip() == "ready", "the probe did not connect"
        yield figures
        out, _ = probe.communicate("stop\n", timeout=60)
    finally:
        if probe.poll() is None:
            probe.kill()
            probe.wait()
    figures.samples_ms = json.loads(out.strip().splitlines()[-1])
    print(f"\nROUNDTRIP {json.dumps(figures.figures())}")

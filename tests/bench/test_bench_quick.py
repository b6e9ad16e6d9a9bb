"""The benchmark suite's quick mode runs end to end (tiny sizes, one run); no timing is asserted here."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

NAMES = [
    "streaming",
    "responsiveness",
    "replay",
    "insert_leave",
    "lua_heap",
    "fs",
    "terminal",
    "startup",
    "big_chat",
    "checkpoints",
    "watch_burst",
    "edit_burst",
    "terminal_burst",
    "write_burst",
    "mcp_server",
]


# Six benchmarks, each starting its own Neovim: more than the suite's default timeout.
@pytest.mark.timeout(600)
def test_quick_mode_runs_every_benchmark() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for name in NAMES:
        assert f"== {name}\n" in done.stdout, done.stdout
    # Quick mode records nothing.
    assert "recorded in" not in done.stdout


@pytest.mark.timeout(120)
def test_the_comparison_skips_the_clients_not_given() -> None:
    """Without checkouts of the other clients, `bench.compare` says what it skips and runs acp.nvim alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACP_BENCH_")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.compare", "--counts", "200", "--runs", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "codecompanion.nvim: skipped (give its checkout: --codecompanion PATH" in done.stdout
    assert "agentic.nvim: skipped (give its checkout: --agentic PATH" in done.stdout
    assert "  acp.nvim: " in done.stdout and "codecompanion.nvim: " not in done.stdout.split("prose 200 (")[1]

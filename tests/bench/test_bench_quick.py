"""The benchmark suite's quick mode runs end to end (tiny sizes, one run); no timing is asserted here."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

NAMES = ["streaming", "responsiveness", "replay", "fs", "terminal", "startup"]


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

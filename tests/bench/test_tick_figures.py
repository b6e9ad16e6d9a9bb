"""The probe's runs report Neovim's main-loop ticks: a long tick is told apart from Neovim's own work by the
CPU time it took and whether the kernel took Neovim off its core meanwhile."""

from __future__ import annotations

from bench.suite import _tick_figure

MS = 1_000_000


def test_the_longest_tick_the_most_cpu_and_the_ticks_past_a_frame_taken_off_the_core() -> None:
    # {start, wall, CPU, involuntary switches}: a 12 ms tick of 2 ms CPU (preempted), a 9 ms tick of 9 ms CPU
    # (Neovim's own work), short ticks.
    first = {"ticks": [[0, 12 * MS, 2 * MS, 1], [20 * MS, 9 * MS, 9 * MS, 0], [40 * MS, 2 * MS, 2 * MS, 0]]}
    second = {"ticks": [[0, 3 * MS, 3 * MS, 0]]}
    third = {"ticks": [[0, 14 * MS, 1 * MS, 2], [30 * MS, 10 * MS, 1 * MS, 1]]}
    figure = _tick_figure([first, second, third])
    # Medians over the runs: longest 12 ms, most CPU 3 ms, 2 ticks past 8 ms of which 1 taken off the core.
    assert figure == (
        "longest 12.0 ms, most CPU in one 3.0 ms; over 8 ms: 2 (of which taken off the core meanwhile: 1)"
    )


def test_a_run_without_a_tick_over_a_millisecond_reads_zero() -> None:
    assert _tick_figure([{"ticks": []}]) == (
        "longest 0.0 ms, most CPU in one 0.0 ms; over 8 ms: 0 (of which taken off the core meanwhile: 0)"
    )

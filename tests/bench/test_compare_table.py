"""bench.compare's rows: each client's time and CPU over the plain floor's, the highlighted floor's beside."""

from __future__ import annotations

from bench.compare import HIGHLIGHTED_FLOOR, PLAIN_FLOOR, Runs, Sample, table


def test_each_client_is_measured_against_both_floors_and_a_timeout_shows_no_ratio() -> None:
    results = {
        PLAIN_FLOOR: Runs([Sample(0.2, 0.1, agent_cpu=0.05)]),
        HIGHLIGHTED_FLOOR: Runs([Sample(0.4, 0.2, agent_cpu=0.05)]),
        "acp.nvim": Runs([Sample(0.3, 0.01, host_cpu=0.14, agent_cpu=0.055)]),
        "agentic.nvim": Runs([Sample(1.0, 2.0)], timeouts=2),
    }
    header, rule, plain, lit, ours, theirs = table(10_000, results, 3, 60.0)
    assert header.startswith(
        "| prose 10,000 (3 runs) | to the last word | ÷ plain floor | ÷ highlighted floor"
    )
    assert rule == "|---|---|---|---|---|---|---|---|"
    assert (
        plain.startswith("| the plain floor (") and "| 200.0 ms | 1.00x | 0.50x | 100.0 ms | 1.00x |" in plain
    )
    assert "| 400.0 ms | 2.00x | 1.00x | 200.0 ms | 2.00x | 50.0 ms | 1.00x |" in lit
    # acp.nvim's CPU is its Neovim's and its host's.
    assert ours == (
        "| acp.nvim | 300.0 ms | 1.50x | 0.75x | 150.0 ms (Neovim 10.0 ms) | 1.50x | 55.0 ms | 1.10x |"
    )
    # Two of three runs timed out: the median is a timeout, shown as such, with no ratio.
    assert theirs.startswith("| agentic.nvim | > 60 s (2 of 3 timed out) | - | - |")

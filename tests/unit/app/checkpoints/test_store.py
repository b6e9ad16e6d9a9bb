"""What pruning keeps of a session's checkpoints (issue 27): never one older than the age limit, never more
than the count, always the newest ones that fit both; and the record file round-trips."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.app.checkpoints.store import Checkpoint, SessionRecord, Store, pruned

DAY = 86400.0


def record_of(ages: list[float], now: float) -> SessionRecord:
    checkpoints = [
        Checkpoint(id=str(n), turn=n, kind="prompt", time=now - age, title="t", commits={"/p": "c"})
        for n, age in enumerate(sorted(ages, reverse=True), 1)
    ]
    return SessionRecord(session_id="s", folders=["/p"], checkpoints=checkpoints)


@given(
    ages=st.lists(st.floats(min_value=0, max_value=30 * DAY), max_size=40),
    max_count=st.integers(min_value=0, max_value=50),
    max_days=st.floats(min_value=0.1, max_value=14),
)
def test_pruning_keeps_the_newest_within_the_age_and_the_count(
    ages: list[float], max_count: int, max_days: float
) -> None:
    now = 1e9
    record = record_of(ages, now)
    dropped = pruned(record, now, max_days * DAY, max_count)
    kept = [c for c in record.checkpoints if c not in dropped]
    assert len(kept) <= max_count
    assert all(now - c.time <= max_days * DAY for c in kept)
    fresh = [c for c in record.checkpoints if now - c.time <= max_days * DAY]
    # The newest that fit, in order: nothing newer was dropped in favour of an older one.
    assert kept == fresh[len(fresh) - len(kept) :]
    assert len(kept) == min(len(fresh), max_count)


def test_a_record_round_trips_and_a_broken_one_is_no_record(tmp_path: Path) -> None:
    store = Store(str(tmp_path))
    record = record_of([3.0, 2.0], 1e9)
    record.checkpoints[0].skipped = {"/p": [("big.bin", "over the size limit")]}
    store.save(record)
    assert store.load("s") == record
    assert store.load("other") is None
    (tmp_path / "sessions" / next(p.name for p in (tmp_path / "sessions").iterdir())).write_text("{not json")
    assert store.load("s") is None

"""The streaming benchmark's judgement of host->Neovim calls: per frame, not a mean over the turn."""

from __future__ import annotations

from bench.streaming import FRAME_NS, MAX_CALLS_PER_FRAME, MAX_EXTRA_CALLS, extra_calls, most_in_a_frame

MS = 1_000_000


def judged(times: list[int]) -> bool:
    return most_in_a_frame(times) <= MAX_CALLS_PER_FRAME and extra_calls(times) <= MAX_EXTRA_CALLS


def test_a_call_per_frame_plus_the_prompt_and_the_end_passes() -> None:
    # The prompt, the first words at once 2 ms later, a call per frame (arriving 3 ms early or late), the
    # turn's end 1 ms after the last.
    frames = [2 * MS + k * FRAME_NS + (3 * MS if k % 2 else -3 * MS) for k in range(1, 30)]
    assert judged([0, 2 * MS, *frames, frames[-1] + MS])
    # A whole turn within one frame: the prompt, the first words and the end.
    assert judged([0, 2 * MS, 9 * MS])


def test_a_call_per_update_or_two_per_frame_fail_however_long_the_stream() -> None:
    assert not judged([k * MS // 4 for k in range(2_000)])  # a call every 0.25 ms
    # Two calls in every frame: the mean over a long turn would read 2, no 16 ms holds more than 2.
    steady = [k * FRAME_NS + offset for k in range(30) for offset in (0, 5 * MS)]
    assert most_in_a_frame(steady) == 2 and not judged(steady)

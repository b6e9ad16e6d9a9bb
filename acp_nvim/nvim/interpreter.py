"""The interpreter's settings for the host's process: how its two threads (pynvim's, the anyio loop's) share
the GIL, and how Python's cyclic garbage collector treats what the host makes."""

from __future__ import annotations

import gc
import sys

# The GIL's switch interval while the host runs (Python's default: 5 ms).
SWITCH_INTERVAL_S = 0.0001
# Container objects allocated (less those freed) between two collections of the youngest generation (Python's
# default: 700).
YOUNG_THRESHOLD = 10_000


def share_the_gil() -> None:
    """Before the loop's thread starts. The two threads hand each other work: a Lua call handed to pynvim's
    thread waited up to Python's default switch interval for the GIL while the loop decoded a flood, and every
    frame of a stream, the agent's first words and the turn's end arrived that much later. Forced switches
    happen only while another thread waits for the GIL, so a shorter interval costs next to nothing otherwise.
    0.5 ms left a tail: the first words of a 100,000-word flood (a UI attached, 32 runs) reached the chat over
    5 ms after the agent sent them in 5 runs, in 1 at 0.1 ms (the host's CPU per update the same)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def settle() -> None:
    """Once the application exists. What exists now (the modules, their types and functions, pynvim, the
    application) lives as long as the host: kept out of the collector's full passes, which walked all of it
    while a stream ran, 8-9 ms with the GIL held (a frame's call, the prompt's, waited for it). And the
    youngest generation is collected less often: a read of the agent's pipe is hundreds of decoded updates
    alive together until the chat has them, which every collection of the youngest generation walked and
    moved on, to be walked again by the older generations' collections. Host CPU per streamed update, two
    interleaved rounds of 5 runs: 100,000 words 1.83/1.53 -> 1.42/1.38 us, 10,000 words 1.84/1.80 -> 1.62/1.53
    us (30,000 measured no better than 10,000)."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])

"""The interpreter's settings for the host's process: how its two threads (pynvim's, the anyio loop's) share
the GIL, and what Python's cyclic garbage collector walks."""

from __future__ import annotations

import gc
import sys

# The GIL's switch interval while the host runs (Python's default: 5 ms).
SWITCH_INTERVAL_S = 0.0001


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
    while a stream ran, 8-9 ms with the GIL held (a frame's call, the prompt's, waited for it). What agents
    and chats make from now on is collected as before."""
    gc.freeze()

"""Memory given back to the system once a chat is closed.

A long chat leaves the host's heap full of freed memory: the transcript's pieces, a streamed message's tail,
the decoded updates of each read (and what is only freed by the garbage collector: a chat's objects refer to
each other). CPython returns small objects' arenas only when wholly empty, and glibc keeps what is freed
below the top of its heap: the host stayed ~27 MiB larger after a 50 MiB chat was closed (bench/memory.py).
A collection, then `malloc_trim`, returns it; on a C library without `malloc_trim` (musl, macOS) the
collection alone is done.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import sys
from collections.abc import Callable

log = logging.getLogger("acp_nvim.memory")


def _find_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The C library this process already runs on (glibc's `malloc_trim`; musl has none).
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _find_malloc_trim()


def release_memory() -> None:
    """What is garbage collected, and the freed memory of the C heap returned to the system. A full collection
    takes tens of ms in a large host: for a closed chat, not for every update."""
    gc.collect()
    if _MALLOC_TRIM is not None:
        try:
            _MALLOC_TRIM(0)
        except OSError as exc:
            log.debug("malloc_trim failed: %s", exc)

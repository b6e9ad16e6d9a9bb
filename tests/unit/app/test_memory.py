from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import pytest

from acp_nvim.app import memory
from acp_nvim.app.memory import release_memory


def vm_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


class Node:
    def __init__(self) -> None:
        self.me = self


def test_what_only_the_collector_frees_is_freed() -> None:
    gc.disable()
    try:
        node = Node()
        ref = weakref.ref(node)
        del node
        assert ref() is not None
        release_memory()
        assert ref() is None
    finally:
        gc.enable()


@pytest.mark.skipif(memory._MALLOC_TRIM is None, reason="no malloc_trim in this C library")
def test_the_freed_heap_below_what_is_still_used_goes_back_to_the_system() -> None:
    """60 MB of 1 KiB blocks (malloc's heap, not mmap), freed under a block still in use: glibc keeps them
    until trimmed."""
    assert sys.platform.startswith("linux")
    release_memory()
    before = vm_rss()
    blocks = [bytes(1024) + bytes([i % 256]) for i in range(60_000)]
    pin = bytes(1024) + b"pin"
    assert vm_rss() > before + 40 * 2**20
    del blocks
    release_memory()
    assert vm_rss() < before + 8 * 2**20
    assert pin.endswith(b"pin")

"""The bridge's batching: calls that may wait a frame travel with the next call, in one RPC."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from acp_nvim.nvim.bridge import BATCH, FRAME_SECONDS, Bridge


class FakeLoop:
    def __init__(self) -> None:
        self.timers: list[tuple[float, Callable[[], None]]] = []

    def call_later(self, delay: float, callback: Callable[[], None]) -> None:
        self.timers.append((delay, callback))


class FakeNvim:
    """Runs `async_call` callbacks at once (the bridge's thread hop is not under test) and records RPCs."""

    def __init__(self) -> None:
        self.loop = FakeLoop()
        self.sent: list[tuple[str, tuple[Any, ...]]] = []

    def async_call(self, fn: Any, *args: Any) -> None:
        fn(*args)

    def exec_lua(self, code: str, *args: Any, **kwargs: Any) -> Any:
        assert kwargs == {"async_": True}
        self.sent.append((code, args))


def test_a_waiting_call_rides_with_the_next_one() -> None:
    nvim = FakeNvim()
    bridge = Bridge(nvim)
    bridge.lua_later("status", "status(...)", {"state": "running"})
    bridge.lua_later("status", "status(...)", {"state": "ready"})  # replaces the first
    assert nvim.sent == [] and len(nvim.loop.timers) == 1
    bridge.lua("apply(...)", "s1", None)
    assert nvim.sent == [
        (BATCH, ([["status(...)", [{"state": "ready"}], 1], ["apply(...)", ["s1", None], 2]],))
    ]
    # The frame's timer finds nothing left to send.
    delay, fire = nvim.loop.timers[0]
    assert delay == FRAME_SECONDS
    fire()
    assert len(nvim.sent) == 1


def test_a_waiting_call_goes_alone_after_a_frame() -> None:
    nvim = FakeNvim()
    bridge = Bridge(nvim)
    bridge.lua_later("status", "status(...)", 1)
    bridge.lua_later("other", "other(...)", 2)
    assert len(nvim.loop.timers) == 1  # one timer for everything waiting
    nvim.loop.timers[0][1]()
    assert nvim.sent == [(BATCH, ([["status(...)", [1], 1], ["other(...)", [2], 1]],))]
    bridge.lua_later("status", "status(...)", 3)
    nvim.loop.timers[1][1]()
    assert nvim.sent[-1] == ("status(...)", (3,))  # a single call needs no batch
    bridge.lua("plain(...)")
    assert nvim.sent[-1] == ("plain(...)", ())

"""The bridge's batching: calls that may wait a frame travel with the next call, in one RPC."""

from __future__ import annotations

import asyncio
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

        self.hops = 0

    def async_call(self, fn: Any, *args: Any) -> None:
        self.hops += 1
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


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.001)


def test_on_another_loop_a_waiting_call_costs_no_hop_to_pynvim_until_its_frame_is_over() -> None:
    """The anyio thread's status push as a turn starts: the hop would cost it the GIL while pynvim runs."""

    async def main() -> None:
        nvim = FakeNvim()
        bridge = Bridge(nvim)
        frames_over: list[float] = []
        hand_over = bridge._hand_over_later

        def counted() -> None:
            frames_over.append(asyncio.get_running_loop().time())
            hand_over()

        bridge._hand_over_later = counted  # type: ignore[method-assign]
        asked = asyncio.get_running_loop().time()
        bridge.lua_later("status", "status(...)", 1)
        assert nvim.hops == 0 and nvim.sent == [] and nvim.loop.timers == []
        await until(lambda: bool(nvim.sent))
        assert nvim.hops == 1 and nvim.sent == [("status(...)", (1,))]
        assert frames_over[0] - asked >= FRAME_SECONDS
        # Taken along by the next call: at the frame's end nothing is left to hand over.
        bridge.lua_later("status", "status(...)", 2)
        bridge.lua("apply(...)")
        await until(lambda: len(frames_over) == 2)
        assert nvim.hops == 2
        assert nvim.sent[-1] == (BATCH, ([["status(...)", [2], 1], ["apply(...)", [], 0]],))

    asyncio.run(main())


class QueuedNvim(FakeNvim):
    """Runs `async_call` callbacks only when told, in order, as pynvim's thread does when it gets to them."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[tuple[Any, tuple[Any, ...]]] = []

    def async_call(self, fn: Any, *args: Any) -> None:
        self.queued.append((fn, args))

    def run_queued(self) -> None:
        while self.queued:
            fn, args = self.queued.pop(0)
            fn(*args)


def test_sent_returns_once_the_calls_handed_over_before_it_have_gone_to_neovim() -> None:
    async def main() -> None:
        nvim = QueuedNvim()
        bridge = Bridge(nvim)
        bridge.attach_loop(asyncio.get_running_loop().call_soon)
        bridge.lua("apply(...)")
        waiting = asyncio.ensure_future(bridge.sent())
        await asyncio.sleep(0)
        assert not waiting.done() and nvim.sent == []
        nvim.run_queued()
        async with asyncio.timeout(5):
            await waiting
        assert nvim.sent == [("apply(...)", ())]

    asyncio.run(main())


def test_a_newer_status_is_never_overtaken_by_an_older_one_taken_along_before_it() -> None:
    """The older status goes with a call still waiting on pynvim's thread when the frame's timer fires there
    for the newer one: the newer must reach Neovim last (CI once saw a chat's agent stay "starting")."""
    nvim = QueuedNvim()
    bridge = Bridge(nvim)
    bridge.lua_later("status", "status(...)", "starting")
    nvim.run_queued()  # the frame's timer is set on pynvim's loop
    (_, first_frame_over), *_ = nvim.loop.timers
    bridge.lua("render(...)")  # takes "starting" along; pynvim's thread has not got to it yet
    bridge.lua_later("status", "status(...)", "ready")
    first_frame_over()
    nvim.run_queued()
    for _, frame_over in nvim.loop.timers[1:]:
        frame_over()
    nvim.run_queued()
    assert statuses_sent(nvim) == ["starting", "ready"]


def statuses_sent(nvim: FakeNvim) -> list[Any]:
    calls = [call for code, args in nvim.sent for call in (args[0] if code == BATCH else [(code, args)])]
    return [call[1][0] for call in calls if call[0] == "status(...)"]

"""The one way from the anyio thread into Neovim.

The Neovim API is not thread-safe: everything goes through `nvim.async_call`, which runs the callback on
pynvim's own loop. Fire-and-forget Lua calls are sent as notifications (no round trip, never blocks); a result
comes back through a thread-safe future that the anyio side awaits without blocking its loop.

Calls that need not arrive at once (a status refresh) wait up to a frame for the next call and travel with it
in one RPC (`lua/acp_nvim/host/batch.lua`): while an agent streams, Neovim gets one call per frame, not two.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Protocol

import anyio

from acp_nvim.app.port import ERROR, INFO, WARN
from acp_nvim.nvim.lua_api import BATCH
from acp_nvim.nvim.lua_values import LuaValue

log = logging.getLogger("acp_nvim.bridge")

__all__ = ["ERROR", "FRAME_SECONDS", "INFO", "WARN", "Bridge", "NvimLike"]

#: One frame at 60 Hz: how long a `lua_later` call waits for company; the chat's render period.
FRAME_SECONDS = 0.016

Call = tuple[str, tuple[LuaValue, ...]]


class NvimLike(Protocol):
    """The part of pynvim's `Nvim` the bridge uses, typed here once (pynvim itself is untyped)."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop: ...

    def async_call(self, fn: Callable[..., object], *args: object) -> None: ...

    def exec_lua(self, code: str, *args: LuaValue, async_: bool = False) -> LuaValue: ...


class Bridge:
    def __init__(self, nvim: NvimLike) -> None:
        self._nvim = nvim
        # Runs a callable on the anyio thread, from pynvim's (`LoopThread.call_soon`).
        self._to_loop: Callable[[Callable[[], object]], None] | None = None
        # `lua_later` calls not sent yet, by key; taken by the next call, or by a timer a frame later.
        self._later: dict[str, Call] = {}
        self._later_lock = threading.Lock()

    def attach_loop(self, call_soon: Callable[[Callable[[], object]], None]) -> None:
        self._to_loop = call_soon

    def lua(self, code: str, *args: LuaValue) -> None:
        """Runs `code` (a Lua chunk receiving `...`) in Neovim soon; safe from any thread, never waits."""
        self._hand_over((code, args))

    def lua_later(self, key: str, code: str, *args: LuaValue) -> None:
        """`lua`, within a frame: sent with the next call (in order before it) or alone a frame later. A newer
        call with the same `key` replaces one still waiting: only the latest status matters."""
        with self._later_lock:
            first = not self._later
            self._later.pop(key, None)
            self._later[key] = (code, args)
        if first:
            self._after_frame()

    def _after_frame(self) -> None:
        """`_hand_over_later` a frame from now, the timer on the caller's own loop: on the anyio thread (a
        status pushed as a turn starts) a hop to pynvim's thread now would cost the caller the GIL for a
        while, for a call that the turn's next call usually takes along anyway."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._nvim.async_call(self._hand_over_later_after_frame)
            return
        loop.call_later(FRAME_SECONDS, self._hand_over_later)

    def _hand_over_later_after_frame(self) -> None:
        self._nvim.loop.call_later(FRAME_SECONDS, self._hand_over_later)

    def _hand_over_later(self) -> None:
        self._hand_over()

    def _hand_over(self, *calls: Call) -> None:
        """The calls waiting, then `calls`, to pynvim's thread. Taken and handed over under one lock: that
        thread runs what it is handed in order, so no status taken along by a call still on its way can
        arrive after a newer one (Lua would show the old one for good)."""
        with self._later_lock:
            waiting = [*self._later.values(), *calls]
            self._later.clear()
            if waiting:
                self._nvim.async_call(self._exec_batch, waiting)

    def _exec_async(self, code: str, args: tuple[LuaValue, ...]) -> None:
        self._nvim.exec_lua(code, *args, async_=True)

    def _exec_batch(self, calls: list[Call]) -> None:
        if len(calls) == 1:
            self._exec_async(*calls[0])
            return
        self._nvim.exec_lua(BATCH, [[code, list(args), len(args)] for code, args in calls], async_=True)

    async def sent(self) -> None:
        """Returns once every call handed to pynvim's thread so far has been written to Neovim: they run there
        in order, so a mark behind them says when they have gone."""
        if self._to_loop is None:
            return
        done = anyio.Event()
        self._nvim.async_call(self._wake, done)
        await done.wait()

    def _wake(self, done: anyio.Event) -> None:
        """On pynvim's thread: sets `done` on the anyio thread (nothing once its loop is closed)."""
        if self._to_loop is None:
            return
        try:
            self._to_loop(done.set)
        except RuntimeError:
            log.debug("event loop closed before its wake-up")

    async def lua_result(self, code: str, *args: LuaValue) -> LuaValue:
        """Runs `code` in Neovim and returns its value; waits without blocking the anyio loop."""
        future: concurrent.futures.Future[LuaValue] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(self._nvim.exec_lua(code, *args))
            except Exception as err:
                future.set_exception(err)

        done = anyio.Event()
        future.add_done_callback(lambda _: self._wake(done))
        self._nvim.async_call(run)
        try:
            await done.wait()
        except BaseException:
            future.cancel()
            raise
        return future.result()

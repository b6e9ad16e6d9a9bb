"""The one way from the anyio thread into Neovim.

The Neovim API is not thread-safe: everything goes through `nvim.async_call`, which runs the callback on
pynvim's own loop. Fire-and-forget Lua calls are sent as notifications (no round trip, never blocks); a result
comes back through a thread-safe future that the anyio side awaits without blocking its loop.
"""

from __future__ import annotations

import concurrent.futures
import logging
from typing import Any, Protocol

import anyio
import anyio.from_thread

log = logging.getLogger("acp_nvim.bridge")

#: vim.log.levels, for what the host shows with vim.notify.
ERROR, WARN, INFO = 4, 3, 2


class NvimLike(Protocol):
    """The part of pynvim's `Nvim` the bridge uses (pynvim itself is untyped)."""

    def async_call(self, fn: Any, *args: Any) -> None: ...

    def exec_lua(self, code: str, *args: Any, **kwargs: Any) -> Any: ...


class Bridge:
    def __init__(self, nvim: NvimLike) -> None:
        self._nvim = nvim
        self._portal: anyio.from_thread.BlockingPortal | None = None

    def attach_portal(self, portal: anyio.from_thread.BlockingPortal) -> None:
        self._portal = portal

    def lua(self, code: str, *args: Any) -> None:
        """Runs `code` (a Lua chunk receiving `...`) in Neovim soon; safe from any thread, never waits."""
        self._nvim.async_call(self._exec_async, code, args)

    def _exec_async(self, code: str, args: tuple[Any, ...]) -> None:
        self._nvim.exec_lua(code, *args, async_=True)

    async def lua_result(self, code: str, *args: Any) -> Any:
        """Runs `code` in Neovim and returns its value; waits without blocking the anyio loop."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(self._nvim.exec_lua(code, *args))
            except Exception as err:
                future.set_exception(err)

        done = anyio.Event()
        portal = self._portal

        def wake(_: concurrent.futures.Future[Any]) -> None:
            # Runs on pynvim's thread: hand the wake-up to the anyio thread through the portal.
            if portal is not None:
                try:
                    portal.start_task_soon(_set_event, done)
                except RuntimeError:
                    log.debug("portal closed before a Neovim result arrived")

        future.add_done_callback(wake)
        self._nvim.async_call(run)
        try:
            await done.wait()
        except BaseException:
            future.cancel()
            raise
        return future.result()


async def _set_event(event: anyio.Event) -> None:
    event.set()

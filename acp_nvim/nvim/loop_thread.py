"""The host's anyio event loop, in a daemon thread of its own: pynvim's loop keeps the main thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from functools import partial

import anyio
import anyio.abc
import anyio.from_thread

THREAD_START_TIMEOUT = 10.0


class LoopThread:
    """An anyio event loop in a daemon thread, reachable through a blocking portal."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self.portal: anyio.from_thread.BlockingPortal | None = None
        self.task_group: anyio.abc.TaskGroup | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name="acp-nvim-anyio", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(THREAD_START_TIMEOUT):
            raise RuntimeError("the acp.nvim event loop did not start")

    def _run(self) -> None:
        anyio.run(self._main)

    async def _main(self) -> None:
        async with anyio.from_thread.BlockingPortal() as portal, anyio.create_task_group() as tasks:
            self.portal, self.task_group = portal, tasks
            self._loop = asyncio.get_running_loop()
            self._ready.set()
            await portal.sleep_until_stopped()
            tasks.cancel_scope.cancel()

    def spawn(self, fn: Callable[[], Coroutine[object, object, None]]) -> None:
        """Starts a task; only from the loop thread."""
        assert self.task_group is not None
        self.task_group.start_soon(fn)

    def call_soon(self, fn: Callable[[], object]) -> None:
        """Runs `fn` on the loop thread soon; from any other thread, without waiting for it. (A portal's
        `start_task_soon` waits until the loop has taken the task: on a command's way to the loop, that wait
        and the GIL handed back and forth cost ~0.3-0.5 ms; raises RuntimeError once the loop is closed.)"""
        assert self._loop is not None
        self._loop.call_soon_threadsafe(fn)

    def submit(self, fn: Callable[[], Coroutine[object, object, None]]) -> None:
        """`spawn` from any other thread, without waiting (see `call_soon`)."""
        assert self.task_group is not None
        self.call_soon(partial(self.task_group.start_soon, fn))

"""The remote-plugin host: the anyio loop thread and the entry points the rplugin declarations call.

pynvim runs its own loop on the main thread and calls these handlers there. Each handler only hands work to
the anyio thread (`start_task_soon` never waits), so Neovim is never blocked on an agent. The loop thread
starts on first use; at interpreter exit the agent is stopped politely before the process goes away.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from importlib import metadata
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread

from acp_nvim.nvim.bridge import Bridge, NvimLike
from acp_nvim.nvim.controller import Controller

log = logging.getLogger("acp_nvim.host")

LOG_ENV = "ACP_NVIM_LOG"
THREAD_START_TIMEOUT = 10.0


def setup_logging(path: str | None) -> str | None:
    """Logs go to a file only: the host's stdout is the msgpack-rpc channel to Neovim."""
    path = path or os.environ.get(LOG_ENV)
    if not path:
        return None
    root = logging.getLogger("acp_nvim")
    if any(getattr(handler, "_acp_nvim", False) for handler in root.handlers):
        return path
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler._acp_nvim = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if os.environ.get("ACP_NVIM_DEBUG") else logging.INFO)
    return path


class LoopThread:
    """An anyio event loop in a daemon thread, reachable through a blocking portal."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self.portal: anyio.from_thread.BlockingPortal | None = None
        self.task_group: anyio.abc.TaskGroup | None = None
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
            self._ready.set()
            await portal.sleep_until_stopped()
            tasks.cancel_scope.cancel()

    def spawn(self, fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Starts a task; only from the loop thread."""
        assert self.task_group is not None
        self.task_group.start_soon(fn)


class Host:
    def __init__(self, nvim: NvimLike) -> None:
        self._nvim = nvim
        self.bridge = Bridge(nvim)
        self._loop: LoopThread | None = None
        self._controller: Controller | None = None

    # ---- entry points (pynvim's thread) ---------------------------------------------------------

    def bootstrap(self, options: dict[str, Any] | None) -> dict[str, Any]:
        options = options or {}
        log_path = setup_logging(options.get("log"))
        log.info("host started: python %s, pid %d", sys.version.split()[0], os.getpid())
        return {
            "channel": getattr(self._nvim, "channel_id", None),
            "pid": os.getpid(),
            "python": sys.executable,
            "python_version": sys.version.split()[0],
            "versions": {name: _version(name) for name in ("pynvim", "msgspec", "anyio")},
            "log": log_path,
        }

    def start(self, spec: Any) -> None:
        self._submit(lambda c: c.start(spec))

    def stop(self) -> None:
        self._submit(lambda c: c.stop())

    def prompt(self, text: str, selections: Any = None) -> None:
        self._submit(lambda c: c.prompt(text, selections))

    def cancel(self) -> None:
        self._submit(lambda c: c.cancel())

    def permission_answer(self, request_id: int, option_id: str | None) -> None:
        async def answer(controller: Controller) -> None:
            controller.answer_permission(request_id, option_id)

        self._submit(answer)

    def push_status(self) -> None:
        async def push(controller: Controller) -> None:
            controller.push_status()

        self._submit(push)

    # ---- plumbing --------------------------------------------------------------------------------

    def _ensure_loop(self) -> tuple[LoopThread, Controller]:
        if self._loop is None or self._controller is None:
            loop = LoopThread()
            loop.start()
            assert loop.portal is not None
            self.bridge.attach_portal(loop.portal)
            self._controller = Controller(self.bridge, loop.spawn)
            self._loop = loop
            atexit.register(self._shutdown)
        return self._loop, self._controller

    def _submit(self, work: Callable[[Controller], Awaitable[None]]) -> None:
        loop, controller = self._ensure_loop()
        assert loop.portal is not None

        async def guarded() -> None:
            try:
                await work(controller)
            except Exception as err:
                # Never a traceback in the user's face: one line, details in the log.
                log.exception("handler failed")
                controller.notify(f"internal error: {err} (see the log)")

        loop.portal.start_task_soon(guarded)

    def _shutdown(self) -> None:
        loop, controller = self._loop, self._controller
        if loop is None or loop.portal is None or controller is None:
            return
        try:
            loop.portal.call(controller.shutdown)
        except Exception:
            log.exception("shutdown failed")


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None

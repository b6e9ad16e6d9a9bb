"""The remote-plugin host: the anyio loop thread and the entry points the rplugin declarations call.

pynvim runs its own loop on the main thread and calls these handlers there. Each handler only hands work to
the anyio thread (`start_task_soon` never waits), so Neovim is never blocked on an agent. The loop thread
starts as the host announces itself to Lua; at interpreter exit the agent is stopped politely before the
process goes away.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import anyio.abc
import anyio.from_thread

from acp_nvim.nvim import lua_api
from acp_nvim.nvim.bridge import Bridge, NvimLike
from acp_nvim.nvim.controller import Controller
from acp_nvim.nvim.process_groups import GroupReporter

log = logging.getLogger("acp_nvim.host")

LOG_ENV = "ACP_NVIM_LOG"
LOG_LEVEL_ENV = "ACP_NVIM_LOG_LEVEL"
THREAD_START_TIMEOUT = 10.0
LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def log_level(name: str | None) -> int:
    """`opts.log.level`, else $ACP_NVIM_LOG_LEVEL, else info."""
    name = (name or os.environ.get(LOG_LEVEL_ENV) or "info").lower()
    return LOG_LEVELS.get(name, logging.INFO)


def setup_logging(path: str | None, level: str | None = None) -> str | None:
    """Logs go to a file only: the host's stdout is the msgpack-rpc channel to Neovim."""
    path = path or os.environ.get(LOG_ENV)
    if not path:
        return None
    root = logging.getLogger("acp_nvim")
    if any(getattr(handler, "_acp_nvim", False) for handler in root.handlers):
        # A second bootstrap (setup() called again) may change the level, not the file.
        root.setLevel(log_level(level))
        return path
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        return None
    handler._acp_nvim = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(log_level(level))
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
        self.reporter = GroupReporter(self.bridge)
        self._loop: LoopThread | None = None
        self._controller: Controller | None = None

    # ---- entry points (pynvim's thread) ---------------------------------------------------------

    def bootstrap(self, options: dict[str, Any] | None, *, versions: bool = False) -> dict[str, Any]:
        """The host's info for Lua. `versions` reads installed metadata (~20 ms of imports): only
        :checkhealth asks for it, never a start."""
        options = options or {}
        log_path = setup_logging(options.get("log"), options.get("log_level"))
        log.info("host started: python %s, pid %d", sys.version.split()[0], os.getpid())
        info: dict[str, Any] = {
            "channel": getattr(self._nvim, "channel_id", None),
            "pid": os.getpid(),
            "python": sys.executable,
            "python_version": sys.version.split()[0],
            "log": log_path,
            "log_level": _level_name(logging.getLogger("acp_nvim").getEffectiveLevel()),
        }
        if versions:
            info["versions"] = {name: _version(name) for name in ("pynvim", "msgspec", "anyio")}
        return info

    def announce(self, options: dict[str, Any] | None) -> None:
        """The answer to Lua's `acp_bootstrap`, sent as a call back: Lua never waits for the host to start."""
        info = self.bootstrap(options)
        # The loop thread (and anyio's backend, ~20 ms of imports) comes up here rather than on the first
        # command, so that a host started ahead (prestart, warm-up) is warm when Lua hears it is ready. A cold
        # start loses nothing: its command waits behind this handler either way.
        self._ensure_loop()
        lua_api.host_bootstrapped(self._nvim, info)

    def start(self, spec: Any) -> None:
        self._submit(lambda c: c.app.commands.start(spec))

    def stop(self, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.commands.stop(session_id))

    def restart(self, spec: Any) -> None:
        self._submit(lambda c: c.app.commands.restart(spec))

    def prompt(self, text: str, selections: Any = None, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.turns.prompt(text, selections, session_id))

    def cancel(self, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.turns.cancel(session_id))

    def sessions(self, spec: Any, action: str, everywhere: bool, session_id: str | None) -> None:
        self._submit(lambda c: c.app.commands.sessions_command(spec, action, everywhere, session_id))

    def mode(self, session_id: str | None, mode_id: str | None) -> None:
        self._submit(lambda c: c.app.commands.mode(session_id, mode_id))

    def config(self, session_id: str | None, option_id: str | None, value: str | None) -> None:
        self._submit(lambda c: c.app.commands.config(session_id, option_id, value))

    def auth(self, session_id: str | None, method_id: str | None) -> None:
        self._submit(lambda c: c.app.commands.auth(session_id, method_id))

    def logout(self, session_id: str | None) -> None:
        self._submit(lambda c: c.app.commands.logout(session_id))

    def add_dir(self, session_id: str | None, directory: str) -> None:
        self._submit(lambda c: c.app.commands.add_dir(session_id, directory))

    def close(self, session_id: str) -> None:
        self._submit(lambda c: c.app.commands.close_session(session_id))

    def disk_changed(self, session_id: str, paths: list[str]) -> None:
        """Lua's watcher saw loaded files change behind their buffers during a turn."""

        async def follow(controller: Controller) -> None:
            controller.agent_edits.disk_changed(session_id, paths)

        self._submit(follow)

    def focus(self, session_id: str) -> None:
        self._submit(lambda c: c.app.commands.focus(session_id))

    def reply(self, token: Any, value: Any) -> None:
        """A late answer from Lua: a picker's choice (permissions and elicitation forms included), a login
        terminal's or a terminal job's exit."""

        async def resolve(controller: Controller) -> None:
            controller.ui.resolve(token, value)

        self._submit(resolve)

    # ---- the ACP Registry ------------------------------------------------------------------------------

    def registry_load(self, options: Any) -> None:
        self._submit(lambda c: c.catalog.load(options))

    def registry_pick(self, options: Any, configured: list[str], default: str | None) -> None:
        self._submit(lambda c: c.catalog.pick(options, list(configured), default or None))

    def registry_agents(self, options: Any, action: str, agent_id: str) -> None:
        self._submit(lambda c: c.registry_agents.agents_command(options, action, agent_id))

    def registry_health(self, options: Any, default_agent: str | None) -> dict[str, Any]:
        """For :checkhealth, synchronous: reads the cache only."""
        # Imported here: the registry's modules are loaded only when it is used (see Controller._registry).
        from acp_nvim.app import catalog

        try:
            return lua_api.to_lua(catalog.health(options, default_agent or None, time.time()))
        except Exception as err:
            log.exception("registry health failed")
            return {"error": str(err)}

    def editor_options(self, options: Any) -> None:
        """The fs/terminal/sandbox options; sent by Lua before every start, so capabilities match them."""

        async def configure(controller: Controller) -> None:
            controller.services.configure(options)

        self._submit(configure)

    # ---- plumbing --------------------------------------------------------------------------------

    def _ensure_loop(self) -> tuple[LoopThread, Controller]:
        if self._loop is None or self._controller is None:
            loop = LoopThread()
            loop.start()
            assert loop.portal is not None
            self.bridge.attach_portal(loop.portal)
            # Before any agent can be spawned: every group must reach Lua's list.
            self.reporter.install()
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
        if loop is not None and loop.portal is not None and controller is not None:
            try:
                loop.portal.call(controller.shutdown)
            except Exception:
                log.exception("shutdown failed")
        # Whatever the polite stop could not end (it is bounded, or the loop was already gone) ends here.
        self.reporter.kill_remaining()


def _level_name(level: int) -> str:
    return next((name for name, value in LOG_LEVELS.items() if value == level), "info")


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None

"""The remote-plugin host: the door every call from Lua goes through (`Host.call`, with the table of
`host_methods.py`), the anyio loop thread and the work the calls hand it.

pynvim runs its own loop on the main thread and calls the door there. Each call only hands work to the anyio
thread (`LoopThread.submit`, which never waits), so Neovim is never blocked on an agent. The loop
thread starts as the host announces itself to Lua; at interpreter exit the agent is stopped politely before
the process goes away.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from acp_nvim.app.config.editor_options import EditorOptions
from acp_nvim.app.config.presets import Launch
from acp_nvim.app.config.settings import Settings
from acp_nvim.app.port import ERROR, WARN
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.runs import AgentSpec
from acp_nvim.nvim import checkpoint_host, interpreter, lua_api, lua_values
from acp_nvim.nvim.bridge import Bridge, NvimLike
from acp_nvim.nvim.controller import Controller
from acp_nvim.nvim.host_methods import BAD_CALL, BootstrapOptions, HostMethod, SetupTable, StartRequest
from acp_nvim.nvim.loop_thread import LoopThread
from acp_nvim.nvim.lua_values import LuaTable, LuaValue
from acp_nvim.nvim.process_groups import GroupReporter

log = logging.getLogger("acp_nvim.host")

LOG_ENV = "ACP_NVIM_LOG"
LOG_LEVEL_ENV = "ACP_NVIM_LOG_LEVEL"
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


class Host:
    def __init__(self, nvim: NvimLike) -> None:
        self._nvim = nvim
        self.settings = Settings()
        self.bridge = Bridge(nvim)
        self.reporter = GroupReporter(self.bridge)
        self._loop: LoopThread | None = None
        self._controller: Controller | None = None
        self._rules_file: str | None = None
        # Neovim's stdpath("data"), ("cache"), ("state"), as the bootstrap said (registry, checkpoints).
        self._stdpath: dict[str, str] = {}
        # Neovim's v:servername, as the bootstrap said: where the Neovim MCP server connects back.
        self._servername = ""

    @property
    def nvim(self) -> NvimLike:
        return self._nvim

    # ---- entry points (pynvim's thread; the table of what Lua calls is nvim/host_methods.py) ---------

    def bootstrap(self, options: BootstrapOptions | None, *, versions: bool = False) -> LuaTable:
        """The host's info for Lua. `versions` reads installed metadata (~20 ms of imports): only
        :checkhealth asks for it, never a start."""
        options = options or BootstrapOptions()
        log_path = setup_logging(options.log or None, options.log_level or None)
        if options.data:
            # Neovim's stdpath("data"): where the project permission rules are kept.
            self._rules_file = os.path.join(options.data, "acp_nvim", "permissions.json")
            if self._controller is not None:
                self._controller.app.permissions.file.path = self._rules_file
        folders = {"data": options.data, "cache": options.cache, "state": options.state}
        self._stdpath.update({kind: folder for kind, folder in folders.items() if folder})
        if options.servername:
            self._servername = options.servername
        log.info("host started: python %s, pid %d", sys.version.split()[0], os.getpid())
        info: LuaTable = {
            "channel": getattr(self._nvim, "channel_id", None),
            "pid": os.getpid(),
            "python": sys.executable,
            "python_version": sys.version.split()[0],
            "log": log_path,
            "log_level": _level_name(logging.getLogger("acp_nvim").getEffectiveLevel()),
        }
        if versions:
            info["versions"] = {name: _version(name) for name in ("pynvim", "msgspec", "anyio")}
        info["configured"] = self._apply(options.setup or SetupTable())
        return info

    def _apply(self, table: SetupTable) -> LuaTable:
        """Validates a `setup()` table: what Lua's `config.configured` takes."""
        try:
            invalid = self.settings.apply(table.options)
        except Exception:
            # Never a start refused over the options: the last good ones (or the defaults) stay in force.
            log.exception("the setup() options could not be checked")
            invalid = "the setup() options could not be checked (see the log); the previous ones stay"
        if invalid:
            log.warning("%s", invalid)
        return {
            "options": lua_values.to_lua(self.settings.for_lua()),
            "invalid": invalid,
            "generation": table.generation,
        }

    def setup(self, table: SetupTable) -> None:
        """setup() called while the host runs: the next start already follows the new table."""
        lua_api.config_configured(self._nvim, self._apply(table))

    def config_report(self, path: str | None = None) -> LuaTable:
        """For :checkhealth: the bad fields of the table in force and every agent as a start would run it."""
        return checkpoint_host.with_facts(self._stdpath, self.settings.report(self._launch(), path))

    def _launch(self, request: StartRequest | None = None, *, session: bool = True) -> Launch:
        return Launch(
            cwd=(request.cwd if request else "") or os.getcwd(),
            interpreter=sys.executable,
            pythonpath=os.environ.get("PYTHONPATH", ""),
            session=session,
            neovim=self._servername,
        )

    def registry(self) -> RegistryOptions:
        """`opts.registry` in force, in the plugin's folders of Neovim's stdpath("cache") and
        stdpath("data")."""
        return self.settings.registry(
            os.path.join(self._stdpath.get("cache") or _stdpath("XDG_CACHE_HOME", ".cache"), "acp_nvim"),
            os.path.join(self._stdpath.get("data") or _stdpath("XDG_DATA_HOME", ".local/share"), "acp_nvim"),
        )

    def announce(self, options: BootstrapOptions | None) -> None:
        """The answer to Lua's `acp_bootstrap`, sent as a call back: Lua never waits for the host to start."""
        info = self.bootstrap(options)
        # The loop thread (and anyio's backend, ~20 ms of imports) comes up here rather than on the first
        # command, so that a host started ahead (prestart, warm-up) is warm when Lua hears it is ready. A cold
        # start loses nothing: its command waits behind this handler either way.
        self._ensure_loop()
        lua_api.host_bootstrapped(self._nvim, info)

    def agent_command(
        self,
        request: StartRequest,
        command: Callable[[Controller, AgentSpec], Awaitable[None]],
        *,
        no_agent: Callable[[Controller], Awaitable[None]],
        refused: Callable[[Controller, str], None] | None = None,
        session: bool = True,
    ) -> None:
        """A command on the agent `request` names (:AcpStart, :AcpRestart, :AcpSessions), resolved now with
        the settings of this moment (a later setup() does not change it). `no_agent`: no name was given and
        there is no default agent; `refused`: the agent cannot start (unknown, ...), by default an error."""
        cwd = request.cwd or os.getcwd()
        options = EditorOptions.for_start(self.settings.config, cwd)
        unnamed = request.name is None and self.settings.config.default_agent is None
        launch = self._launch(request, session=session)
        spec = None if unnamed else self.settings.agent_spec(request.name, launch, self.registry())

        async def run(controller: Controller) -> None:
            if spec is None:
                await no_agent(controller)
            elif isinstance(spec, str):
                (refused or _notify_refusal)(controller, spec)
            else:
                # Before the launch: the capabilities the agent is offered follow these options.
                controller.services.configure(options)
                await command(controller, spec)

        self.submit(run)

    def leaving(self) -> None:
        if self._controller is not None:
            self._controller.leaving = True

    # ---- the ACP Registry (its code is loaded when first used: see Controller._registry) --------------

    def registry_load(self) -> None:
        """:AcpStart's completion: the registry's ids, sent back through `ui.agents.catalog`."""
        registry = self.registry()
        self.submit(lambda c: c.catalog.load(registry))

    def registry_agents(self, action: str, agent_id: str) -> None:
        registry = self.registry()
        self.submit(lambda c: c.registry_agents.agents_command(registry, action, agent_id))

    def registry_health(self) -> LuaTable:
        """For :checkhealth, synchronous: reads the cache only (pynvim's thread, none of the loop's state)."""
        from acp_nvim.app.registry import catalog

        try:
            facts = catalog.health(self.registry(), self.settings.config.default_agent, time.time())
            return lua_values.to_lua(facts)
        except Exception as err:
            log.exception("registry health failed")
            return {"error": str(err)}

    # ---- the door: every call from Lua (rplugin/python3/acp_nvim_host.py) --------------------------------

    def call(self, method: HostMethod, args: Sequence[object]) -> LuaValue:
        """Decodes the arguments into the method's Struct, then calls it. A malformed call is told in one line
        (a warning, or the answer Lua waits for) and logged; so is a handler that fails on pynvim's thread."""
        try:
            bound = method.bind(args)
        except msgspec.ValidationError as err:
            log.warning("malformed call from Lua: %s: %s (arguments: %.300r)", method.name, err, tuple(args))
            return self._refuse(method, f"malformed call {method.name}: {err}", WARN)
        try:
            return bound(self)
        except Exception as err:
            log.exception("%s failed", method.name)
            return self._refuse(method, f"internal error in {method.name}: {err} (see the log)", ERROR)

    def _refuse(self, method: HostMethod, message: str, level: int) -> LuaValue:
        if method.sync:
            # api.lua returns it as a failed call: false and this message.
            return {BAD_CALL: message}

        async def warn(controller: Controller) -> None:
            controller.notify(message, level)

        self.submit(warn)
        return None

    # ---- plumbing --------------------------------------------------------------------------------

    def _ensure_loop(self) -> tuple[LoopThread, Controller]:
        if self._loop is None or self._controller is None:
            loop = LoopThread()
            interpreter.share_the_gil()
            loop.start()
            self.bridge.attach_loop(loop.call_soon)
            # Before any agent can be spawned: every group must reach Lua's list.
            self.reporter.install()
            self._controller = Controller(self.bridge, loop.spawn)
            self._controller.app.permissions.file.path = self._rules_file
            checkpoint_host.attach(self._controller, self._stdpath, self.settings, loop.spawn)
            self._loop = loop
            atexit.register(self._shutdown)
            interpreter.settle()
        return self._loop, self._controller

    def submit(self, work: Callable[[Controller], Awaitable[None]]) -> None:
        loop, controller = self._ensure_loop()

        async def guarded() -> None:
            try:
                await work(controller)
            except Exception as err:
                # Never a traceback in the user's face: one line, details in the log.
                log.exception("handler failed")
                controller.notify(f"internal error: {err} (see the log)")

        loop.submit(guarded)

    def _shutdown(self) -> None:
        loop, controller = self._loop, self._controller
        if loop is not None and loop.portal is not None and controller is not None:
            try:
                loop.portal.call(controller.shutdown)
            except Exception:
                log.exception("shutdown failed")
        # Whatever the polite stop could not end (it is bounded, or the loop was already gone) ends here.
        self.reporter.kill_remaining()


def _notify_refusal(controller: Controller, why: str) -> None:
    controller.notify(why, ERROR)


def _stdpath(variable: str, default: str) -> str:
    """Neovim's stdpath() folder where no bootstrap has said it (XDG's, then the default under ~)."""
    base = os.environ.get(variable) or os.path.join(os.path.expanduser("~"), default)
    return os.path.join(base, os.environ.get("NVIM_APPNAME") or "nvim")


def _level_name(level: int) -> str:
    return next((name for name, value in LOG_LEVELS.items() if value == level), "info")


def _version(package: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None

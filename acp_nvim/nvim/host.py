"""The remote-plugin host: the anyio loop thread and the entry points the rplugin declarations call.

pynvim runs its own loop on the main thread and calls these handlers there. Each handler only hands work to
the anyio thread (`LoopThread.submit`, which never waits), so Neovim is never blocked on an agent. The loop
thread starts as the host announces itself to Lua; at interpreter exit the agent is stopped politely before
the process goes away.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable

import msgspec

from acp_nvim.app import agent_log
from acp_nvim.app.editor_options import EditorOptions
from acp_nvim.app.port import WARN
from acp_nvim.app.presets import NO_AGENT_NAMED, Launch
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.runs import AgentSpec
from acp_nvim.app.settings import Settings
from acp_nvim.client import elicitation_forms
from acp_nvim.nvim import checkpoint_host, interpreter, lua_api, lua_values
from acp_nvim.nvim.bridge import Bridge, NvimLike
from acp_nvim.nvim.controller import Controller
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


class StartRequest(msgspec.Struct, kw_only=True, frozen=True):
    """What Lua asks an agent's start with: its name (None: the default one) and Neovim's cwd."""

    name: str | None = None
    cwd: str = ""


class SetupTable(msgspec.Struct, kw_only=True, frozen=True):
    """A `setup()` table as `lua/acp_nvim/config.lua` sends it: raw, and which call it came from."""

    options: object = None
    generation: int = 0


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

    # ---- entry points (pynvim's thread) ---------------------------------------------------------
    elicitation_check = staticmethod(elicitation_forms.check_answer)  # no state: all it needs is sent

    def bootstrap(self, options: LuaTable | None, *, versions: bool = False) -> LuaTable:
        """The host's info for Lua. `versions` reads installed metadata (~20 ms of imports): only
        :checkhealth asks for it, never a start."""
        options = options or {}
        strings = {key: value for key, value in options.items() if isinstance(value, str) and value}
        log_path = setup_logging(strings.get("log"), strings.get("log_level"))
        data = strings.get("data")
        if data:
            # Neovim's stdpath("data"): where the project permission rules are kept.
            self._rules_file = os.path.join(data, "acp_nvim", "permissions.json")
            if self._controller is not None:
                self._controller.app.permissions.file.path = self._rules_file
        self._stdpath.update({kind: strings[kind] for kind in ("data", "cache", "state") if kind in strings})
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
        info["configured"] = self._apply(options.get("setup"))
        return info

    def _apply(self, raw: LuaValue) -> LuaTable:
        """Validates a `setup()` table: what Lua's `config.configured` takes."""
        try:
            table = msgspec.convert(raw or {}, SetupTable)
        except msgspec.ValidationError:
            table = SetupTable(options=raw)
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

    def setup(self, raw: LuaValue) -> None:
        """setup() called while the host runs: the next start already follows the new table."""
        lua_api.config_configured(self._nvim, self._apply(raw))

    def config_report(self, path: str | None = None) -> LuaTable:
        """For :checkhealth: the bad fields of the table in force and every agent as a start would run it."""
        return checkpoint_host.with_facts(self._stdpath, self.settings.report(self._launch(), path))

    def _launch(self, request: StartRequest | None = None, *, session: bool = True) -> Launch:
        return Launch(
            cwd=(request.cwd if request else "") or os.getcwd(),
            interpreter=sys.executable,
            pythonpath=os.environ.get("PYTHONPATH", ""),
            session=session,
        )

    def _registry(self) -> RegistryOptions:
        """`opts.registry` in force, in the plugin's folders of Neovim's stdpath("cache") and
        stdpath("data")."""
        return self.settings.registry(
            os.path.join(self._stdpath.get("cache") or _stdpath("XDG_CACHE_HOME", ".cache"), "acp_nvim"),
            os.path.join(self._stdpath.get("data") or _stdpath("XDG_DATA_HOME", ".local/share"), "acp_nvim"),
        )

    def _resolve(
        self, raw: LuaValue, *, session: bool = True
    ) -> tuple[str | None, AgentSpec | str | None, EditorOptions]:
        """The agent a start asks for, with the settings of this moment (a later setup() does not change it),
        and the editor options it runs with. None for the agent: no name was given and there is no default
        agent (:AcpStart then asks which)."""
        try:
            request = msgspec.convert(raw, StartRequest)
        except msgspec.ValidationError as err:
            return None, f"invalid start request: {err}", EditorOptions()
        cwd = request.cwd or os.getcwd()
        options = EditorOptions.for_start(self.settings.config, cwd)
        if request.name is None and self.settings.config.default_agent is None:
            return None, None, options
        launch = self._launch(request, session=session)
        return request.name, self.settings.agent_spec(request.name, launch, self._registry()), options

    def announce(self, options: LuaTable | None) -> None:
        """The answer to Lua's `acp_bootstrap`, sent as a call back: Lua never waits for the host to start."""
        info = self.bootstrap(options)
        # The loop thread (and anyio's backend, ~20 ms of imports) comes up here rather than on the first
        # command, so that a host started ahead (prestart, warm-up) is warm when Lua hears it is ready. A cold
        # start loses nothing: its command waits behind this handler either way.
        self._ensure_loop()
        lua_api.host_bootstrapped(self._nvim, info)

    def start(self, request: LuaValue) -> None:
        name, spec, options = self._resolve(request)
        default, registry, configured = self.settings.config.default_agent, self._registry(), []
        if spec is None:
            configured = self.settings.agent_names()

        async def start(controller: Controller) -> None:
            if spec is None:
                # No name, no default agent: nothing starts but the agent chosen among the configured ones
                # and the ACP Registry's (started as :AcpStart {name}); the status Lua assumed is undone.
                controller.app.status.push()
                await controller.catalog.pick(registry, configured, None)
                return
            if isinstance(spec, str):
                controller.app.status.refuse(name or default or "", spec)
                return
            # Before the launch: the capabilities the agent is offered follow these options.
            controller.services.configure(options)
            await controller.app.commands.start(spec)

        self._submit(start)

    def stop(self, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.commands.stop(session_id))

    def restart(self, request: LuaValue) -> None:
        _, spec, options = self._resolve(request)

        async def restart(controller: Controller) -> None:
            if spec is None:
                controller.app.status.push()
                controller.notify("no agent to restart: start one with :AcpStart", WARN)
                return
            if isinstance(spec, str):
                controller.notify(spec)
                return
            controller.services.configure(options)
            await controller.app.commands.restart(spec)

        self._submit(restart)

    def prompt(self, text: str, selections: LuaValue = None, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.turns.prompt(text, selections, session_id))

    def cancel(self, session_id: str | None = None) -> None:
        self._submit(lambda c: c.app.turns.cancel(session_id))

    def sessions(self, request: LuaValue, action: str, everywhere: bool, session_id: str | None) -> None:
        _, spec, options = self._resolve(request, session=False)

        async def sessions(controller: Controller) -> None:
            if spec is None:
                controller.notify(NO_AGENT_NAMED, WARN)
                return
            if isinstance(spec, str):
                controller.notify(spec)
                return
            controller.services.configure(options)
            await controller.app.commands.sessions_command(spec, action, everywhere, session_id)

        self._submit(sessions)

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

    def permissions(self, session_id: str | None, args: list[str]) -> None:
        self._submit(lambda c: c.app.permissions.command(session_id, [str(arg) for arg in args or []]))

    def checkpoint(self, session_id: str | None, args: list[str]) -> None:
        self._submit(lambda c: c.app.checkpoints.command(session_id, [str(arg) for arg in args or []]))

    def leaving(self) -> None:
        """Neovim is quitting and is about to end the agents itself (VimLeavePre): their end is no fault.
        Set here, on pynvim's thread, before the answer goes: the agents die only after Lua has it."""
        if self._controller is not None:
            self._controller.leaving = True
        lua_api.leaving_noted(self._nvim)

    def disk_changed(self, session_id: str, paths: list[str]) -> None:
        """Lua's watcher saw loaded files change behind their buffers during a turn."""

        async def follow(controller: Controller) -> None:
            controller.agent_edits.disk_changed(session_id, paths)

        self._submit(follow)

    def focus(self, session_id: str) -> None:
        self._submit(lambda c: c.app.commands.focus(session_id))

    def reply(self, token: LuaValue, value: LuaValue) -> None:
        """A late answer from Lua: a picker's choice (permissions and elicitation forms included), a login
        terminal's or a terminal job's exit."""

        async def resolve(controller: Controller) -> None:
            controller.ui.resolve(token, value)

        self._submit(resolve)

    # ---- the ACP Registry (its code is loaded when first used: see Controller._registry) --------------

    def registry_load(self) -> None:
        """:AcpStart's completion: the registry's ids, sent back through `ui.agents.catalog`."""
        registry = self._registry()
        self._submit(lambda c: c.catalog.load(registry))

    def registry_agents(self, action: str, agent_id: str) -> None:
        registry = self._registry()
        self._submit(lambda c: c.registry_agents.agents_command(registry, action, agent_id))

    def registry_health(self) -> LuaTable:
        """For :checkhealth, synchronous: reads the cache only (pynvim's thread, none of the loop's state)."""
        from acp_nvim.app.registry import catalog

        try:
            facts = catalog.health(self._registry(), self.settings.config.default_agent, time.time())
            return lua_values.to_lua(facts)
        except Exception as err:
            log.exception("registry health failed")
            return {"error": str(err)}

    # ---- :AcpLog (pynvim's thread: the logs are read under their own lock) ----------------------------

    def log_view(self, agent_name: str | None) -> LuaTable:
        return lua_values.json_to_lua(agent_log.view(agent_name or None))

    def log_save(self, agent_name: str | None, path: str) -> LuaTable:
        return lua_values.json_to_lua(agent_log.save(agent_name or None, path))

    def log_names(self) -> list[str]:
        return agent_log.names()

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

    def _submit(self, work: Callable[[Controller], Awaitable[None]]) -> None:
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

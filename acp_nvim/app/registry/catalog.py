"""The ACP Registry's agents as the user sees them: the list, kept fresh in the background, and what a start,
a picker and :checkhealth are told about it.

The registry is read from its cache first (stdpath("cache")/acp_nvim/registry.json); a fetch runs in a worker
thread when the cache is older than `max_age` (or missing), never holding Neovim or the host's loop, and a
failed one says why once and keeps the cache. Nothing is fetched before the user asks for registry agents
(a completion, a picker, a start, :AcpAgents).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import anyio
import anyio.to_thread
import msgspec

from acp_nvim.app.port import INFO, WARN, Choice, Spawn
from acp_nvim.app.registry import cache as registry_cache
from acp_nvim.app.registry import channels, downloads
from acp_nvim.app.registry import entries as acp_registry
from acp_nvim.app.registry import install as agent_install
from acp_nvim.app.registry.entries import Registry, RegistryError
from acp_nvim.app.registry.options import RegistryOptions

log = logging.getLogger("acp_nvim.catalog")

MAX_REGISTRY_BYTES = 16 * 1024 * 1024


class CatalogItem(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    name: str
    version: str
    description: str
    kind: str
    installed: bool
    runnable: bool
    # The release channel it runs on: "preview" where the user opted in and the preview is newer.
    channel: str = "stable"


class RegistryHealth(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool
    url: str
    cache: str
    cache_age: float | None = None
    agents: int = 0
    platform: str = ""
    # The default agent when it is a registry agent: its version, and whether that version is installed.
    default_version: str | None = None
    default_installed: bool | None = None
    default_kind: str | None = None


class CatalogPort(Protocol):
    def notify(self, message: str, level: int) -> None: ...

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None: ...

    def show_catalog(self, ids: list[str]) -> None:
        """The registry agents' ids, for :AcpStart's completion."""

    def start_agent(self, name: str) -> None:
        """Starts the agent `name` as :AcpStart {name} does (the host resolves it, app/config/presets.py)."""


class Catalog:
    def __init__(self, port: CatalogPort, spawn: Spawn, clock: Callable[[], float] = time.time) -> None:
        self._port = port
        self._spawn = spawn
        self._clock = clock
        self._registry: Registry | None = None
        self._loaded_from: str | None = None
        self._fetched_at: float | None = None
        self._refreshing: set[str] = set()
        self._said: set[str] = set()
        self._lock = anyio.Lock()

    # ---- the list -----------------------------------------------------------------------------------

    async def registry(self, options: RegistryOptions, *, background: bool = False) -> Registry | None:
        """The registry: the cached one at once, fetched again in the background when it is stale. Without
        a cache the fetch is awaited, unless `background` (a completion: it must answer now)."""
        async with self._lock:
            if self._loaded_from != options.url:
                cached = await anyio.to_thread.run_sync(registry_cache.read, options.cache_dir)
                usable = cached if cached is not None and cached.url == options.url else None
                self._registry = usable.registry if usable is not None else None
                self._fetched_at = usable.fetched_at if usable is not None else None
                self._loaded_from = options.url
        fresh = self._fetched_at is not None and self._clock() - self._fetched_at < options.max_age
        if self._registry is None and not background:
            # Nothing to show meanwhile: say what is being waited for.
            self._port.notify(f"fetching the ACP Registry from {options.url}", INFO)
            await self.refresh(options)
        elif not fresh and options.url not in self._refreshing:
            # The caller goes on with what there is; the fresh list reaches Lua when it comes.
            self._refreshing.add(options.url)

            async def refresh() -> None:
                try:
                    await self.refresh(options)
                finally:
                    self._refreshing.discard(options.url)

            self._spawn(refresh)
        return self._registry

    def known(self, options: RegistryOptions) -> bool:
        """Whether a list of `options.url` is at hand (fetched or cached)."""
        return self._registry is not None and self._loaded_from == options.url

    async def refresh(self, options: RegistryOptions) -> bool:
        """Fetches the registry; on failure says why once (per URL and reason) and keeps what it had."""
        try:
            url = downloads.checked_url(options.url)
            data = await anyio.to_thread.run_sync(downloads.fetch, url, MAX_REGISTRY_BYTES)
            registry = acp_registry.decode(data)
        except (downloads.DownloadError, RegistryError) as err:
            kept = " (using the list fetched before)" if self._registry is not None else ""
            self._say_once(f"ACP Registry: {err}{kept}", WARN)
            return False
        now = self._clock()
        self._registry, self._loaded_from, self._fetched_at = registry, options.url, now
        self._said.clear()
        cached = registry_cache.Cached(url=options.url, fetched_at=now, registry=registry)
        try:
            await anyio.to_thread.run_sync(registry_cache.write, options.cache_dir, cached)
        except OSError as err:
            self._say_once(f"ACP Registry: cannot write the cache: {err}", WARN)
        if registry.skipped:
            count = len(registry.skipped)
            self._say_once(
                f"ACP Registry: {count} {'entry' if count == 1 else 'entries'} left out, not in the format:"
                f" {'; '.join(registry.skipped)}",
                WARN,
            )
        self._port.show_catalog([agent.id for agent in registry.agents])
        return True

    def _say_once(self, message: str, level: int) -> None:
        log.warning("%s", message)
        if message not in self._said:
            self._said.add(message)
            self._port.notify(message, level)

    async def items(self, options: RegistryOptions) -> list[CatalogItem]:
        registry = await self.registry(options)
        if registry is None:
            return []
        here = acp_registry.this_platform()
        installs = await anyio.to_thread.run_sync(agent_install.installed, options.agents_dir)
        have = {(record.id, record.version) for record in installs}
        offered = [(agent, channels.offered(agent, options.channel(agent.id))) for agent in registry.agents]
        return [
            CatalogItem(
                id=agent.id,
                name=agent.name,
                version=agent.version,
                description=agent.description,
                kind=acp_registry.kind(agent, here),
                installed=(agent.id, agent.version) in have,
                runnable=acp_registry.runnable(agent, here),
                channel=channels.PREVIEW if agent is not stable else channels.STABLE,
            )
            for stable, agent in offered
        ]

    async def load(self, options: RegistryOptions) -> None:
        """Completion asked: the ids from the cache now, fresh ones when a fetch brings them."""
        if not options.enabled:
            self._port.show_catalog([])
            return
        registry = await self.registry(options, background=True)
        self._port.show_catalog([agent.id for agent in registry.agents] if registry else [])

    # ---- :AcpStart without a name -----------------------------------------------------------------------

    async def pick(self, options: RegistryOptions, configured: list[str], default: str | None) -> None:
        """Offers the configured agents and the registry's; the one chosen is started."""
        items = await self.items(options) if options.enabled else []
        here = acp_registry.this_platform()
        shown = set(configured)
        choices = [
            Choice(name, f"{name}  (configured{', default' if name == default else ''})")
            for name in configured
        ]
        for item in items:
            if item.id in shown:
                continue
            marks = [item.kind]
            if item.channel == channels.PREVIEW:
                marks.append("preview")
            if item.installed:
                marks.append("installed")
            if not item.runnable:
                marks.append(f"not available for {here}")
            description = acp_registry.one_line(item.description)
            label = f"{item.id}  {item.name} {item.version} — {description}  [{', '.join(marks)}]"
            choices.append(Choice(item.id, label))
        chosen = await self._port.select("Start an agent", choices, "acp_nvim_agent")
        if chosen is not None:
            self._port.start_agent(chosen)


def health(options: RegistryOptions, default_agent: str | None, now: float) -> RegistryHealth:
    """What the cache holds, read now (no network, no state of the host's loop): for the synchronous
    :checkhealth, on pynvim's thread."""
    cached = registry_cache.read(options.cache_dir)
    if cached is not None and cached.url != options.url:
        # Fetched from another URL: not this registry's state.
        cached = None
    facts = RegistryHealth(
        enabled=options.enabled,
        url=options.url,
        cache=str(registry_cache.path(options.cache_dir)),
        platform=acp_registry.this_platform(),
    )
    if cached is None:
        return facts
    agent = cached.registry.find(default_agent) if default_agent else None
    agent = channels.offered(agent, options.channel(agent.id)) if agent is not None else None
    found = agent_install.find(options.agents_dir, agent.id, agent.version) if agent else None
    binary = agent is not None and isinstance(acp_registry.plan(agent), acp_registry.BinaryPlan)
    return msgspec.structs.replace(
        facts,
        cache_age=cached.age(now),
        agents=len(cached.registry.agents),
        default_version=agent.version if agent else None,
        default_installed=(found is not None) if binary else None,
        default_kind=acp_registry.kind(agent) if agent else None,
    )

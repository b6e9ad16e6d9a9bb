"""Registry agents started, installed, updated and removed: `:AcpStart {id}` and `:AcpAgents`.

A start turns the registry's entry into the same command the configured agents run: `npx`/`uvx` with the
package pinned to the registry's version, or the installed binary (downloaded first when this version is not
installed yet, with its progress shown). An installed version starts without the network. The entry is the
one of the agent's channel (`channels.py`): its preview where the user opted in (`opts.registry.preview`),
which the format restricts to npx and uvx, so an installed binary of the stable channel stays as it is.

An install a running agent runs is never deleted under it: `remove` asks to stop the agent first, and an
update keeps the version it replaces while a run uses it (removed at the agent's next start).
"""

from __future__ import annotations

import logging
import math
import shutil
from pathlib import Path
from typing import Protocol

import anyio
import anyio.from_thread
import anyio.to_thread
import msgspec

from acp_nvim.app.port import ERROR, INFO, WARN, Choice
from acp_nvim.app.registry import channels
from acp_nvim.app.registry import entries as acp_registry
from acp_nvim.app.registry import install as agent_install
from acp_nvim.app.registry.catalog import Catalog, CatalogPort
from acp_nvim.app.registry.entries import Registry, RegistryAgent
from acp_nvim.app.registry.install import InstalledAgent, InstallError
from acp_nvim.app.registry.options import RegistryOptions
from acp_nvim.app.runs import AgentRun, AgentSpec
from acp_nvim.client.agent.process import StartError

log = logging.getLogger("acp_nvim.registry_agents")

# Progress is told at these fractions of the download (and at its end).
PROGRESS_STEPS = 4


class NotInRegistry(StartError):
    """The registry has no such agent, or could not be read."""


class RunningAgents(Protocol):
    """The agents' runs (the controller): which run now, and stopping one."""

    def running(self) -> list[AgentRun]: ...

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None: ...


class RegistryAgents:
    def __init__(self, catalog: Catalog, port: CatalogPort, runs: RunningAgents) -> None:
        self._catalog = catalog
        self._port = port
        self._runs = runs
        # One install at a time: two starts of one agent must not extract it twice.
        self._installing = anyio.Lock()

    async def _entry(self, options: RegistryOptions, agent_id: str) -> RegistryAgent:
        if not options.enabled:
            raise NotInRegistry(
                f'unknown agent "{agent_id}" (the ACP Registry is disabled: opts.registry.enabled)'
            )
        registry = await self._catalog.registry(options)
        if registry is None:
            raise NotInRegistry(
                f'unknown agent "{agent_id}": the ACP Registry could not be read ({options.url})'
            )
        agent = registry.find(agent_id)
        if agent is None:
            raise NotInRegistry(f'unknown agent "{agent_id}": not configured and not in the ACP Registry')
        return channels.offered(agent, options.channel(agent_id))

    async def resolve(self, spec: AgentSpec) -> AgentSpec:
        """`spec` with the command its registry agent runs. A preset of the same name (`spec.cmd` set) runs
        its own command when that is installed, and the registry's agent only when it is not (and the
        registry has it): otherwise its own "not found" follows, with its install hint."""
        assert spec.registry is not None
        if spec.cmd and _on_path(spec):
            return msgspec.structs.replace(spec, registry=None)
        try:
            cmd, args, env = await self.command(spec.registry, spec.name)
        except NotInRegistry:
            if spec.cmd:
                return msgspec.structs.replace(spec, registry=None)
            raise
        if spec.cmd:
            log.info("%s is not installed: starting the ACP Registry's %s", spec.cmd, spec.name)
        # From here the run is like any other, its terminal login included; the preset's choices are gone.
        return msgspec.structs.replace(
            spec, cmd=cmd, args=args, env={**env, **spec.env}, fallbacks=[], older_args=None, install_hint=""
        )

    async def command(self, options: RegistryOptions, agent_id: str) -> tuple[str, list[str], dict[str, str]]:
        """The executable, arguments and environment that start registry agent `agent_id`, installed first
        when it is a binary not installed yet. `StartError` with the message for the user otherwise."""
        try:
            agent = await self._entry(options, agent_id)
        except NotInRegistry:
            # No list to read (no cache, no network): what is installed still runs.
            newest = await self._newest_install(options, agent_id)
            if newest is None:
                raise
            log.info("the registry cannot be read: starting the installed %s %s", agent_id, newest.version)
            return str(agent_install.command(newest)), newest.args, newest.env
        here = acp_registry.this_platform()
        plan = acp_registry.plan(agent, here)
        if plan is None:
            raise StartError(f"{agent.name} {agent.version} is not available for {here}")
        if isinstance(plan, acp_registry.PackagePlan):
            package = acp_registry.local_package(agent)
            if package is not None and not _local(options.url):
                # As for archives: a list from the network must not make the plugin run this machine's files.
                raise StartError(
                    f"{agent.name} {agent.version}: refusing the package {acp_registry.shown(package, 512)}:"
                    " a registry fetched over the network may not point at local files"
                )
            missing = acp_registry.missing_runner(plan)
            if missing is not None:
                raise StartError(missing)
            return plan.runner, plan.argv, plan.env
        if _local(plan.target.archive) and not _local(options.url):
            # A list from the network must not make the plugin read this machine's files.
            raise StartError(
                f"{agent.name} {agent.version}: refusing the archive {plan.target.archive}: a registry"
                " fetched over the network may not point at local files"
            )
        record = await self.install(options, agent, plan.target)
        return str(agent_install.command(record)), record.args, record.env

    async def _newest_install(self, options: RegistryOptions, agent_id: str) -> InstalledAgent | None:
        if options.enabled and self._catalog.known(options):
            return None
        installs = await anyio.to_thread.run_sync(agent_install.installed, options.agents_dir)
        mine = [record for record in installs if record.id == agent_id]
        return max(mine, key=lambda record: record.installed_at) if mine else None

    async def install(
        self, options: RegistryOptions, agent: RegistryAgent, target: acp_registry.BinaryTarget
    ) -> InstalledAgent:
        async with self._installing:
            found = await anyio.to_thread.run_sync(
                agent_install.find, options.agents_dir, agent.id, agent.version
            )
            if found is None:
                return await self._install(options, agent, target)
            # The versions an update kept while they ran go once no run uses them.
            older = await self._remove_older(options, agent.id, agent.version)
            if older:
                replaced = f"removed {agent.id} {', '.join(older)} (replaced by {agent.version})"
                self._port.notify(replaced, INFO)
            return found

    async def _install(
        self, options: RegistryOptions, agent: RegistryAgent, target: acp_registry.BinaryTarget
    ) -> InstalledAgent:
        agents_dir = options.agents_dir
        title = f"{agent.name} {agent.version}"
        self._port.notify(f"installing {title} from {target.archive}", INFO)
        told = [0]

        def progress(received: int, total: int | None) -> None:
            # In the worker thread: the message goes through the loop.
            if not total:
                return
            step = math.floor(received * PROGRESS_STEPS / total)
            if step > told[0] and step < PROGRESS_STEPS:
                told[0] = step
                percent = step * 100 // PROGRESS_STEPS
                anyio.from_thread.run_sync(
                    self._port.notify, f"downloading {title}: {percent}% of {_size(total)}", INFO
                )

        try:
            record = await anyio.to_thread.run_sync(
                agent_install.install, agents_dir, agent.id, agent.name, agent.version, target, progress
            )
        except InstallError as err:
            raise StartError(f"{title} was not installed: {err}") from None
        except OSError as err:
            raise StartError(f"{title} was not installed: {err}") from None
        self._port.notify(f"installed {title} in {record.folder}", INFO)
        # The registry's version replaces the ones before it, but one a run uses (its files, loaded as it
        # goes, must stay): that one goes at the agent's next start.
        older = await self._remove_older(options, agent.id, agent.version)
        if older:
            self._port.notify(f"updated {agent.id} from {', '.join(older)} to {agent.version}", INFO)
        installs = await anyio.to_thread.run_sync(agent_install.installed, agents_dir)
        kept = sorted({record.version for record, _ in self._in_use(installs, agent.id, but=agent.version)})
        if kept:
            self._port.notify(
                f"{agent.id} {', '.join(kept)} is kept while it runs: it is removed when {agent.id} starts"
                f" again (:AcpRestart {agent.id})",
                INFO,
            )
        return record

    async def _remove_older(self, options: RegistryOptions, agent_id: str, version: str) -> list[str]:
        """Removes the agent's installs of other versions than `version` that no run uses."""
        installs = await anyio.to_thread.run_sync(agent_install.installed, options.agents_dir)
        busy = {record.version for record, _ in self._in_use(installs, agent_id)}
        older = [r.version for r in installs if r.id == agent_id and r.version not in (version, *busy)]
        for other in older:
            await anyio.to_thread.run_sync(agent_install.remove, options.agents_dir, agent_id, other)
        return older

    def _in_use(
        self, installs: list[InstalledAgent], agent_id: str, but: str | None = None
    ) -> list[tuple[InstalledAgent, AgentRun]]:
        """The installs of `agent_id` (but version `but`) a running agent runs, with that run: its command
        is inside the install's folder (a preset that runs the registry's agent has a name of its own)."""
        return [
            (record, run)
            for record in installs
            if record.id == agent_id and record.version != but
            for run in self._runs.running()
            if run.spec.cmd and Path(run.spec.cmd).is_relative_to(record.folder)
        ]

    # ---- :AcpAgents -----------------------------------------------------------------------------------

    async def agents_command(self, options: RegistryOptions, action: str, agent_id: str) -> None:
        """:AcpAgents [update|remove] [id]: without an id, a picker of what is installed, then one of what
        to do with the agent chosen."""
        if agent_id and not acp_registry.valid_id(agent_id):
            # Never a path: `remove ../x` must not name a folder beside the agents' folder.
            self._port.notify(f"{acp_registry.shown(agent_id)} is not a registry agent id", ERROR)
            return
        installs = await anyio.to_thread.run_sync(agent_install.installed, options.agents_dir)
        if not agent_id:
            if not installs:
                self._port.notify("no registry agent is installed: :AcpStart {id} installs one", INFO)
                return
            # The list at hand (the cache; a stale one is fetched again behind): no wait on the network.
            listed = await self._catalog.registry(options, background=True) if options.enabled else None
            newer = {record.id: _newer(listed, record, options) for record in installs}
            choices = [
                Choice(record.id, _installed_label(record, newer[record.id], options)) for record in installs
            ]
            chosen = await self._port.select("Installed agents", choices, "acp_nvim_installed")
            if chosen is None:
                return
            agent_id = chosen
            update = f"update to {newer[agent_id]}" if newer.get(agent_id) else "update"
        else:
            update = "update"
        if not action:
            picked = await self._port.select(
                f"{agent_id}:",
                [Choice("update", update), Choice("remove", "remove")],
                "acp_nvim_agent_action",
            )
            if picked is None:
                return
            action = picked
        if action == "remove":
            await self._remove(options, agent_id, installs)
        elif action == "update":
            await self._update(options, agent_id, [r for r in installs if r.id == agent_id])
        else:
            self._port.notify(f"unknown :AcpAgents action {action!r} (update, remove)", ERROR)

    async def _remove(self, options: RegistryOptions, agent_id: str, installs: list[InstalledAgent]) -> None:
        """Removes every installed version of the agent; a running one only once the user chose to stop it
        (deleting the files under a live process breaks it as it loads more of them)."""
        users = self._users(installs, agent_id)
        if users:
            names = ", ".join(run.name for run in users)
            picked = await self._port.select(
                f"{agent_id} is running ({names}): stop it to remove it?",
                [Choice("stop", f"stop {names} and remove {agent_id}"), Choice("keep", "keep it")],
                "acp_nvim_agent_remove",
            )
            if picked != "stop":
                self._port.notify(f"{agent_id} was not removed: it is running ({names})", INFO)
                return
            # Those that run now: one may have started while the question waited.
            for run in self._users(installs, agent_id):
                await self._runs.stop_run(run, f"{run.display_name} was stopped: {agent_id} is removed")
        removed = await anyio.to_thread.run_sync(agent_install.remove, options.agents_dir, agent_id, None)
        if removed:
            self._port.notify(f"removed {agent_id} {', '.join(removed)}", INFO)
        else:
            self._port.notify(f"{agent_id} is not installed", WARN)

    def _users(self, installs: list[InstalledAgent], agent_id: str) -> list[AgentRun]:
        return list({id(run): run for _, run in self._in_use(installs, agent_id)}.values())

    async def _update(self, options: RegistryOptions, agent_id: str, installs: list[InstalledAgent]) -> None:
        if not await self._catalog.refresh(options):
            return
        try:
            agent = await self._entry(options, agent_id)
        except StartError as err:
            self._port.notify(str(err), ERROR)
            return
        plan = acp_registry.plan(agent)
        if not isinstance(plan, acp_registry.BinaryPlan):
            kind = acp_registry.kind(agent)
            channel = f" on its {options.channel(agent_id)} channel" if options.preview else ""
            kept = ", ".join(record.version for record in installs)
            self._port.notify(
                f"{agent_id} runs with {kind}{channel}, pinned to {agent.version}: nothing to update"
                + (f" (the installed {kept} is kept)" if kept else ""),
                INFO,
            )
            return
        if any(record.version == agent.version for record in installs):
            self._port.notify(f"{agent_id} {agent.version} is the registry's version: up to date", INFO)
            return
        try:
            await self.install(options, agent, plan.target)
        except StartError as err:
            self._port.notify(str(err), ERROR)


def _newer(registry: Registry | None, record: InstalledAgent, options: RegistryOptions) -> str | None:
    """The version of an installed agent on its channel when it is newer than the one installed (with
    "(preview)" when that is the preview's)."""
    agent = registry.find(record.id) if registry is not None else None
    if agent is None:
        return None
    offered = channels.offered(agent, options.channel(record.id))
    if not channels.newer(offered.version, record.version):
        return None
    return offered.version + (" (preview)" if offered is not agent else "")


def _installed_label(record: InstalledAgent, newer: str | None, options: RegistryOptions) -> str:
    # An install is always of the stable channel (the format has no binary previews): said where the user
    # chose the preview for that agent.
    channel = " (stable)" if options.channel(record.id) == channels.PREVIEW else ""
    label = f"{record.id}  {record.name} {record.version}{channel}  ({record.folder})"
    return label + (f"  newer: {newer}" if newer else "")


def _local(url: str) -> bool:
    return url.startswith(("file:", "/", "~"))


def _on_path(spec: AgentSpec) -> bool:
    path = spec.env.get("PATH")
    return any(shutil.which(cmd, path=path) is not None for cmd in (spec.cmd, *spec.fallbacks))


def _size(total: int) -> str:
    return f"{total / 1024 / 1024:.1f} MiB" if total >= 1024 * 1024 else f"{math.ceil(total / 1024)} KiB"

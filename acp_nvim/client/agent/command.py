"""Which command starts an agent: the executable that is installed, and the flags its version understands.

Agents are renamed and their flags change: the Claude agent is `claude-agent-acp` today and was
`claude-code-acp` (still installed by many); Gemini CLI takes `--acp` since 0.33.0 and only
`--experimental-acp` before (which later versions call deprecated). A preset names the current command, the
older ones to fall back on, and the arguments for versions older than a given one; `resolve` picks, at each
start, on the host's loop (a version is read from the installed package's `package.json`, else asked with
`--version` in a process of its own), never on Neovim's.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import msgspec

from acp_nvim.client.agent.process import AgentCommand, AgentNotFound

log = logging.getLogger("acp_nvim.command")

# `--version` of a CLI that cannot be found through its package: how long it may take.
VERSION_TIMEOUT = 15.0
# Folders above the executable's real path searched for its package.json (npm: bin/x.js, dist/src/x.js).
PACKAGE_DEPTH = 6

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


class OlderArgs(msgspec.Struct, kw_only=True):
    """Arguments for versions of the agent older than `before` (e.g. "0.33.0"); `package` is its npm name,
    whose package.json tells the installed version."""

    before: str
    args: list[str]
    package: str = ""


# Versions found, by executable (its real path and modification time): asked once per installed version.
_versions: dict[tuple[str, int], tuple[int, int, int] | None] = {}


async def resolve(
    command: AgentCommand, fallbacks: Sequence[str] = (), older: OlderArgs | None = None
) -> AgentCommand:
    """`command`, or the first of `fallbacks` (executables taking the same arguments) that is on PATH when
    its own executable is not; with `older`'s arguments when the installed version is older. Raises
    `AgentNotFound` naming the current executable when none is installed."""
    path = _search_path(command.env)
    chosen = command.command
    if shutil.which(chosen, path=path) is None:
        found = next((name for name in fallbacks if shutil.which(name, path=path) is not None), None)
        if found is None:
            raise AgentNotFound(f"agent command not found: {command.command}")
        log.info("%s is not installed: starting %s instead", command.command, found)
        chosen = found
    args = list(command.args)
    if older is not None:
        executable = shutil.which(chosen, path=path)
        version = await installed_version(executable, older.package, command.env) if executable else None
        before = _parse(older.before)
        if version is not None and before is not None and version < before:
            log.info("%s %s is older than %s: arguments %s", chosen, _show(version), older.before, older.args)
            args = list(older.args)
    return msgspec.structs.replace(command, command=chosen, args=args)


async def installed_version(
    executable: str, package: str = "", env: Mapping[str, str] | None = None
) -> tuple[int, int, int] | None:
    """The version of the CLI at `executable`: from its npm package's package.json when `package` names it,
    else from what `executable --version` prints; None when neither says."""
    real = os.path.realpath(executable)
    try:
        key = (real, os.stat(real).st_mtime_ns)
    except OSError:
        return None
    if key in _versions:
        return _versions[key]
    version = package_version(Path(real), package) if package else None
    if version is None:
        version = await _asked_version(executable, env)
    _versions[key] = version
    return version


def package_version(real: Path, package: str) -> tuple[int, int, int] | None:
    """The version in the package.json of the npm package `package` holding the file `real` (a real path),
    read without running anything; None when no such package holds it."""
    for folder in list(real.parents)[:PACKAGE_DEPTH]:
        manifest = folder / "package.json"
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("name") == package and isinstance(data.get("version"), str):
            return _parse(data["version"])
    return None


async def _asked_version(executable: str, env: Mapping[str, str] | None) -> tuple[int, int, int] | None:
    try:
        with anyio.move_on_after(VERSION_TIMEOUT):
            result = await anyio.run_process(
                [executable, "--version"], env={**os.environ, **(env or {})}, check=False
            )
            return _parse(result.stdout.decode("utf-8", errors="replace"))
    except OSError as err:
        log.warning("%s --version failed: %s", executable, err)
        return None
    log.warning("%s --version did not answer within %g s", executable, VERSION_TIMEOUT)
    return None


def _parse(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text)
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3])


def _show(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


def _search_path(env: Mapping[str, str]) -> str | None:
    return env.get("PATH", os.environ.get("PATH"))

"""The ACP Registry's catalogue (https://github.com/agentclientprotocol/registry): its entries, validated, and
how an entry runs on this machine.

Each agent has an id, a version and one or more distributions: `npx` (an npm package), `uvx` (a PyPI
package) or `binary` (an archive per platform with the command inside it). A package may name the executable
of it to run (`cmd`: `npx --package PKG CMD`, `uvx --from PKG CMD`, the format's FORMAT.md), and an agent may
have a `preview` block: exactly a `version` and an npx/uvx `distribution`, the same agent on its unstable
channel (which one runs is `channels.py`'s). Fields this client does not know
are ignored, so a newer registry still decodes; a missing or mistyped field the client needs is an error that
names it.

Every field that becomes a path component (the id and version: `agents/{id}/{version}/`), a file inside the
install (the command), a command-line word (the package, a package's `cmd`, the arguments) or an environment
entry is checked whole (`re.fullmatch`: plain ASCII, no separator, no `..`, no NUL, bounded) when the entry
is decoded, from the network or from the cache alike, its preview's as its own: an entry that fails is left
out, never half used.
"""

from __future__ import annotations

import platform
import re
import shutil
from collections.abc import Mapping
from typing import Annotated

import msgspec

# The id's rule lives with the options (`opts.registry.preview` names ids), which load without this module.
from acp_nvim.app.registry.options import valid_id as valid_id

# The registry's platform targets (its FORMAT.md): "{os}-{arch}".
PLATFORMS = (
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
)

AgentId = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9-]*$")]
Version = Annotated[str, msgspec.Meta(pattern=r"^[0-9]+\.[0-9]+\.[0-9]+")]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]
Sha256 = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-fA-F]{64}$")]


class RegistryError(Exception):
    """The registry (or one of its entries) is not what the format says: the message says what is wrong."""


# The msgspec patterns above give the first, familiar message; these decide. `re.search` with `^…$` lets a
# trailing newline through, and an unanchored pattern a whole path ("1.0.0/../../x").
_VERSION = re.compile(
    r"[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(?:-[0-9A-Za-z.-]{1,64})?(?:\+[0-9A-Za-z.-]{1,64})?"
)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# Printable ASCII but the space: an archive URL, a package name (a word of npx's or uvx's command line).
_WORD = re.compile(r"[!-~]{1,2048}")
# A package's executable (an npm bin, a Python entry point): one plain name, never a path or an option.
_PACKAGE_CMD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,127}")
# A printable line without control characters (what the user reads: a name).
_LINE = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,128}")
MAX_ARG = 4096
MAX_ARGS = 256


def valid_version(value: str) -> bool:
    """Whether `value` can be a version: MAJOR.MINOR.PATCH[-pre][+build], one path component."""
    return _VERSION.fullmatch(value) is not None and ".." not in value


def shown(value: object, limit: int = 64) -> str:
    """A value from the registry as a message quotes it: short, escaped (no newline or escape sequence of
    an entry reaches the user's screen)."""
    text = str(value)
    return ascii(text[:limit]) + ("…" if len(text) > limit else "")


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
MAX_DESCRIPTION = 300


def one_line(text: str, limit: int = MAX_DESCRIPTION) -> str:
    """A text of an entry as one line of a picker: control characters (newlines, escapes) become a space,
    a long one is cut (a description must not draw lines of its own among the other agents)."""
    flat = _CONTROL.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def command_path(cmd: str) -> str | None:
    """Why `cmd` cannot name a file inside the install folder, or None when it can."""
    normalized = cmd.replace("\\", "/")
    parts = [part for part in normalized.split("/") if part not in ("", ".")]
    if _WORD.fullmatch(cmd) is None or len(cmd) > 255:
        return f"cmd {shown(cmd)} is not a plain relative path"
    if normalized.startswith("/") or (len(normalized) > 1 and normalized[1] == ":"):
        return f"cmd {shown(cmd)} is an absolute path: it must be inside the archive"
    if ".." in parts or not parts:
        return f"cmd {shown(cmd)} leaves the agent's folder"
    return None


def package_command(cmd: str) -> str | None:
    """Why `cmd` cannot be the executable a runner runs from its package, or None when it can."""
    if _PACKAGE_CMD.fullmatch(cmd) is None or ".." in cmd:
        return (
            f"cmd {shown(cmd)} is not an executable's name (ASCII letters, digits, '.', '_', '+' and '-',"
            " 128 at most, not starting with '-' or '.': no path, no option)"
        )
    return None


def _check_run(what: str, args: list[str], env: dict[str, str]) -> None:
    if len(args) > MAX_ARGS or any("\0" in arg or len(arg) > MAX_ARG for arg in args):
        raise ValueError(
            f"{what} args: at most {MAX_ARGS}, each without NUL and at most {MAX_ARG} characters"
        )
    for name, value in env.items():
        if _ENV_NAME.fullmatch(name) is None or "\0" in value or len(value) > MAX_ARG:
            raise ValueError(f"{what} env {shown(name)} is not a NAME=value without NUL")


class BinaryTarget(msgspec.Struct, frozen=True, kw_only=True):
    archive: NonEmpty
    cmd: NonEmpty
    args: list[str] = []
    env: dict[str, str] = {}
    # Optional in the format: the archive's SHA-256, checked before extraction when given.
    sha256: Sha256 | None = None

    def __post_init__(self) -> None:
        if _WORD.fullmatch(self.archive) is None:
            raise ValueError(
                f"archive {shown(self.archive)} is not a URL without spaces or control characters"
            )
        why = command_path(self.cmd)
        if why is not None:
            raise ValueError(why)
        _check_run("binary", self.args, self.env)


class PackageDistribution(msgspec.Struct, frozen=True, kw_only=True):
    package: NonEmpty
    # The package's executable to run when it is not the package's default one.
    cmd: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}

    def __post_init__(self) -> None:
        # The package is the runner's first word after its own options: "-c=…" would be one of them.
        if _WORD.fullmatch(self.package) is None or self.package.startswith("-"):
            raise ValueError(
                f"package {shown(self.package)} is not a package name (no spaces, no leading '-')"
            )
        why = package_command(self.cmd) if self.cmd is not None else None
        if why is not None:
            raise ValueError(why)
        _check_run("package", self.args, self.env)


class Distribution(msgspec.Struct, frozen=True, kw_only=True):
    binary: dict[str, BinaryTarget] | None = None
    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None


class PreviewDistribution(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The preview's distribution: npx or uvx only (the format has no binary previews)."""

    npx: PackageDistribution | None = None
    uvx: PackageDistribution | None = None
    # Decoded only to be refused by name.
    binary: object = None

    def __post_init__(self) -> None:
        if self.binary is not None:
            raise ValueError("binary preview distributions are not supported (npx and uvx only)")
        if self.npx is None and self.uvx is None:
            raise ValueError("a preview distribution has npx or uvx")


class Preview(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The agent on its preview channel: exactly these two fields, the rest of the entry shared."""

    version: Version
    distribution: PreviewDistribution

    def __post_init__(self) -> None:
        _check_version(self.version, "preview version")


def _check_version(version: str, what: str) -> None:
    if not valid_version(version):
        raise ValueError(
            f"{what} {shown(version)} is not MAJOR.MINOR.PATCH[-pre][+build] of ASCII letters,"
            " digits, '.' and '-'"
        )


class RegistryAgent(msgspec.Struct, frozen=True, kw_only=True):
    id: AgentId
    name: NonEmpty
    version: Version
    description: str
    distribution: Distribution
    repository: str | None = None
    license: str | None = None
    authors: list[str] = []
    preview: Preview | None = None

    def __post_init__(self) -> None:
        if not valid_id(self.id):
            raise ValueError(
                f"id {shown(self.id)} is not lowercase ASCII letters, digits and '-' (64 at most)"
            )
        _check_version(self.version, "version")
        if _LINE.fullmatch(self.name) is None:
            raise ValueError(f"name {shown(self.name)} is not one line of at most 128 characters")


class Registry(msgspec.Struct, frozen=True, kw_only=True):
    version: str
    agents: list[RegistryAgent]
    # Entries left out because they do not match the format: one line each, saying why.
    skipped: list[str] = []

    def find(self, agent_id: str) -> RegistryAgent | None:
        return next((agent for agent in self.agents if agent.id == agent_id), None)


class _Listing(msgspec.Struct, frozen=True):
    version: str
    agents: list[msgspec.Raw]


_listing = msgspec.json.Decoder(_Listing)
_agent = msgspec.json.Decoder(RegistryAgent)


def decode(data: bytes) -> Registry:
    """The registry in `data`; `RegistryError` saying what is wrong when it is not JSON or not the format.
    One broken entry does not cost the others: it is left out and named in `skipped` (unless all are)."""
    try:
        listing = _listing.decode(data)
    except msgspec.ValidationError as err:
        raise RegistryError(f"the registry does not match the ACP Registry format: {err}") from None
    except msgspec.DecodeError as err:
        raise RegistryError(f"the registry is not JSON: {err}") from None
    agents: list[RegistryAgent] = []
    skipped: list[str] = []
    for index, raw in enumerate(listing.agents):
        try:
            agents.append(_agent.decode(raw))
        except msgspec.ValidationError as err:
            skipped.append(f"agents[{index}]{_named(raw)}: {str(err).removesuffix(' - at `$`')}")
    if skipped and not agents:
        raise RegistryError(f"the registry does not match the ACP Registry format: {skipped[0]}")
    return Registry(version=listing.version, agents=agents, skipped=skipped)


def _named(raw: msgspec.Raw) -> str:
    try:
        entry = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        return ""
    found = entry.get("id") if isinstance(entry, dict) else None
    if not isinstance(found, str):
        return ""
    plain = _LINE.fullmatch(found) is not None and found.isascii() and len(found) <= 64
    return f" ({found if plain else shown(found)})"


def encode(registry: Registry) -> bytes:
    return msgspec.json.encode(registry)


def this_platform(system: str | None = None, machine: str | None = None) -> str:
    """The registry's name for this machine ("linux-x86_64"), whether or not the registry lists it."""
    system = (system or platform.system()).lower()
    machine = (machine or platform.machine()).lower()
    os_name = {"darwin": "darwin", "linux": "linux", "windows": "windows"}.get(system, system)
    arch = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return f"{os_name}-{arch}"


class PackagePlan(msgspec.Struct, frozen=True, kw_only=True):
    """An npx or uvx agent: the command line that runs it (the runner fetches the package itself)."""

    runner: str
    argv: list[str]
    env: dict[str, str]
    install_hint: str


class BinaryPlan(msgspec.Struct, frozen=True, kw_only=True):
    """A binary agent: the archive for this platform, installed before it can run."""

    target: BinaryTarget


Plan = PackagePlan | BinaryPlan

_RUNNER_HINTS = {
    "npx": "npx comes with Node.js: install Node.js (https://nodejs.org)",
    "uvx": "uvx comes with uv: install uv (https://docs.astral.sh/uv/)",
}


def pinned(package: str, version: str, runner: str) -> str:
    """`package` pinned to the registry's version, unless the entry pins one itself."""
    if runner == "npx":
        # "@scope/name" has its version after a second "@"; a path or URL is run as it is.
        name = package[1:] if package.startswith("@") else package
        if "@" in name or re.match(r"^(\.|/|file:|https?:|git)", package):
            return package
        return f"{package}@{version}"
    if re.search(r"[=<>~!@ ]", package) or "/" in package:
        return package
    return f"{package}=={version}"


def _package(dist: Distribution) -> tuple[str, PackageDistribution] | None:
    """The package runner an entry runs with when it has no binary here: npx first, else uvx."""
    for runner, package in (("npx", dist.npx), ("uvx", dist.uvx)):
        if package is not None:
            return runner, package
    return None


def local_package(agent: RegistryAgent) -> str | None:
    """The package the entry runs when it names a folder or file of this machine (the runners take paths
    as packages), else None."""
    found = _package(agent.distribution)
    if found is None or re.match(r"^(\.|/|~|file:)", found[1].package) is None:
        return None
    return found[1].package


def plan(agent: RegistryAgent, platform_key: str | None = None) -> Plan | None:
    """How `agent` runs here: this platform's archive, else a package runner; None when neither applies."""
    dist = agent.distribution
    # A binary needs nothing else installed: preferred when this platform has one.
    target = (dist.binary or {}).get(platform_key or this_platform())
    if target is not None:
        return BinaryPlan(target=target)
    found = _package(dist)
    if found is None:
        return None
    runner, package = found
    spec = pinned(package.package, agent.version, runner)
    # The format's command lines: `npx --package PKG CMD`, `uvx --from PKG CMD` when the entry names the
    # package's executable, else the package alone (its default executable).
    words = [_FROM[runner], spec, package.cmd] if package.cmd is not None else [spec]
    # `npx --yes` installs without asking: the user chose the agent; uvx never asks.
    argv = [*(["--yes"] if runner == "npx" else []), *words, *package.args]
    return PackagePlan(runner=runner, argv=argv, env=package.env, install_hint=_RUNNER_HINTS[runner])


_FROM = {"npx": "--package", "uvx": "--from"}


def runnable(agent: RegistryAgent, platform_key: str | None = None) -> bool:
    return plan(agent, platform_key) is not None


def missing_runner(found: PackagePlan, env: Mapping[str, str] | None = None) -> str | None:
    """What to install when the package runner is not on PATH; None when it is."""
    path = (env or {}).get("PATH")
    if shutil.which(found.runner, path=path) is not None:
        return None
    return f"{found.runner} not found — {found.install_hint}"


def kind(agent: RegistryAgent, platform_key: str | None = None) -> str:
    """How the agent runs here ("binary", "npx", "uvx"); for one that cannot, the distribution it has."""
    found = plan(agent, platform_key)
    if isinstance(found, PackagePlan):
        return found.runner
    return "binary"

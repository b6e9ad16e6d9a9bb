"""What each preset's agent does itself and what it routes through Neovim (fs/*, terminal/*, permission
requests), as measured with the versions named, and the programs it cannot work without. `:checkhealth
acp_nvim` shows it (`lua/acp_nvim/health.lua`, from the host's `AgentReport.routes`), `:help acp_nvim-presets`
says it too. Keyed by executable (the claude preset runs one of two agents that behave differently), a row
for each range of versions of the npm package that installs it: the row of the version installed is shown,
the version read from the package's package.json beside the executable (nothing is run).
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path

import msgspec

from acp_nvim.client.agent.command import package_version

Version = tuple[int, int, int]


class Need(msgspec.Struct, kw_only=True, frozen=True):
    exe: str
    os: str
    why: str


class Routes(msgspec.Struct, kw_only=True, frozen=True):
    """What the versions of `package` from `since` (included) to `before` (excluded) do, as measured."""

    measured: str
    read: str
    write: str
    terminal: str
    permission: str
    needs: tuple[Need, ...] = ()
    package: str = ""
    since: Version | None = None
    before: Version | None = None

    def covers(self, package: str, version: Version) -> bool:
        return (
            package == self.package
            and (self.since is None or version >= self.since)
            and (self.before is None or version < self.before)
        )

    def versions(self) -> str:
        """The versions the row describes, in words."""
        if self.since is not None and self.before is not None:
            return f"{_show(self.since)} to before {_show(self.before)}"
        if self.since is not None:
            return f"{_show(self.since)} and later"
        if self.before is not None:
            return f"before {_show(self.before)}"
        return "every version"


class Missing(msgspec.Struct, kw_only=True, frozen=True):
    """A program the agent needs on this system: `message` is shown when Neovim finds no `exe`."""

    exe: str
    message: str


class CommandRoutes(msgspec.Struct, kw_only=True, frozen=True):
    """What health shows for an agent that runs as one command: its routes, the programs it needs here."""

    does: str
    needs: list[Missing]


# What every codex-acp measured does the same way.
_CODEX_READ = "reads files itself (never fs/read)"
_CODEX_TERMINAL = "runs commands itself (exec_command; output only in the tool call)"

# Each executable's rows, the newest versions first: the first is shown when the installed version is unknown.
BY_COMMAND: dict[str, tuple[Routes, ...]] = {
    "claude-agent-acp": (
        Routes(
            measured="@agentclientprotocol/claude-agent-acp 0.101",
            package="@agentclientprotocol/claude-agent-acp",
            since=(0, 18, 0),
            read="reads files itself",
            write="writes the disk itself",
            terminal="runs commands itself",
            permission="asks permission through Neovim",
        ),
    ),
    "claude-code-acp": (
        Routes(
            measured="@zed-industries/claude-code-acp 0.16.2",
            package="@zed-industries/claude-code-acp",
            read="reads through Neovim",
            write="writes through Neovim",
            terminal="runs commands in Neovim terminals",
            permission="asks permission through Neovim",
        ),
    ),
    "codex-acp": (
        Routes(
            # Its @openai/codex ships its own bubblewrap, so nothing is needed beside it.
            measured="@agentclientprotocol/codex-acp 2.6.0",
            package="@agentclientprotocol/codex-acp",
            since=(2, 0, 0),
            read=_CODEX_READ,
            write="writes the disk itself (apply_patch; no fs/write)",
            terminal=_CODEX_TERMINAL,
            permission='asks permission through Neovim only for what its default mode ("Auto review") finds'
            " unsafe: not for edits in the workspace or a harmless command",
        ),
        Routes(
            # The frozen Rust adapter many still have installed.
            measured="@zed-industries/codex-acp 0.16.0",
            package="@zed-industries/codex-acp",
            before=(1, 0, 0),
            read=_CODEX_READ,
            write="writes the disk itself (apply_patch, after permission; no fs/write)",
            terminal=_CODEX_TERMINAL,
            permission="asks permission through Neovim for edits and new files (its default read-only mode),"
            " not for a harmless command",
            needs=(
                Need(exe="bwrap", os="Linux", why="its sandbox runs commands and patches under bubblewrap"),
            ),
        ),
    ),
    "gemini": (
        Routes(
            measured="@google/gemini-cli 0.61.0 (--acp)",
            package="@google/gemini-cli",
            read="reads through Neovim only from its edit tools (replace, write_file);"
            " read_file reads the disk",
            write="writes through Neovim",
            terminal="runs commands itself (run_shell_command)",
            permission="asks permission through Neovim for edits and shell commands",
        ),
    ),
    "opencode": (
        Routes(
            measured="opencode-ai 1.18.33",
            package="opencode-ai",
            read="reads files itself (never fs/read)",
            write="writes the disk itself, and through Neovim (without waiting for the answer) only when"
            ' edits need permission (permission.edit = "ask")',
            terminal="runs commands itself (bash)",
            permission="asks permission through Neovim only as opencode.json configures it"
            " (by default for nothing)",
        ),
    ),
}


def installed(cmd: str, rows: tuple[Routes, ...], path: str | None) -> tuple[str, Version] | None:
    """The npm package and version of the `cmd` found on `path` (Neovim's PATH), among the rows' packages."""
    executable = shutil.which(cmd, path=path)
    if executable is None:
        return None
    real = Path(os.path.realpath(executable))
    for package in dict.fromkeys(row.package for row in rows if row.package):
        version = package_version(real, package)
        if version is not None:
            return package, version
    return None


def of_command(cmd: str, system: str | None = None, path: str | None = None) -> CommandRoutes | None:
    """What the agent started by `cmd` does and needs on `system` (this one by default), in the row of the
    version installed on `path` (the newest row when none is found), or None when it was not measured.
    Whether a needed program is installed is Neovim's fact (its PATH may differ from the host's): health
    checks `exe` and shows `message` when it is missing."""
    name = os.path.basename(cmd)
    rows = BY_COMMAND.get(name)
    if rows is None:
        return None
    found = installed(cmd, rows, path)
    routes = rows[0]
    note = ""
    if found is not None:
        package, version = found
        routes = next((row for row in rows if row.covers(package, version)), None) or routes
        measured = routes.covers(package, version)
        note = f"; installed: {package} {_show(version)}" + ("" if measured else ", not measured")
    system = system or platform.system()
    return CommandRoutes(
        does=f"{routes.read}; {routes.write}; {routes.terminal}; {routes.permission}"
        f" (measured: {routes.measured}, describes {routes.versions()}{note})",
        needs=[
            Missing(exe=need.exe, message=f"{need.exe} not found: {name} needs it on {need.os} ({need.why})")
            for need in routes.needs
            if need.os == system
        ],
    )


def _show(version: Version) -> str:
    return ".".join(map(str, version))

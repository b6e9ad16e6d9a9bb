"""What each preset's agent does itself and what it routes through Neovim (fs/*, terminal/*, permission
requests), as measured with the versions named, and the programs it cannot work without. `:checkhealth
acp_nvim` shows it (`lua/acp_nvim/health.lua`, from the host's `AgentReport.routes`), `:help acp_nvim-presets`
says it too. Keyed by executable: the claude preset runs one of two agents that behave differently.
"""

from __future__ import annotations

import os
import platform

import msgspec


class Need(msgspec.Struct, kw_only=True, frozen=True):
    exe: str
    os: str
    why: str


class Routes(msgspec.Struct, kw_only=True, frozen=True):
    measured: str
    read: str
    write: str
    terminal: str
    permission: str
    needs: tuple[Need, ...] = ()


class Missing(msgspec.Struct, kw_only=True, frozen=True):
    """A program the agent needs on this system: `message` is shown when Neovim finds no `exe`."""

    exe: str
    message: str


class CommandRoutes(msgspec.Struct, kw_only=True, frozen=True):
    """What health shows for an agent that runs as one command: its routes, the programs it needs here."""

    does: str
    needs: list[Missing]


BY_COMMAND: dict[str, Routes] = {
    "claude-agent-acp": Routes(
        measured="@agentclientprotocol/claude-agent-acp 0.101 (any version since 0.18)",
        read="reads files itself",
        write="writes the disk itself",
        terminal="runs commands itself",
        permission="asks permission through Neovim",
    ),
    "claude-code-acp": Routes(
        measured="@zed-industries/claude-code-acp 0.16.2",
        read="reads through Neovim",
        write="writes through Neovim",
        terminal="runs commands in Neovim terminals",
        permission="asks permission through Neovim",
    ),
    "codex-acp": Routes(
        # Its @openai/codex ships its own bubblewrap, so nothing is needed beside it (0.16.0 needed bwrap).
        measured="@agentclientprotocol/codex-acp 2.6.0",
        read="reads files itself (never fs/read)",
        write="writes the disk itself (apply_patch; no fs/write)",
        terminal="runs commands itself (exec_command; output only in the tool call)",
        permission='asks permission through Neovim only for what its default mode ("Auto review") finds'
        " unsafe: not for edits in the workspace or a harmless command",
    ),
    "gemini": Routes(
        measured="@google/gemini-cli 0.61.0 (--acp)",
        read="reads through Neovim only from its edit tools (replace, write_file); read_file reads the disk",
        write="writes through Neovim",
        terminal="runs commands itself (run_shell_command)",
        permission="asks permission through Neovim for edits and shell commands",
    ),
    "opencode": Routes(
        measured="opencode-ai 1.18.33",
        read="reads files itself (never fs/read)",
        write="writes the disk itself, and through Neovim (without waiting for the answer) only when edits"
        ' need permission (permission.edit = "ask")',
        terminal="runs commands itself (bash)",
        permission="asks permission through Neovim only as opencode.json configures it"
        " (by default for nothing)",
    ),
}


def of_command(cmd: str, system: str | None = None) -> CommandRoutes | None:
    """What the agent started by `cmd` does and needs on `system` (this one by default), or None when it was
    not measured. Whether a needed program is installed is Neovim's fact (its PATH may differ from the
    host's): health checks `exe` and shows `message` when it is missing."""
    routes = BY_COMMAND.get(os.path.basename(cmd))
    if routes is None:
        return None
    system = system or platform.system()
    name = os.path.basename(cmd)
    return CommandRoutes(
        does=f"{routes.read}; {routes.write}; {routes.terminal}; {routes.permission}"
        f" (measured: {routes.measured})",
        needs=[
            Missing(exe=need.exe, message=f"{need.exe} not found: {name} needs it on {need.os} ({need.why})")
            for need in routes.needs
            if need.os == system
        ],
    )

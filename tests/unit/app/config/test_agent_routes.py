"""Per-agent facts have one owner, the host (`acp_nvim/app/config/agent_routes.py`): `:checkhealth` gets, for
each command an agent may run, the line that says what it routes through Neovim and the programs it needs
here, worded; Lua only picks the command installed and checks `executable()`."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_nvim.app.config import agent_routes
from acp_nvim.app.config.presets import Launch
from acp_nvim.app.config.settings import Settings

ROOT = Path(__file__).resolve().parents[4]


def test_a_measured_command_has_its_line_and_its_needs_on_this_system(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    codex = agent_routes.of_command("/opt/bin/codex-acp", system="Linux")
    assert codex is not None
    assert codex.does.startswith("reads files itself (never fs/read); writes the disk itself (apply_patch")
    # Issue 29: the version the preset installs, which ships its own bubblewrap and edits the workspace
    # without asking in its default mode.
    assert codex.does.endswith("(measured: @agentclientprotocol/codex-acp 2.6.0)")
    assert "not for edits in the workspace" in codex.does
    assert codex.needs == []
    sandboxed = agent_routes.Routes(
        measured="sandboxed 1.0",
        read="reads itself",
        write="writes itself",
        terminal="runs itself",
        permission="asks",
        needs=(agent_routes.Need(exe="bwrap", os="Linux", why="its sandbox runs under bubblewrap"),),
    )
    monkeypatch.setitem(agent_routes.BY_COMMAND, "sandboxed-acp", sandboxed)
    linux = agent_routes.of_command("/opt/bin/sandboxed-acp", system="Linux")
    assert linux is not None
    assert [(need.exe, need.message) for need in linux.needs] == [
        ("bwrap", "bwrap not found: sandboxed-acp needs it on Linux (its sandbox runs under bubblewrap)")
    ]
    darwin = agent_routes.of_command("sandboxed-acp", system="Darwin")
    assert darwin is not None and darwin.needs == []
    assert agent_routes.of_command("my-own-agent") is None


def test_the_health_report_carries_the_routes_of_each_command_an_agent_may_run() -> None:
    report = Settings().report(Launch(cwd="/", interpreter="python3", pythonpath=""))
    claude = next(agent for agent in report.agents if agent.name == "claude")
    assert set(claude.routes) == {claude.cmd, *claude.fallbacks} == {"claude-agent-acp", "claude-code-acp"}
    assert claude.routes["claude-code-acp"].does == (
        "reads through Neovim; writes through Neovim; runs commands in Neovim terminals;"
        " asks permission through Neovim (measured: @zed-industries/claude-code-acp 0.16.2)"
    )


def test_lua_keeps_no_table_of_its_own() -> None:
    assert not (ROOT / "lua" / "acp_nvim" / "routes.lua").exists()
    health = (ROOT / "lua" / "acp_nvim" / "health.lua").read_text(encoding="utf-8")
    assert "measured" not in health and "bwrap" not in health

"""Per-agent facts have one owner, the host (`acp_nvim/app/agent_routes.py`): `:checkhealth` gets, for each
command an agent may run, the line that says what it routes through Neovim and the programs it needs here,
worded; Lua only picks the command installed and checks `executable()`."""

from __future__ import annotations

from pathlib import Path

from acp_nvim.app import agent_routes
from acp_nvim.app.presets import Launch
from acp_nvim.app.settings import Settings

ROOT = Path(__file__).resolve().parents[3]


def test_a_measured_command_has_its_line_and_its_needs_on_this_system() -> None:
    codex = agent_routes.of_command("/opt/bin/codex-acp", system="Linux")
    assert codex is not None
    assert codex.does.startswith("reads files itself (never fs/read); writes the disk itself (apply_patch")
    assert codex.does.endswith("(measured: @zed-industries/codex-acp 0.16.0)")
    assert [(need.exe, need.message) for need in codex.needs] == [
        (
            "bwrap",
            "bwrap not found: codex-acp needs it on Linux"
            " (its sandbox runs commands and patches under bubblewrap)",
        )
    ]
    darwin = agent_routes.of_command("codex-acp", system="Darwin")
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

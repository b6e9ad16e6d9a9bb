"""Per-agent facts have one owner, the host (`acp_nvim/app/config/agent_routes.py`): `:checkhealth` gets, for
each command an agent may run, the line that says what it routes through Neovim and the programs it needs
here, worded; Lua only picks the command installed and checks `executable()`."""

from __future__ import annotations

import json
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
    # Not installed: the newest row, saying which versions it describes.
    assert codex.does.endswith("(measured: @agentclientprotocol/codex-acp 2.6.0, describes 2.0.0 and later)")
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
    monkeypatch.setitem(agent_routes.BY_COMMAND, "sandboxed-acp", (sandboxed,))
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
        " asks permission through Neovim (measured: @zed-industries/claude-code-acp 0.16.2, describes every"
        " version)"
    )


def test_lua_keeps_no_table_of_its_own() -> None:
    assert not (ROOT / "lua" / "acp_nvim" / "routes.lua").exists()
    health = (ROOT / "lua" / "acp_nvim" / "health.lua").read_text(encoding="utf-8")
    assert "measured" not in health and "bwrap" not in health


def npm_installed(root: Path, package: str, version: str, command: str) -> Path:
    """`bin/command` linked to the script of `package` whose package.json says `version`, as `npm install -g`
    lays it out."""
    folder = root / "lib" / "node_modules" / package
    (folder / "dist").mkdir(parents=True)
    script = folder / "dist" / "index.js"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (folder / "package.json").write_text(json.dumps({"name": package, "version": version}))
    (root / "bin").mkdir()
    (root / "bin" / command).symlink_to(script)
    return root / "bin"


@pytest.mark.parametrize(
    ("package", "version", "says", "needs"),
    [
        ("@agentclientprotocol/codex-acp", "2.6.0", "not for edits in the workspace", []),
        ("@agentclientprotocol/codex-acp", "2.9.1", "not for edits in the workspace", []),
        (
            "@zed-industries/codex-acp",
            "0.16.0",
            "for edits and new files (its default read-only mode)",
            ["bwrap"],
        ),
    ],
)
def test_the_row_shown_is_the_one_of_the_version_installed(
    tmp_path: Path, package: str, version: str, says: str, needs: list[str]
) -> None:
    """Issue 29: the routes of the installed codex-acp, read from its package.json (nothing is run): 2.6
    was described as 0.16, with a false "bwrap not found"; 0.16 keeps its own row."""
    bin_dir = npm_installed(tmp_path, package, version, "codex-acp")
    codex = agent_routes.of_command("codex-acp", system="Linux", path=str(bin_dir))
    assert codex is not None
    assert says in codex.does, codex.does
    assert codex.does.endswith(f"; installed: {package} {version})"), codex.does
    assert [need.exe for need in codex.needs] == needs


def test_a_version_no_row_describes_is_said_not_measured(tmp_path: Path) -> None:
    bin_dir = npm_installed(tmp_path, "@zed-industries/codex-acp", "1.2.0", "codex-acp")
    codex = agent_routes.of_command("codex-acp", system="Linux", path=str(bin_dir))
    assert codex is not None
    assert codex.does.endswith(
        "(measured: @agentclientprotocol/codex-acp 2.6.0, describes 2.0.0 and later;"
        " installed: @zed-industries/codex-acp 1.2.0, not measured)"
    ), codex.does


def test_the_codex_the_tests_run_is_described_as_its_version() -> None:
    peers = ROOT / "tests" / "peers" / "node_modules" / ".bin"
    if not (peers / "codex-acp").exists():
        pytest.skip("tests/peers is not installed (scripts/setup)")
    codex = agent_routes.of_command("codex-acp", path=str(peers))
    assert codex is not None
    assert codex.does.endswith("; installed: @agentclientprotocol/codex-acp 2.6.0)"), codex.does

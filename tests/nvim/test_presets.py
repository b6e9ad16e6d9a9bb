"""The presets start what people install today: fake executables on PATH (small scripts in a temporary folder
that record how they were started, then run the scripted agent) stand in for the real agents."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.agent_io import SCRIPTED
from tests.nvim.conftest import Nvim, setup_opts


def fake_agent(folder: Path, name: str, scenario: Path, argv_log: Path, version: str | None = None) -> Path:
    """An executable `name` in `folder` that logs its arguments, answers `--version` with `version` (when
    given; each time noted in `argv_log` + ".asked") and is otherwise the scripted agent."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    asked = shlex.quote(f"{argv_log}.asked")
    answer = (
        f'if [ "$1" = --version ]; then echo x >> {asked}; echo {version}; exit 0; fi\n' if version else ""
    )
    script.write_text(
        "#!/bin/sh\n"
        f"{answer}"
        f'printf "%s\\n" "$0 $*" >> {shlex.quote(str(argv_log))}\n'
        f"exec {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))} {shlex.quote(str(scenario))}\n"
    )
    script.chmod(0o755)
    return script


def npm_installed_gemini(tmp_path: Path, version: str, scenario: Path, argv_log: Path) -> Path:
    """`bin/gemini` linked to a script inside `@google/gemini-cli` whose package.json says `version`, as
    `npm install -g` lays it out; the script itself knows no `--version`."""
    package = tmp_path / "lib" / "node_modules" / "@google" / "gemini-cli"
    entry = fake_agent(package / "dist", "index.js", scenario, argv_log)
    (package / "package.json").write_text(json.dumps({"name": "@google/gemini-cli", "version": version}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gemini").symlink_to(entry)
    return bin_dir


def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"echo": False, "agentInfo": {"name": "fake", "version": "1"}}))
    return path


def start(nvim: Nvim, tmp_path: Path, name: str, path: Path, extra: dict[str, Any] | None = None) -> None:
    # Only PATH is the user's: the preset's command, fallbacks and version choice stay in force.
    agents = {name: {"env": {"PATH": f"{path}:/usr/bin:/bin"}, **(extra or {})}}
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents))
    nvim.api.command(f"AcpStart {name}")


def started_as(argv_log: Path) -> list[str]:
    return argv_log.read_text().splitlines()


def test_claude_runs_claude_agent_acp(nvim: Nvim, tmp_path: Path) -> None:
    argv_log, scenario = tmp_path / "argv.log", scenario_file(tmp_path)
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "claude-agent-acp", scenario, argv_log)
    fake_agent(bin_dir, "claude-code-acp", scenario, argv_log)
    start(nvim, tmp_path, "claude", bin_dir)
    nvim.wait_state("ready")
    assert started_as(argv_log) == [f"{bin_dir}/claude-agent-acp "]


def test_claude_falls_back_to_claude_code_acp(nvim: Nvim, tmp_path: Path) -> None:
    argv_log, scenario = tmp_path / "argv.log", scenario_file(tmp_path)
    bin_dir = tmp_path / "bin"
    fake_agent(bin_dir, "claude-code-acp", scenario, argv_log)
    start(nvim, tmp_path, "claude", bin_dir)
    nvim.wait_state("ready")
    assert started_as(argv_log) == [f"{bin_dir}/claude-code-acp "]


def test_not_found_names_the_current_package(nvim: Nvim, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    start(nvim, tmp_path, "claude", empty)
    nvim.wait_state("error")
    error = nvim.status()["error"]
    assert error == (
        "claude: agent command not found: claude-agent-acp"
        " — install: npm install -g @agentclientprotocol/claude-agent-acp"
    )
    assert error in nvim.errors()[-1]


@pytest.mark.parametrize(
    ("version", "flag"), [("0.61.0", "--acp"), ("0.33.0", "--acp"), ("0.32.1", "--experimental-acp")]
)
def test_gemini_gets_the_flag_of_its_version(nvim: Nvim, tmp_path: Path, version: str, flag: str) -> None:
    argv_log = tmp_path / "argv.log"
    bin_dir = npm_installed_gemini(tmp_path, version, scenario_file(tmp_path), argv_log)
    start(nvim, tmp_path, "gemini", bin_dir)
    nvim.wait_state("ready")
    assert started_as(argv_log) == [f"{bin_dir}/gemini {flag}"]


def test_gemini_without_its_package_is_asked_its_version(nvim: Nvim, tmp_path: Path) -> None:
    argv_log, bin_dir = tmp_path / "argv.log", tmp_path / "bin"
    fake_agent(bin_dir, "gemini", scenario_file(tmp_path), argv_log, version="0.30.0")
    start(nvim, tmp_path, "gemini", bin_dir)
    nvim.wait_state("ready")
    assert started_as(argv_log) == [f"{bin_dir}/gemini --experimental-acp"]
    # Asked once per installed version: a restart does not ask again.
    nvim.api.command("AcpRestart gemini")
    nvim.wait(f"#vim.fn.readfile({str(argv_log)!r}) == 2")
    assert started_as(argv_log)[-1] == f"{bin_dir}/gemini --experimental-acp"
    assert Path(f"{argv_log}.asked").read_text() == "x\n"


def test_the_users_own_arguments_are_run_as_written(nvim: Nvim, tmp_path: Path) -> None:
    argv_log = tmp_path / "argv.log"
    bin_dir = npm_installed_gemini(tmp_path, "0.32.1", scenario_file(tmp_path), argv_log)
    start(nvim, tmp_path, "gemini", bin_dir, {"args": ["--acp", "--model", "x"]})
    nvim.wait_state("ready")
    (line,) = started_as(argv_log)
    assert line.endswith("/bin/gemini --acp --model x"), line


@pytest.mark.parametrize(
    ("preset", "command"),
    [
        ("qwen", "qwen --acp"),
        ("copilot", "copilot --acp"),
        ("auggie", "auggie --acp"),
        ("cline", "cline --acp"),
    ],
)
def test_registry_agents(nvim: Nvim, tmp_path: Path, preset: str, command: str) -> None:
    argv_log, bin_dir = tmp_path / "argv.log", tmp_path / "bin"
    fake_agent(bin_dir, command.split()[0], scenario_file(tmp_path), argv_log)
    start(nvim, tmp_path, preset, bin_dir)
    nvim.wait_state("ready")
    assert started_as(argv_log) == [f"{bin_dir}/{command}"]


def test_checkhealth_says_what_each_agent_routes_through_neovim(nvim: Nvim, tmp_path: Path) -> None:
    argv_log, bin_dir = tmp_path / "argv.log", tmp_path / "bin"
    # Only the old Claude agent is installed: health names it, and that it routes everything through Neovim.
    claude = fake_agent(bin_dir, "claude-code-acp", scenario_file(tmp_path), argv_log)
    nvim.lua("vim.env.PATH = ... .. ':' .. vim.env.PATH", str(bin_dir))
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, default_agent="claude"))
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert f"OK claude: {claude}" in report, report
    assert (
        "claude: reads through Neovim; writes through Neovim; runs commands in Neovim terminals;"
        " asks permission through Neovim (measured: @zed-industries/claude-code-acp 0.16.2, describes every"
        " version)"
    ) in report
    # The agents that are not installed too, as measured with the versions the real-agent tests pin.
    assert (
        "codex: reads files itself (never fs/read); writes the disk itself (apply_patch; no fs/write); runs"
        " commands itself (exec_command; output only in the tool call); asks permission through Neovim only"
        ' for what its default mode ("Auto review") finds unsafe: not for edits in the workspace or a'
        " harmless command (measured: @agentclientprotocol/codex-acp 2.6.0, describes 2.0.0 and later)"
    ) in report
    assert (
        "gemini: reads through Neovim only from its edit tools (replace, write_file); read_file reads the"
        " disk; writes through Neovim; runs commands itself (run_shell_command); asks permission through"
        " Neovim for edits and shell commands (measured: @google/gemini-cli 0.61.0 (--acp), describes every"
        " version)"
    ) in report
    assert (
        "opencode: reads files itself (never fs/read); writes the disk itself, and through Neovim (without"
        ' waiting for the answer) only when edits need permission (permission.edit = "ask"); runs commands'
        " itself (bash); asks permission through Neovim only as opencode.json configures it (by default for"
        " nothing) (measured: opencode-ai 1.18.33, describes every version)"
    ) in report
    # codex is not installed: what it would need is no news.
    assert "bwrap" not in report
    assert "OK initialize: fake 1 (protocol 1)" in report, report


def test_checkhealth_warns_of_no_missing_bubblewrap_for_codex(nvim: Nvim, tmp_path: Path) -> None:
    """Issue 29: codex-acp 2.6 ships its own bubblewrap; health said "bwrap not found" of it (0.16's need)."""
    argv_log, bin_dir = tmp_path / "argv.log", tmp_path / "bin"
    fake_agent(bin_dir, "codex-acp", scenario_file(tmp_path), argv_log)
    # Only the agent on PATH: no bwrap.
    nvim.lua("vim.env.PATH = ...", str(bin_dir))
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, default_agent="codex"))
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "codex: reads files itself" in report, report
    assert "bwrap" not in report, report


@pytest.mark.parametrize(
    ("package", "version", "says", "bwrap"),
    [
        ("@agentclientprotocol/codex-acp", "2.6.0", "not for edits in the workspace", False),
        ("@zed-industries/codex-acp", "0.16.0", "for edits and new files (its default read-only mode)", True),
    ],
)
def test_checkhealth_describes_the_codex_installed_on_neovims_path(
    nvim: Nvim, tmp_path: Path, package: str, version: str, says: str, bwrap: bool
) -> None:
    """Issue 29: health describes the version installed (read from its package.json on Neovim's PATH, set
    here after the host started): 2.6 as 2.6 and without "bwrap not found", 0.16 as 0.16 with it."""
    argv_log = tmp_path / "argv.log"
    folder = tmp_path / "lib" / "node_modules" / package
    entry = fake_agent(folder / "dist", "index.js", scenario_file(tmp_path), argv_log)
    (folder / "package.json").write_text(json.dumps({"name": package, "version": version}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex-acp").symlink_to(entry)
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, default_agent="codex"))
    # Only the agent on PATH: no bwrap.
    nvim.lua("vim.env.PATH = ...", str(bin_dir))
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    (line,) = [line for line in report.splitlines() if "codex: reads files itself" in line]
    assert says in line and line.endswith(f"; installed: {package} {version})"), line
    assert ("bwrap not found: codex-acp needs it on Linux" in report) == bwrap, report


def test_checkhealth_shakes_hands_as_a_start_would(nvim: Nvim, tmp_path: Path) -> None:
    argv_log = tmp_path / "argv.log"
    bin_dir = npm_installed_gemini(tmp_path, "0.32.1", scenario_file(tmp_path), argv_log)
    nvim.lua("vim.env.PATH = ... .. ':' .. vim.env.PATH", str(bin_dir))
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, default_agent="gemini"))
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "OK initialize: fake 1 (protocol 1)" in report, report
    assert started_as(argv_log) == [f"{bin_dir}/gemini --experimental-acp"]

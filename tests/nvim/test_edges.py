"""The rough edges a new user hits (issue 30): a headless `:qa!` after a start prints nothing, `:checkhealth`
warns only of the agents the user configured, and an agent's merge conflict stays known through `u` and
`<C-r>`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NVIM, ROOT
from tests.nvim.agent_io import Scripted, scripted_config
from tests.nvim.conftest import Nvim, configure
from tests.nvim.test_merge_base import conflict, conflicts_of, open_edited

READY = "lua vim.wait(30000, function() return require('acp_nvim').status().state == 'ready' end, 10)"
ERROR = "lua vim.wait(30000, function() return require('acp_nvim').status().state == 'error' end, 10)"
KILL_HOST = "lua vim.uv.kill(require('acp_nvim.host').info().pid, 'sigkill')"


def headless(tmp_path: Path, *commands: str) -> subprocess.CompletedProcess[str]:
    """A user's script: `nvim --headless` with the plugin set up, running `commands` (`-c`); what it
    printed."""
    init = tmp_path / "init.lua"
    init.write_text(
        f"""
vim.opt.runtimepath:prepend({json.dumps(str(ROOT))})
require("acp_nvim").setup({{
  python = {json.dumps(sys.executable)},
  log = {{ file = {json.dumps(str(tmp_path / "acp.log"))} }},
  registry = {{ enabled = false }},
}})
"""
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    argv = [NVIM, "--headless", "--clean", "-n", "-u", str(init)]
    for command in commands:
        argv += ["-c", command]
    return subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90)


@pytest.mark.parametrize(
    "commands",
    [("AcpStart demo", "qa!"), ("AcpStart demo", READY, "qa!"), ("AcpStart demo", READY, "AcpStop", "qa!")],
    ids=["at-once", "once-ready", "after-a-stop"],
)
def test_a_headless_quit_after_a_start_prints_nothing(tmp_path: Path, commands: tuple[str, ...]) -> None:
    """Neovim's exit ends the host (its channel closed, SIGTERM): routine, so nothing is printed (it said
    "acp.nvim: the Python host exited (code 143)")."""
    done = headless(tmp_path, *commands)
    assert (done.stdout, done.stderr, done.returncode) == ("", "", 0)


def test_a_headless_quit_after_checkhealth_says_nothing_of_the_host(tmp_path: Path) -> None:
    done = headless(tmp_path, "checkhealth acp_nvim", "AcpStart demo", READY, "qa!")
    assert done.returncode == 0
    # Neovim itself says "Running healthchecks..."; nothing of ours.
    assert "acp.nvim" not in done.stdout + done.stderr and "Error" not in done.stderr, done.stderr


def test_a_host_that_crashes_is_still_reported_headless(tmp_path: Path) -> None:
    done = headless(tmp_path, "AcpStart demo", READY, KILL_HOST, ERROR, "qa!")
    assert "acp.nvim: the Python host exited (code" in done.stderr, done.stderr


def only_git_on_path(nvim: Nvim, tmp_path: Path) -> None:
    """Neovim's PATH without any agent (git stays: the checkpoints' line is not what is tested)."""
    bin_dir = tmp_path / "only-git"
    bin_dir.mkdir()
    git = shutil.which("git")
    if git:
        (bin_dir / "git").symlink_to(git)
    nvim.lua("vim.env.PATH = ...", str(bin_dir))


def test_checkhealth_warns_only_of_the_configured_agents(nvim: Nvim, tmp_path: Path) -> None:
    """A user with one agent of their own sees no warning of the presets they never chose: those are
    listed as available, with what installs them."""
    scenario = tmp_path / "probe.json"
    scenario.write_text(json.dumps({"agentInfo": {"name": "p", "title": "Probe", "version": "1"}}))
    configure(nvim, tmp_path, agents={"mine": scripted_config(scenario)}, default_agent="mine")
    only_git_on_path(nvim, tmp_path)
    nvim.api.command("checkhealth acp_nvim")
    report = nvim.api.current.buffer[:]
    text = "\n".join(report)
    warnings = [line for line in report if "WARNING" in line]
    assert warnings == [], text
    assert f"OK mine: {sys.executable}" in text, text
    other = "Other agents (presets, available to :AcpStart)"
    heading = next(i for i, line in enumerate(report) if other in line)
    # Each not-installed preset one line, an info (no OK/WARNING/ERROR mark), with its install hint.
    lines = [line.lstrip("- ") for line in report[heading:]]
    codex = next(line for line in lines if line.startswith("codex: codex-acp not found"))
    assert "to use it: npm install -g @agentclientprotocol/codex-acp" in codex, codex
    for preset in ("claude", "gemini", "opencode", "goose"):
        assert any(line.startswith(f"{preset}: ") for line in lines), text


def test_checkhealth_warns_of_a_configured_agent_not_installed(nvim: Nvim, tmp_path: Path) -> None:
    configure(nvim, tmp_path, agents={"gone": {"cmd": "no-such-agent-cmd"}}, default_agent="codex")
    only_git_on_path(nvim, tmp_path)
    nvim.api.command("checkhealth acp_nvim")
    warnings = [line for line in nvim.api.current.buffer[:] if "WARNING" in line]
    named = {line.split("WARNING ")[1].split(":")[0] for line in warnings if ": " in line}
    # The user's own agent and the default preset; no other preset.
    assert {"gone", "codex"} <= named and not named - {"gone", "codex", "codex-acp not found"}, warnings


def test_a_conflict_stays_known_through_typed_undo_and_redo(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """`u` takes the agent's merge back, `<C-r>` brings its markers back: the conflict is known again, and
    `:AcpConflict theirs` with the cursor in it takes the agent's side."""
    f = project / "u.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 31)))
    mine = [f"line {i}" if i not in (5, 25) else f"mine {i}" for i in range(1, 31)]
    theirs = "".join(f"line {i}\n" if i not in (5, 25) else f"agent {i}\n" for i in range(1, 31))
    agent.start([[{"write": {"path": str(f), "content": "new top\n" + theirs}}]], project)
    buf = open_edited(nvim, f, mine)
    agent.turn()
    merged = buf[:]
    assert merged[:5] == ["new top", "line 1", "line 2", "line 3", "line 4"]
    assert merged[5:10] == conflict(["mine 5"], ["agent 5"])
    known = conflicts_of(nvim, buf)
    assert known == [(6, 10), (30, 34)]
    nvim.api.input("u")
    nvim.wait("vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'line 1'")
    assert conflicts_of(nvim, buf) == []
    nvim.api.input("<C-r>")
    nvim.wait("vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == 'new top'")
    assert buf[:] == merged
    assert conflicts_of(nvim, buf) == known
    nvim.api.current.window.cursor = (32, 0)
    nvim.api.command("AcpConflict theirs")
    assert buf[29:31] == ["agent 25", "line 26"]
    assert conflicts_of(nvim, buf) == [(6, 10)]
    assert not [n for n in nvim.notes() if "no agent merge conflict" in n["msg"]]


def test_checkhealth_checks_the_attention_command(nvim: Nvim, tmp_path: Path) -> None:
    configure(nvim, tmp_path, attention={"notify": "command", "command": ["no-such-notifier", "-a"]})
    nvim.wait_configured()
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "WARNING attention.command: no-such-notifier not found" in report, report
    configure(nvim, tmp_path, attention={"notify": "command", "command": [sys.executable]})
    nvim.wait_configured()
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert f"OK attention: runs {sys.executable}" in report, report

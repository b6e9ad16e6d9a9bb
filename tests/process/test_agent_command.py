"""Which executable and arguments start a preset's agent (client/agent/command.py), on real files in a temp
dir."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from acp_nvim.client.agent.command import OlderArgs, resolve
from acp_nvim.client.agent.process import AgentCommand, AgentNotFound

OLDER = OlderArgs(before="0.33.0", args=["--experimental-acp"], package="@google/gemini-cli")


def executable(path: Path, body: str = "exit 0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def command(name: str, bin_dir: Path, *args: str) -> AgentCommand:
    return AgentCommand(command=name, args=list(args), env={"PATH": str(bin_dir)})


def test_the_first_installed_fallback(tmp_path: Path) -> None:
    executable(tmp_path / "claude-code-acp")
    chosen = anyio.run(resolve, command("claude-agent-acp", tmp_path), ["other", "claude-code-acp"])
    assert chosen.command == "claude-code-acp"


def test_none_installed_names_the_current_command(tmp_path: Path) -> None:
    with pytest.raises(AgentNotFound, match="agent command not found: claude-agent-acp"):
        anyio.run(resolve, command("claude-agent-acp", tmp_path), ["claude-code-acp"])


@pytest.mark.parametrize(("version", "args"), [("0.32.9", ["--experimental-acp"]), ("0.33.0", ["--acp"])])
def test_version_from_the_npm_package(tmp_path: Path, version: str, args: list[str]) -> None:
    package = tmp_path / "lib" / "@google" / "gemini-cli"
    (package / "bundle").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@google/gemini-cli", "version": version}))
    entry = executable(package / "bundle" / "gemini.js")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "gemini").symlink_to(entry)
    chosen = anyio.run(resolve, command("gemini", tmp_path / "bin", "--acp"), [], OLDER)
    assert chosen.args == args


def test_version_asked_once_per_installed_version(tmp_path: Path) -> None:
    asked = tmp_path / "asked"
    executable(tmp_path / "gemini", f'echo x >> {asked}; echo "gemini 0.30.1"')
    for _ in range(3):
        chosen = anyio.run(resolve, command("gemini", tmp_path, "--acp"), [], OLDER)
        assert chosen.args == ["--experimental-acp"]
    assert asked.read_text() == "x\n"


def test_an_unknown_version_keeps_the_current_arguments(tmp_path: Path) -> None:
    executable(tmp_path / "gemini", "echo no version here")
    chosen = anyio.run(resolve, command("gemini", tmp_path, "--acp"), [], OLDER)
    assert chosen.args == ["--acp"]

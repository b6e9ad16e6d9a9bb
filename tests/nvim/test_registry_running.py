"""An installed registry agent that runs keeps its files: `:AcpAgents remove` asks to stop it first, and an
update keeps the version it replaces while a run uses it. A real running agent (the plugin's demo agent
behind a launcher, installed from a registry served on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.nvim.conftest import Nvim
from tests.nvim.test_registry import (
    add_archive,
    data_dir,
    infos,
    publish,
    start_installed,
    wait_note,
)
from tests.registry_fixtures import Routes, Served, binary_agent, launcher_members, serve, sha256, tar_gz


@pytest.fixture
def served() -> Iterator[Served]:
    with serve(Routes()) as server:
        yield server


def status_state(nvim: Nvim) -> str:
    return nvim.lua("return require('acp_nvim').status().state")  # type: ignore[no-any-return]


def test_removing_a_running_agent_asks_to_stop_it_first(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    installed = start_installed(nvim, tmp_path, served)
    launcher = installed / "bin" / "demo-agent"
    # The question left unanswered (<Esc>): nothing is removed, the agent goes on.
    nvim.api.command("AcpAgents remove tiny-agent")
    wait_note(nvim, "tiny-agent was not removed: it is running (tiny-agent)")
    (asked,) = nvim.lua("return acp_test.selects")
    assert asked["prompt"] == "tiny-agent is running (tiny-agent): stop it to remove it?"
    assert asked["items"] == ["stop tiny-agent and remove tiny-agent", "keep it"]
    assert launcher.is_file() and status_state(nvim) == "ready"
    # "keep it": the same.
    nvim.lua("acp_test.answers = { 'keep' }")
    nvim.api.command("AcpAgents remove tiny-agent")
    nvim.wait("#acp_test.selects == 2")
    assert launcher.is_file() and status_state(nvim) == "ready"
    # Stopped first, then removed; its chat says why its session ended.
    nvim.lua("acp_test.answers = { 'stop' }")
    nvim.api.command("AcpAgents remove tiny-agent")
    wait_note(nvim, "removed tiny-agent 1.0.0")
    nvim.wait_state("stopped")
    nvim.wait_chat("was stopped: tiny-agent is removed")
    assert not (data_dir() / "tiny-agent").exists()
    assert nvim.errors() == []


def test_a_stopped_agent_is_removed_without_a_question(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    start_installed(nvim, tmp_path, served)
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    nvim.api.command("AcpAgents remove tiny-agent")
    wait_note(nvim, "removed tiny-agent 1.0.0")
    assert nvim.lua("return acp_test.selects") == []
    assert not (data_dir() / "tiny-agent").exists()


def test_an_update_keeps_the_version_a_running_agent_runs(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    old = start_installed(nvim, tmp_path, served)
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny-2.0.0.tar.gz", archive)
    publish(served, binary_agent("tiny-agent", "2.0.0", url, digest=sha256(archive)))
    nvim.api.command("AcpAgents update tiny-agent")
    wait_note(nvim, "tiny-agent 1.0.0 is kept while it runs")
    new = data_dir() / "tiny-agent" / "2.0.0"
    assert (new / "bin" / "demo-agent").is_file()
    assert (old / "bin" / "demo-agent").is_file() and status_state(nvim) == "ready"
    assert not [text for text in infos(nvim) if "updated tiny-agent" in text]
    # Its next start runs 2.0.0, and 1.0.0, no longer run, goes.
    nvim.api.command("AcpRestart")
    nvim.wait_chat("acp.nvim demo agent restarted", 30)
    nvim.wait_state("ready", 30)
    wait_note(nvim, "removed tiny-agent 1.0.0 (replaced by 2.0.0)")
    assert not old.exists() and (new / "bin" / "demo-agent").is_file()
    assert nvim.errors() == []

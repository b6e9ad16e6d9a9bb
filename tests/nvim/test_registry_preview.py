"""Issue 29: the ACP Registry's preview channel, chosen per agent (`opts.registry.preview`), and the
package's `cmd` of npx/uvx distributions. Offline: the list is a local file naming a local npm package (npx
runs a folder offline), whose executables say which of them ran; or a list served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Nvim
from tests.nvim.test_registry import add_archive, data_dir, publish, setup, stop, wait_note
from tests.registry_fixtures import (
    Routes,
    Served,
    binary_agent,
    launcher_members,
    marking_npx_package,
    package_agent,
    registry,
    serve,
    sha256,
    tar_gz,
)


@pytest.fixture
def served() -> Iterator[Served]:
    with serve(Routes()) as server:
        yield server


def with_preview(entry: dict[str, Any], runner: str, package: str, env: dict[str, str]) -> dict[str, Any]:
    distribution = {runner: {"package": package, "cmd": "preview-agent", "env": env}}
    return {**entry, "preview": {"version": "3.1.0-preview.1", "distribution": distribution}}


def test_an_agent_chosen_for_its_preview_runs_it_and_the_others_their_stable_version(
    nvim: Nvim, tmp_path: Path
) -> None:
    package = str(marking_npx_package(tmp_path / "package"))
    npm = {"npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_update_notifier": "false"}
    agents = []
    for agent_id in ("chosen-agent", "other-agent"):
        env = {**npm, "ACP_TEST_MARK": str(tmp_path / f"{agent_id}.ran")}
        agents.append(with_preview(package_agent(agent_id, "npx", package, env), "npx", package, env))
    listing = tmp_path / "registry.json"
    listing.write_bytes(registry(*agents))
    setup(nvim, tmp_path, "", registry={"url": str(listing), "preview": ["chosen-agent"]})
    nvim.lua("acp_test.answers = {}")
    nvim.api.command("AcpStart")
    nvim.wait("#acp_test.selects == 1")
    items = nvim.lua("return acp_test.selects[1].items")
    assert (
        "chosen-agent  Test chosen-agent 3.1.0-preview.1 — the demo agent through npx  [npx, preview]"
        in items
    )
    assert "other-agent  Test other-agent 3.0.0 — the demo agent through npx  [npx]" in items
    # The preview's package, run through the executable its `cmd` names (npx --package PKG preview-agent).
    nvim.api.command("AcpStart chosen-agent")
    nvim.wait_state("ready", 60)
    assert (tmp_path / "chosen-agent.ran").read_text() == "preview\n"
    stop(nvim)
    # Not chosen: the stable entry, its package's default executable.
    nvim.api.command("AcpStart other-agent")
    nvim.wait_state("ready", 60)
    assert (tmp_path / "other-agent.ran").read_text() == "stable\n"
    stop(nvim)
    # Chosen no more: the stable version again.
    setup(nvim, tmp_path, "", registry={"url": str(listing)})
    nvim.api.command("AcpStart chosen-agent")
    nvim.wait_state("ready", 60)
    assert (tmp_path / "chosen-agent.ran").read_text() == "preview\nstable\n"
    assert not nvim.errors()


def test_an_installed_stable_binary_stays_beside_the_preview(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    """The format has no binary previews: an installed binary is of the stable channel. With the preview
    chosen, :AcpAgents says so and offers the preview's version; updating keeps the install."""
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny-1.0.0.tar.gz", archive)
    entry = binary_agent("tiny-agent", "1.0.0", url, digest=sha256(archive))
    publish(served, with_preview(entry, "npx", "@acp-test/tiny-agent@3.1.0-preview.1", {}))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    stop(nvim)
    installed = data_dir() / "tiny-agent" / "1.0.0"
    assert installed.is_dir()
    setup(nvim, tmp_path, "", registry={"url": served.url("/registry.json"), "preview": ["tiny-agent"]})
    nvim.lua("acp_test.answers = { 'tiny-agent', 'update' }")
    nvim.api.command("AcpAgents")
    wait_note(nvim, "nothing to update")
    selects = nvim.lua("return acp_test.selects")
    (label,) = selects[0]["items"]
    assert label == (
        f"tiny-agent  Test tiny-agent 1.0.0 (stable)  ({installed})  newer: 3.1.0-preview.1 (preview)"
    ), label
    assert selects[1]["items"] == ["update to 3.1.0-preview.1 (preview)", "remove"]
    notes = [n["msg"] for n in nvim.notes()]
    assert (
        "acp.nvim: tiny-agent runs with npx on its preview channel, pinned to 3.1.0-preview.1: nothing to"
        " update (the installed 1.0.0 is kept)"
    ) in notes, notes
    assert (installed / "bin" / "demo-agent").is_file()

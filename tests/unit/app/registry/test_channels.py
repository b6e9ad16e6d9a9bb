"""The release channel a registry agent runs: the stable entry, or its preview where the user opted in and
the preview is newer (the format's "Highest of both channels wins")."""

from __future__ import annotations

from typing import Any

import pytest

from acp_nvim.app.registry import channels
from acp_nvim.app.registry import entries as acp_registry
from acp_nvim.app.registry.entries import PackagePlan
from tests.registry_fixtures import binary_agent, registry


def entry(version: str, preview: dict[str, Any] | None) -> acp_registry.RegistryAgent:
    raw = binary_agent("codex-acp", version, "https://e/a.tar.gz", platform="linux-x86_64")
    if preview is not None:
        raw["preview"] = preview
    (agent,) = acp_registry.decode(registry(raw)).agents
    return agent


def preview(version: str) -> dict[str, Any]:
    return {"version": version, "distribution": {"npx": {"package": f"@x/codex-acp@{version}", "cmd": "cx"}}}


@pytest.mark.parametrize(
    "lower,higher",
    [
        ("1.8.0", "1.9.0-preview.1"),
        ("1.9.0-preview.1", "1.9.0"),
        ("1.9.0-preview.2", "1.9.0-preview.10"),
        ("1.9.0-preview.9", "1.9.0-preview.a"),
        ("1.9.0-preview", "1.9.0-preview.1"),
        ("1.9.0", "1.9.1"),
        ("1.9.9", "1.10.0"),
        ("1.0.0-rc.1", "1.0.0+build.5"),
    ],
)
def test_versions_compare_by_semver_precedence(lower: str, higher: str) -> None:
    assert channels.newer(higher, lower) and not channels.newer(lower, higher)


def test_the_build_does_not_make_a_version_newer() -> None:
    assert not channels.newer("1.0.0+build.2", "1.0.0+build.1")


def test_the_preview_runs_only_where_chosen_and_newer() -> None:
    agent = entry("1.8.0", preview("1.9.0-preview.1"))
    # Not chosen: the stable entry, its binary.
    assert channels.offered(agent, channels.STABLE) is agent
    assert not channels.on_preview(agent, channels.STABLE)
    assert isinstance(acp_registry.plan(agent, "linux-x86_64"), acp_registry.BinaryPlan)
    # Chosen: the preview's version and distribution, the rest of the entry shared.
    chosen = channels.offered(agent, channels.PREVIEW)
    assert channels.on_preview(agent, channels.PREVIEW)
    assert (chosen.id, chosen.name, chosen.version) == ("codex-acp", agent.name, "1.9.0-preview.1")
    assert chosen.distribution.binary is None
    plan = acp_registry.plan(chosen, "linux-x86_64")
    assert plan == PackagePlan(
        runner="npx",
        argv=["--yes", "--package", "@x/codex-acp@1.9.0-preview.1", "cx"],
        env={},
        install_hint=plan.install_hint if plan else "",
    )


@pytest.mark.parametrize("stable,previewed", [("1.9.1", "1.9.0-preview.1"), ("1.9.1", "1.9.1")])
def test_a_preview_not_newer_than_the_stable_version_is_not_offered(stable: str, previewed: str) -> None:
    agent = entry(stable, preview(previewed))
    assert channels.offered(agent, channels.PREVIEW) is agent


def test_an_agent_without_a_preview_runs_its_stable_version_on_either_channel() -> None:
    agent = entry("1.8.0", None)
    assert channels.offered(agent, channels.PREVIEW) is agent

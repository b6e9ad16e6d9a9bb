"""Agents from the ACP Registry, as a user sees them: offered by :AcpStart, installed, started, updated and
removed, refused when their archive is malicious. Everything offline: a test registry and archives served
on 127.0.0.1 (tests/registry_fixtures.py); the binary agent is the plugin's demo agent behind a launcher."""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.app.registry.entries import this_platform
from bench.harness import wait_until
from tests.nvim.agent_io import SCRIPTED
from tests.nvim.conftest import Nvim, help_tags, setup_opts
from tests.registry_fixtures import (
    Member,
    Routes,
    Served,
    binary_agent,
    elsewhere,
    launcher_members,
    npx_package,
    package_agent,
    registry,
    serve,
    sha256,
    tar_gz,
    zip_bytes,
)


@pytest.fixture
def served() -> Iterator[Served]:
    with serve(Routes()) as server:
        yield server


def data_dir() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "nvim" / "acp_nvim" / "agents"


def cache_file() -> Path:
    return Path(os.environ["XDG_CACHE_HOME"]) / "nvim" / "acp_nvim" / "registry.json"


def publish(served: Served, *agents: dict[str, Any]) -> None:
    served.routes.files["/registry.json"] = registry(*agents)


def add_archive(served: Served, name: str, data: bytes) -> str:
    served.routes.files[f"/{name}"] = data
    return served.url(f"/{name}")


def setup(nvim: Nvim, tmp_path: Path, url: str, **extra: Any) -> None:
    extra.setdefault("registry", {"url": url, "max_age": 3600})
    opts = setup_opts(tmp_path, **extra)
    opts.pop("default_agent")
    assert nvim.lua("return require('acp_nvim').setup(...)", opts), nvim.notes()


def wait_note(nvim: Nvim, text: str, timeout: float = 30) -> None:
    nvim.wait(
        "#vim.tbl_filter(function(n) return n.msg:find(args[1], 1, true) end, acp_test.notes) > 0",
        timeout,
        text,
    )


def infos(nvim: Nvim) -> list[str]:
    return [n["msg"] for n in nvim.notes() if n.get("level") == 2]


def test_completion_offers_the_registry_agents(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    publish(served, binary_agent("tiny-agent", "1.0.0", served.url("/tiny.tar.gz")))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")
    nvim.wait("vim.tbl_contains(vim.fn.getcompletion('AcpStart ', 'cmdline'), 'tiny-agent')")
    names = nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")
    assert {"ts", "demo", "claude", "tiny-agent"} <= set(names)
    assert nvim.lua("return vim.fn.getcompletion('AcpStart tin', 'cmdline')") == ["tiny-agent"]
    # Fetched once and cached with its fetch time.
    assert cache_file().is_file()


@pytest.mark.parametrize("packer,suffix", [(tar_gz, "tar.gz"), (zip_bytes, "zip")])
def test_a_binary_agent_is_installed_and_started(
    nvim: Nvim, tmp_path: Path, served: Served, packer: Any, suffix: str
) -> None:
    archive = packer(launcher_members())
    url = add_archive(served, f"tiny.{suffix}", archive)
    publish(served, binary_agent("tiny-agent", "1.0.0", url, digest=sha256(archive)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    assert nvim.lua("return require('acp_nvim.ui.status').get().agent_name") == "tiny-agent"
    folder = data_dir() / "tiny-agent" / "1.0.0"
    assert (folder / "bin" / "demo-agent").is_file()
    assert any("installed Test tiny-agent 1.0.0" in text for text in infos(nvim)), nvim.notes()
    assert not nvim.errors()


def start_installed(nvim: Nvim, tmp_path: Path, served: Served, version: str = "1.0.0", **opts: Any) -> Path:
    archive = tar_gz(launcher_members())
    url = add_archive(served, f"tiny-{version}.tar.gz", archive)
    publish(served, binary_agent("tiny-agent", version, url, digest=sha256(archive)))
    setup(nvim, tmp_path, served.url("/registry.json"), **opts)
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    return data_dir() / "tiny-agent" / version


def stop(nvim: Nvim) -> None:
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")


def test_an_installed_agent_starts_offline_from_the_cache(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    """Installed, then the network goes: the cached list and the installed version start it; the failed
    refresh of a stale cache says why once."""
    start_installed(nvim, tmp_path, served, registry={"url": served.url("/registry.json"), "max_age": 0})
    stop(nvim)
    served.routes.files.clear()
    hits = len(served.routes.hits)
    for _ in range(2):
        nvim.api.command("AcpStart tiny-agent")
        nvim.wait_state("ready", 30)
        stop(nvim)
    # Only the registry was asked for (a stale cache is refreshed), never the archive again.
    assert set(served.routes.hits[hits:]) == {"/registry.json"}
    wait_note(nvim, "HTTP 404")
    warnings = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert len(warnings) == 1 and "using the list fetched before" in warnings[0], warnings
    assert not nvim.errors()


def test_start_without_a_name_offers_configured_and_registry_agents(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny.tar.gz", archive)
    publish(
        served,
        binary_agent("tiny-agent", "1.0.0", url),
        binary_agent("far-agent", "2.1.0", url, platform=elsewhere()),
    )
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.lua("acp_test.answers = { 'tiny-agent' }")
    nvim.api.command("AcpStart")
    nvim.wait_state("ready", 30)
    (picker,) = nvim.lua("return acp_test.selects")
    assert picker["prompt"] == "Start an agent"
    items = picker["items"]
    assert "ts  (configured)" in items and "demo  (configured)" in items
    assert "tiny-agent  Test tiny-agent 1.0.0 — the demo agent as tiny-agent  [binary]" in items
    far = next(item for item in items if item.startswith("far-agent"))
    assert far.endswith(f"[binary, not available for {this_platform()}]"), far
    stop(nvim)
    # Now marked installed.
    nvim.lua("acp_test.answers = {}")
    nvim.api.command("AcpStart")
    nvim.wait("#acp_test.selects == 2")
    items = nvim.lua("return acp_test.selects[2].items")
    assert "tiny-agent  Test tiny-agent 1.0.0 — the demo agent as tiny-agent  [binary, installed]" in items


def test_a_configured_agent_of_the_same_name_wins(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    archive = tar_gz(launcher_members())
    publish(served, binary_agent("ts", "1.0.0", add_archive(served, "ts.tar.gz", archive)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart ts")
    nvim.wait_state("ready", 30)
    assert "/ts.tar.gz" not in served.routes.hits
    assert not (data_dir() / "ts").exists()


def test_update_and_remove(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    old = start_installed(nvim, tmp_path, served)
    stop(nvim)
    nvim.api.command("AcpAgents update tiny-agent")
    wait_note(nvim, "up to date")
    # A new version in the registry.
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny-2.0.0.tar.gz", archive)
    publish(served, binary_agent("tiny-agent", "2.0.0", url, digest=sha256(archive)))
    nvim.api.command("AcpAgents update tiny-agent")
    wait_note(nvim, "updated tiny-agent")
    assert "acp.nvim: updated tiny-agent from 1.0.0 to 2.0.0" in infos(nvim)
    new = data_dir() / "tiny-agent" / "2.0.0"
    assert (new / "bin" / "demo-agent").is_file() and not old.exists()
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    stop(nvim)
    # :AcpAgents alone: the installed agents, then what to do with the one chosen.
    nvim.lua("acp_test.answers = { 'tiny-agent', 'remove' }")
    nvim.api.command("AcpAgents")
    wait_note(nvim, "removed tiny-agent")
    selects = nvim.lua("return acp_test.selects")
    assert selects[0]["prompt"] == "Installed agents"
    assert selects[0]["items"][0].startswith("tiny-agent  Test tiny-agent 2.0.0")
    assert selects[1]["items"] == ["update", "remove"]
    assert not (data_dir() / "tiny-agent").exists()
    nvim.api.command("AcpAgents")
    wait_note(nvim, "no registry agent is installed")


def test_agents_says_when_an_installed_agent_has_a_newer_version(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    """Issue 29: `:AcpAgents` marks an installed agent the registry has a newer version of (from the list at
    hand, never waiting on the network) and offers the update to it; an agent up to date is not marked."""
    start_installed(nvim, tmp_path, served, registry={"url": served.url("/registry.json"), "max_age": 0})
    stop(nvim)
    nvim.api.command("AcpAgents")
    wait_until(lambda: len(nvim.lua("return acp_test.selects")) == 1, 10, "the picker")
    (up_to_date,) = nvim.lua("return acp_test.selects")[0]["items"]
    assert up_to_date.startswith("tiny-agent  Test tiny-agent 1.0.0") and "newer" not in up_to_date
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny-2.0.0.tar.gz", archive)
    publish(served, binary_agent("tiny-agent", "2.0.0", url, digest=sha256(archive)))
    # The stale list is fetched again behind the picker: the next one knows of 2.0.0.
    nvim.api.command("AcpAgents")
    wait_until(lambda: b'"2.0.0"' in cache_file().read_bytes(), 10, "the refreshed cache")
    nvim.lua("acp_test.answers = { 'tiny-agent' }")
    nvim.api.command("AcpAgents")
    wait_until(lambda: len(nvim.lua("return acp_test.selects")) == 4, 10, "the pickers")
    selects = nvim.lua("return acp_test.selects")
    (item,) = selects[2]["items"]
    assert item.startswith("tiny-agent  Test tiny-agent 1.0.0") and item.endswith("  newer: 2.0.0"), item
    assert selects[3]["items"] == ["update to 2.0.0", "remove"]
    assert nvim.errors() == []


def outside_marker(tmp_path: Path) -> Path:
    return tmp_path / "outside" / "escaped.txt"


def malicious(tmp_path: Path) -> dict[str, tuple[list[Member], str]]:
    """Archives that try to write outside the agent's folder, and the refusal each gets."""
    target = outside_marker(tmp_path)
    return {
        "dotdot": (
            [*launcher_members(), Member("../../../../escaped.txt", b"x")],
            "leaves the agent's folder (../../../../escaped.txt)",
        ),
        "absolute": ([*launcher_members(), Member(str(target), b"x")], f"has an absolute path ({target})"),
        "symlink": (
            [*launcher_members(), Member("bin/out", kind="symlink", link=str(target.parent))],
            f"links to an absolute path ({target.parent})",
        ),
        "relative-symlink": (
            [*launcher_members(), Member("bin/out", kind="symlink", link="../../../../../outside")],
            "links outside the agent's folder (../../../../../outside)",
        ),
    }


CASES = [
    (kind, packer)
    for kind in ("dotdot", "absolute", "symlink", "relative-symlink")
    for packer in ("tar.gz", "zip")
] + [("hardlink", "tar.gz")]


def assert_nothing_written(tmp_path: Path, agent_id: str) -> None:
    assert not outside_marker(tmp_path).exists()
    assert not list(Path(os.environ["XDG_DATA_HOME"]).rglob("escaped.txt"))
    leftovers = list((data_dir() / agent_id).iterdir()) if (data_dir() / agent_id).exists() else []
    assert leftovers == [], leftovers


def refused_install(nvim: Nvim, agent_id: str, why: str) -> str:
    """`:AcpStart {agent_id}` of version 1.0.0 fails to install, for `why`: the one error shown."""
    nvim.api.command(f"AcpStart {agent_id}")
    nvim.wait_state("error", 30)
    (message,) = nvim.errors()
    assert message.startswith(f"acp.nvim: {agent_id}: Test {agent_id} 1.0.0 was not installed: {why}")
    return message


@pytest.mark.parametrize("kind,packer", CASES)
def test_a_malicious_archive_is_refused(
    nvim: Nvim, tmp_path: Path, served: Served, kind: str, packer: str
) -> None:
    outside_marker(tmp_path).parent.mkdir()
    if kind == "hardlink":
        members = [*launcher_members(), Member("bin/hard", kind="hardlink", link="../../outside/escaped.txt")]
        expected = "leaves the agent's folder (../../outside/escaped.txt)"
    else:
        members, expected = malicious(tmp_path)[kind]
    data = tar_gz(members) if packer == "tar.gz" else zip_bytes(members)
    publish(served, binary_agent("evil-agent", "1.0.0", add_archive(served, f"evil.{packer}", data)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    message = refused_install(nvim, "evil-agent", "refusing the archive:")
    assert expected in message, message
    assert_nothing_written(tmp_path, "evil-agent")


def test_a_truncated_download_or_a_bad_checksum_leaves_nothing_runnable(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    archive = tar_gz(launcher_members())
    url = add_archive(served, "cut.tar.gz", archive)
    served.routes.truncated.add("/cut.tar.gz")
    bad = add_archive(served, "bad.tar.gz", archive)
    publish(
        served,
        binary_agent("cut-agent", "1.0.0", url),
        binary_agent("bad-agent", "1.0.0", bad, digest="0" * 64),
    )
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart cut-agent")
    nvim.wait_state("error", 30)
    assert "was cut short" in nvim.errors()[-1], nvim.errors()
    assert_nothing_written(tmp_path, "cut-agent")
    nvim.api.command("AcpStart bad-agent")
    nvim.wait("#acp_test.notes >= 2 and require('acp_nvim').status().state == 'error'", 30)
    wait_note(nvim, "checksum")
    message = nvim.errors()[-1]
    assert f"checksum mismatch for {bad}: expected sha256 {'0' * 64}, got {sha256(archive)}" in message
    assert_nothing_written(tmp_path, "bad-agent")
    # Served whole and without a checksum, it installs.
    served.routes.truncated.clear()
    nvim.api.command("AcpStart cut-agent")
    nvim.wait_state("ready", 30)


@pytest.mark.parametrize(
    "body,expected",
    [
        (b"<html>not json</html>", "ACP Registry: the registry is not JSON"),
        (
            b'{"version": "1.0.0", "agents": [{"id": "x", "name": "X", "version": "1.0.0"}]}',
            "ACP Registry: the registry does not match the ACP Registry format: agents[0] (x): Object missing"
            " required field `description`",
        ),
    ],
)
def test_a_broken_registry_is_reported(
    nvim: Nvim, tmp_path: Path, served: Served, body: bytes, expected: str
) -> None:
    served.routes.files["/registry.json"] = body
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("error", 30)
    warnings = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert any(expected in w for w in warnings), nvim.notes()
    assert 'unknown agent "tiny-agent": the ACP Registry could not be read' in nvim.errors()[-1]
    assert not cache_file().exists()


def test_an_npx_agent_runs_through_npx(nvim: Nvim, tmp_path: Path) -> None:
    """The package a local folder (npx runs it offline): the list is a local file too, as a list from the
    network may not name this machine's files."""
    package = npx_package(tmp_path / "npx-agent")
    env = {"npm_config_cache": str(tmp_path / "npm-cache"), "npm_config_update_notifier": "false"}
    listing = tmp_path / "registry.json"
    listing.write_bytes(registry(package_agent("npx-agent", "npx", str(package), env)))
    setup(nvim, tmp_path, str(listing))
    nvim.lua("acp_test.answers = {}")
    nvim.api.command("AcpStart")
    nvim.wait("#acp_test.selects == 1")
    items = nvim.lua("return acp_test.selects[1].items")
    assert "npx-agent  Test npx-agent 3.0.0 — the demo agent through npx  [npx]" in items
    nvim.api.command("AcpStart npx-agent")
    nvim.wait_state("ready", 60)
    assert nvim.lua("return require('acp_nvim.ui.status').get().agent_name") == "npx-agent"
    # Nothing of ours installed: npx keeps its own cache.
    assert not (data_dir() / "npx-agent").exists()
    assert (tmp_path / "npm-cache").is_dir()


@pytest.mark.parametrize(
    "runner,hint",
    [
        ("uvx", "uvx comes with uv: install uv (https://docs.astral.sh/uv/)"),
        ("npx", "npx comes with Node.js: install Node.js (https://nodejs.org)"),
    ],
)
def test_a_missing_package_runner_is_named(
    nvim: Nvim, tmp_path: Path, served: Served, runner: str, hint: str
) -> None:
    publish(served, package_agent(f"{runner}-agent", runner, "acp-test-agent", {}))
    setup(nvim, tmp_path, served.url("/registry.json"))
    # The host starts with this PATH: neither runner on it.
    nvim.lua("vim.env.PATH = ...", str(tmp_path / "empty-bin"))
    nvim.api.command(f"AcpStart {runner}-agent")
    nvim.wait_state("error", 30)
    assert nvim.errors()[-1] == f"acp.nvim: {runner}-agent: {runner} not found — {hint}"


def test_a_registry_agent_logs_in_through_its_own_command(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    """Terminal login runs the installed agent's command with the method's arguments, as for any agent."""
    token, argv_log = tmp_path / "token", tmp_path / "argv.log"
    method = {"id": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"]}
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps(
            {"echo": False, "authRequired": True, "authMethods": [method], "login": {"tokenFile": str(token)}}
        )
    )
    script = (
        "#!/bin/sh\n"
        f'printf "%s\\n" "$ACP_TEST_FROM: $0 $*" >> {shlex.quote(str(argv_log))}\n'
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))} {shlex.quote(str(scenario))} "$@"\n'
    )
    archive = tar_gz(launcher_members(script))
    publish(served, binary_agent("login-agent", "1.0.0", add_archive(served, "login.tar.gz", archive)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.lua("acp_test.answers = { 'term' }")
    nvim.api.command("AcpStart login-agent")
    nvim.wait_state("ready", 30)
    assert token.read_text() == "token"
    executable = data_dir() / "login-agent" / "1.0.0" / "bin" / "demo-agent"
    # Each time with the registry's `env` for it.
    assert argv_log.read_text().splitlines() == [
        f"registry: {executable} ",
        f"registry: {executable} --login",
        f"registry: {executable} ",
    ]
    assert any("logged in to login-agent (Terminal login); restarting it" in n["msg"] for n in nvim.notes())


def test_checkhealth_shows_the_registry(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    start_installed(nvim, tmp_path, served)
    stop(nvim)
    url = served.url("/registry.json")
    assert nvim.lua(
        "return require('acp_nvim').setup(...)",
        {**setup_opts(tmp_path, registry={"url": url}), "default_agent": "tiny-agent"},
    )
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert f"URL: {url}" in report, report
    assert re.search(rf"OK 1 agents, fetched \d+ s ago \({re.escape(str(cache_file()))}\)", report), report
    assert "OK default agent tiny-agent 1.0.0 (binary): installed" in report, report
    assert "Default agent: tiny-agent" in report


def test_checkhealth_before_any_fetch_and_without_a_default(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert f"not fetched yet ({cache_file()})" in report, report
    assert "none: :AcpStart asks which agent to start" in report, report
    # :checkhealth reads the cache only: nothing was fetched.
    assert served.routes.hits == []


def test_restart_and_sessions_of_a_registry_agent(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    start_installed(nvim, tmp_path, served)
    nvim.api.command("AcpRestart")
    nvim.wait_chat("acp.nvim demo agent restarted", 30)
    nvim.wait_state("ready", 30)
    notes = len(nvim.notes())
    nvim.api.command("AcpSessions")
    nvim.wait("#acp_test.notes > args[1] or #acp_test.selects > 0", 15, notes)
    assert not [e for e in nvim.errors() if "unknown agent" in e], nvim.errors()


def test_a_broken_entry_is_left_out_with_a_warning(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    archive = tar_gz(launcher_members())
    good = binary_agent("tiny-agent", "1.0.0", add_archive(served, "tiny.tar.gz", archive))
    bad = {**binary_agent("bad-agent", "1.0.0", "https://example.com/x.zip"), "version": "latest"}
    publish(served, bad, good)
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.wait("vim.tbl_contains(vim.fn.getcompletion('AcpStart ', 'cmdline'), 'tiny-agent')")
    assert "bad-agent" not in nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")
    (warning,) = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert warning.startswith(
        "acp.nvim: ACP Registry: 1 entry left out, not in the format: agents[0] (bad-agent):"
    )
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)


def test_a_preset_not_installed_runs_the_registry_agent_of_its_name(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    """`goose` (a preset) is not installed here: the registry's `goose` runs. `demo` (a preset too) is
    installed: it runs, and the registry's archive of that name is never fetched."""
    archive = tar_gz(launcher_members())
    publish(
        served,
        binary_agent("goose", "1.0.0", add_archive(served, "goose.tar.gz", archive)),
        binary_agent("demo", "1.0.0", add_archive(served, "demo.tar.gz", archive)),
    )
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart goose")
    nvim.wait_state("ready", 30)
    assert (data_dir() / "goose" / "1.0.0" / "bin" / "demo-agent").is_file()
    stop(nvim)
    nvim.api.command("AcpStart demo")
    nvim.wait_state("ready", 30)
    assert "/demo.tar.gz" not in served.routes.hits
    assert not (data_dir() / "demo").exists()


def test_a_slow_registry_never_holds_neovim(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    archive = tar_gz(launcher_members())
    publish(served, binary_agent("tiny-agent", "1.0.0", add_archive(served, "tiny.tar.gz", archive)))
    release = threading.Event()
    served.routes.held["/registry.json"] = release
    setup(nvim, tmp_path, served.url("/registry.json"))
    try:
        began = time.monotonic()
        # Completion answers with the configured agents; the registry's come once it has been fetched.
        names = nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")
        assert "ts" in names and "tiny-agent" not in names
        nvim.api.command("AcpStart tiny-agent")
        assert nvim.state() == "starting"
        wait_note(nvim, f"fetching the ACP Registry from {served.url('/registry.json')}")
        assert time.monotonic() - began < 5
        assert nvim.state() == "starting"
    finally:
        release.set()
    nvim.wait_state("ready", 30)
    nvim.wait("vim.tbl_contains(vim.fn.getcompletion('AcpStart ', 'cmdline'), 'tiny-agent')")


def test_registry_options_are_validated(nvim: Nvim, tmp_path: Path) -> None:
    opts = setup_opts(tmp_path, registry={"url": 3, "max_age": "soon", "enable": True})
    # Named by the host, the options' owner (acp_nvim/app/config/options.py), once it runs.
    assert nvim.lua("return require('acp_nvim').setup(...)", opts) is True
    nvim.wait_configured()
    (message,) = nvim.errors()
    assert "`registry.url` must be a string, got number" in message
    assert "`registry.max_age` must be a number, got string" in message
    assert "unknown option `registry.enable`" in message


def test_a_registry_url_that_is_not_allowed_is_refused(nvim: Nvim, tmp_path: Path) -> None:
    setup(nvim, tmp_path, "http://example.com/registry.json")
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("error", 30)
    warning = next(n["msg"] for n in nvim.notes() if n.get("level") == 3)
    assert warning == (
        "acp.nvim: ACP Registry: refusing http://example.com/registry.json: plain http:// only for loopback"
        " addresses (use https://)"
    )
    assert 'unknown agent "tiny-agent": the ACP Registry could not be read' in nvim.errors()[-1]


def test_a_registry_from_a_local_path(nvim: Nvim, tmp_path: Path) -> None:
    """A team's own list, pinned in a file; its archive a file:// URL."""
    archive = tmp_path / "tiny.zip"
    archive.write_bytes(zip_bytes(launcher_members()))
    listing = tmp_path / "team-registry.json"
    listing.write_bytes(registry(binary_agent("team-agent", "1.0.0", archive.as_uri())))
    setup(nvim, tmp_path, str(listing))
    nvim.api.command("AcpStart team-agent")
    nvim.wait_state("ready", 30)
    assert (data_dir() / "team-agent" / "1.0.0" / "bin" / "demo-agent").is_file()


def test_an_installed_agent_starts_with_no_list_at_all(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    """The cache is gone and the registry unreachable: the installed version still starts."""
    start_installed(nvim, tmp_path, served)
    stop(nvim)
    served.routes.files.clear()
    cache_file().unlink()
    # Another URL: the host's list in memory is not for it.
    setup(nvim, tmp_path, served.url("/registry.json?v=2"))
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    assert any("HTTP 404" in n["msg"] for n in nvim.notes() if n.get("level") == 3), nvim.notes()


def test_a_large_download_shows_its_progress(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    archive = tar_gz([*launcher_members(), Member("data.bin", os.urandom(1024 * 1024))])
    publish(served, binary_agent("big-agent", "1.0.0", add_archive(served, "big.tar.gz", archive)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart big-agent")
    nvim.wait_state("ready", 30)
    size = f"{len(archive) / 1024 / 1024:.1f} MiB"
    progress = [text for text in infos(nvim) if "downloading" in text]
    assert progress == [f"acp.nvim: downloading Test big-agent 1.0.0: {p}% of {size}" for p in (25, 50, 75)]


def test_tab_on_the_command_line_completes_a_registry_id(nvim: Nvim, tmp_path: Path, served: Served) -> None:
    publish(served, binary_agent("tiny-agent", "1.0.0", served.url("/tiny.tar.gz")))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.input(":AcpStart tin<Tab>")
    # The first <Tab> asks the host; the list it fetches is there for the next one.
    wait_until(
        lambda: "tiny-agent" in (nvim.lua("return require('acp_nvim.ui.agents').ids") or []), 15, "ids"
    )
    nvim.api.input("<Tab>")
    wait_until(lambda: nvim.lua("return vim.fn.getcmdline()") == "AcpStart tiny-agent", 10, "completed")
    nvim.api.input("<Esc>")
    assert not nvim.errors() and nvim.lua("return vim.v.errmsg") == ""


def test_the_help_documents_the_registry(nvim: Nvim, tmp_path: Path) -> None:
    assert {":AcpAgents", "acp_nvim.registry", "acp_nvim-registry"} <= help_tags(nvim, tmp_path)


def test_a_start_after_the_registry_moved_on_installs_its_version(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    """With a stale cache the start goes on with what is installed and the list is refreshed behind; the
    next start runs the registry's new version, which replaces the old one."""
    old = start_installed(
        nvim, tmp_path, served, registry={"url": served.url("/registry.json"), "max_age": 0}
    )
    stop(nvim)
    archive = tar_gz(launcher_members())
    url = add_archive(served, "tiny-2.0.0.tar.gz", archive)
    publish(served, binary_agent("tiny-agent", "2.0.0", url, digest=sha256(archive)))
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    stop(nvim)
    # That start ran 1.0.0; the refresh behind it wrote the new list to the cache.
    assert (old / "bin" / "demo-agent").is_file()
    wait_until(lambda: b'"2.0.0"' in cache_file().read_bytes(), 10, "the refreshed cache")
    nvim.api.command("AcpStart tiny-agent")
    nvim.wait_state("ready", 30)
    wait_note(nvim, "updated tiny-agent from 1.0.0 to 2.0.0")
    assert (data_dir() / "tiny-agent" / "2.0.0").is_dir() and not old.exists()


def test_setup_again_with_another_registry_completes_its_agents(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    publish(served, binary_agent("tiny-agent", "1.0.0", served.url("/tiny.tar.gz")))
    served.routes.files["/other.json"] = registry(
        binary_agent("other-agent", "1.0.0", served.url("/o.tar.gz"))
    )
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.wait("vim.tbl_contains(vim.fn.getcompletion('AcpStart ', 'cmdline'), 'tiny-agent')")
    setup(nvim, tmp_path, served.url("/other.json"))
    nvim.wait("vim.tbl_contains(vim.fn.getcompletion('AcpStart ', 'cmdline'), 'other-agent')")
    assert "tiny-agent" not in nvim.lua("return vim.fn.getcompletion('AcpStart ', 'cmdline')")


def test_a_registry_from_the_network_may_not_point_at_local_files(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    archive = tmp_path / "local.tar.gz"
    archive.write_bytes(tar_gz(launcher_members()))
    publish(served, binary_agent("sly-agent", "1.0.0", archive.as_uri()))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart sly-agent")
    nvim.wait_state("error", 30)
    assert nvim.errors()[-1] == (
        f"acp.nvim: sly-agent: Test sly-agent 1.0.0: refusing the archive {archive.as_uri()}: a registry"
        " fetched over the network may not point at local files"
    )
    assert not (data_dir() / "sly-agent").exists()


@pytest.mark.parametrize("runner", ["npx", "uvx"])
def test_a_registry_from_the_network_may_not_run_a_local_package(
    nvim: Nvim, tmp_path: Path, served: Served, runner: str
) -> None:
    """npx and uvx take a folder as their package: from a list fetched over the network that would run
    this machine's files, as a file:// archive would."""
    package = npx_package(tmp_path / "npx-agent")
    publish(served, package_agent("sly-agent", runner, str(package), {}))
    setup(nvim, tmp_path, served.url("/registry.json"))
    nvim.api.command("AcpStart sly-agent")
    nvim.wait_state("error", 30)
    assert nvim.errors()[-1] == (
        f"acp.nvim: sly-agent: Test sly-agent 3.0.0: refusing the package '{package}': a registry"
        " fetched over the network may not point at local files"
    )


def test_without_a_default_agent_the_host_asks_or_says_there_is_none(nvim: Nvim, tmp_path: Path) -> None:
    """No default agent (the registry disabled here): :AcpStart offers the configured agents, and a picker
    left unanswered leaves no start behind; :AcpRestart and :AcpSessions say there is no agent."""
    opts = setup_opts(tmp_path)
    opts.pop("default_agent")
    assert nvim.lua("return require('acp_nvim').setup(...)", opts)
    nvim.lua("acp_test.answers = {}")
    nvim.api.command("AcpStart")
    nvim.wait("#acp_test.selects == 1")
    items = nvim.lua("return acp_test.selects[1].items")
    assert "ts  (configured)" in items and "demo  (configured)" in items
    assert all(item.endswith("(configured)") for item in items), items
    nvim.wait_state("stopped")
    nvim.api.command("AcpRestart")
    wait_note(nvim, "acp.nvim: no agent to restart: start one with :AcpStart")
    nvim.wait_state("stopped")
    nvim.api.command("AcpSessions")
    wait_note(nvim, "acp.nvim: no agent: start one with :AcpStart (or set opts.default_agent)")
    assert not nvim.errors()


def a_folder_of_the_user(tmp_path: Path) -> Path:
    folder = tmp_path / "users-folder"
    folder.mkdir()
    (folder / "work.txt").write_text("a day's work")
    return folder


def assert_survives(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["work.txt"]
    assert (folder / "work.txt").read_text() == "a day's work"


def test_a_hostile_registry_cannot_touch_a_folder_outside_the_agents_folder(
    nvim: Nvim, tmp_path: Path
) -> None:
    """A version that is a path (`1.0.0/../../…/users-folder`) once had that folder removed before any
    download; the entry is left out, named, and the folder survives."""
    victim = a_folder_of_the_user(tmp_path)
    archive = tmp_path / "tiny.zip"
    archive.write_bytes(zip_bytes(launcher_members()))
    climb = os.path.relpath(victim, data_dir() / "evil-agent")
    evil = {**binary_agent("evil-agent", "1.0.0", archive.as_uri()), "version": f"1.0.0/../{climb}"}
    listing = tmp_path / "hostile-registry.json"
    listing.write_bytes(registry(evil, binary_agent("team-agent", "1.0.0", archive.as_uri())))
    setup(nvim, tmp_path, str(listing))
    nvim.api.command("AcpStart evil-agent")
    nvim.wait_state("error", 30)
    assert 'unknown agent "evil-agent": not configured and not in the ACP Registry' in nvim.errors()[-1]
    (warning,) = [n["msg"] for n in nvim.notes() if n.get("level") == 3]
    assert warning.startswith(
        f"acp.nvim: ACP Registry: 1 entry left out, not in the format: agents[0] (evil-agent): version"
        f" '1.0.0/../{climb}' is not MAJOR.MINOR.PATCH"
    ), warning
    assert_survives(victim)
    assert not (data_dir() / "evil-agent").exists()
    # The rest of the list is intact.
    nvim.api.command("AcpStart team-agent")
    nvim.wait_state("ready", 30)
    assert_survives(victim)


def test_a_linked_agent_folder_is_refused_and_a_path_is_no_id(
    nvim: Nvim, tmp_path: Path, served: Served
) -> None:
    """`agents/tiny-agent` a link to the user's folder: the install is refused, not written through it;
    `:AcpAgents remove ../x` names no folder."""
    victim = a_folder_of_the_user(tmp_path)
    data_dir().mkdir(parents=True)
    (data_dir() / "tiny-agent").symlink_to(victim)
    archive = tar_gz(launcher_members())
    publish(served, binary_agent("tiny-agent", "1.0.0", add_archive(served, "tiny.tar.gz", archive)))
    setup(nvim, tmp_path, served.url("/registry.json"))
    message = refused_install(nvim, "tiny-agent", "refusing to touch")
    assert f"tiny-agent is a link (to {victim})" in message, message
    assert_survives(victim)
    empty = tmp_path / "empty"
    empty.mkdir()
    climb = os.path.relpath(empty, data_dir())
    nvim.api.command(f"AcpAgents remove {climb}")
    wait_note(nvim, "is not a registry agent id")
    assert nvim.errors()[-1] == f"acp.nvim: '{climb}' is not a registry agent id"
    assert empty.is_dir()
    nvim.api.command("AcpAgents remove tiny-agent")
    wait_note(nvim, "tiny-agent is not installed")
    assert_survives(victim)

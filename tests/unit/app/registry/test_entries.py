"""The registry's model, platform selection and launch plans; URL rules and downloads; the cache."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from acp_nvim.app.registry import cache as registry_cache
from acp_nvim.app.registry import downloads
from acp_nvim.app.registry import entries as acp_registry
from acp_nvim.app.registry.entries import BinaryPlan, PackagePlan, RegistryError
from tests.registry_fixtures import Routes, binary_agent, package_agent, registry, serve


def test_a_registry_decodes_and_ignores_fields_it_does_not_know() -> None:
    entry = binary_agent("tiny-agent", "1.2.3", "https://example.com/a.tar.gz", platform="linux-x86_64")
    entry["icon"] = "./icon.svg"
    entry["distribution"]["binary"]["linux-x86_64"]["future"] = True
    decoded = acp_registry.decode(registry(entry))
    agent = decoded.find("tiny-agent")
    assert agent is not None and agent.version == "1.2.3"
    assert decoded.find("other") is None


@pytest.mark.parametrize(
    "data,message",
    [
        (b"<html>", "the registry is not JSON: "),
        (b"", "the registry is not JSON"),
        (b"[]", "the registry does not match the ACP Registry format: Expected `object`, got `array`"),
        (b'{"version": "1.0.0"}', "Object missing required field `agents`"),
        (
            json.dumps(
                {
                    "version": "1",
                    "agents": [
                        {
                            "id": "Bad Id",
                            "name": "x",
                            "version": "1.0.0",
                            "description": "d",
                            "distribution": {},
                        }
                    ],
                }
            ).encode(),
            "agents[0] (Bad Id): Expected `str` matching regex '^[a-z][a-z0-9-]*$' - at `$.id`",
        ),
        (
            registry(binary_agent("a", "1.0.0", "https://e/a.zip", digest="xyz", platform="linux-x86_64")),
            "agents[0] (a): Expected `str` matching regex '^[0-9a-fA-F]{64}$'"
            " - at `$.distribution.binary[...].sha256`",
        ),
    ],
)
def test_a_broken_registry_says_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(RegistryError) as err:
        acp_registry.decode(data)
    assert message in str(err.value)


@pytest.mark.parametrize(
    "system,machine,expected",
    [
        ("Linux", "x86_64", "linux-x86_64"),
        ("Linux", "aarch64", "linux-aarch64"),
        ("Darwin", "arm64", "darwin-aarch64"),
        ("Windows", "AMD64", "windows-x86_64"),
    ],
)
def test_this_platform(system: str, machine: str, expected: str) -> None:
    assert acp_registry.this_platform(system, machine) == expected


@pytest.mark.parametrize(
    "package,runner,expected",
    [
        ("@google/gemini-cli", "npx", "@google/gemini-cli@0.27.3"),
        ("@google/gemini-cli@0.27.3", "npx", "@google/gemini-cli@0.27.3"),
        ("cline", "npx", "cline@0.27.3"),
        ("/srv/agent", "npx", "/srv/agent"),
        ("fast-agent-mcp", "uvx", "fast-agent-mcp==0.27.3"),
        ("fast-agent-mcp==0.1.0", "uvx", "fast-agent-mcp==0.1.0"),
    ],
)
def test_packages_are_pinned_to_the_registry_version(package: str, runner: str, expected: str) -> None:
    assert acp_registry.pinned(package, "0.27.3", runner) == expected


def agent(raw: dict[str, Any]) -> acp_registry.RegistryAgent:
    decoded = acp_registry.decode(registry(raw)).agents[0]
    return decoded


def test_a_broken_entry_is_left_out_and_named() -> None:
    good = package_agent("good", "npx", "x", {})
    bad = {**package_agent("bad", "npx", "x", {}), "version": "latest"}
    decoded = acp_registry.decode(registry(bad, good))
    assert [a.id for a in decoded.agents] == ["good"]
    (skipped,) = decoded.skipped
    assert skipped.startswith("agents[0] (bad): Expected `str` matching regex") and skipped.endswith(
        "at `$.version`"
    )


def test_plans() -> None:
    npx = agent(package_agent("n", "npx", "@x/agent", {"K": "v"}))
    found = acp_registry.plan(npx, "linux-x86_64")
    assert found == PackagePlan(
        runner="npx",
        argv=["--yes", "@x/agent@3.0.0"],
        env={"K": "v"},
        install_hint=found.install_hint if found else "",
    )
    uvx = acp_registry.plan(agent(package_agent("u", "uvx", "pkg", {})), "linux-x86_64")
    assert isinstance(uvx, PackagePlan) and uvx.runner == "uvx" and uvx.argv == ["pkg==3.0.0"]
    binary = agent(binary_agent("b", "1.0.0", "https://e/b.tar.gz", platform="darwin-aarch64"))
    assert isinstance(acp_registry.plan(binary, "darwin-aarch64"), BinaryPlan)
    assert acp_registry.plan(binary, "linux-x86_64") is None
    assert not acp_registry.runnable(binary, "linux-x86_64")


@pytest.mark.parametrize(
    "url",
    [
        "https://cdn.example.com/r.json",
        "http://127.0.0.1:8000/r.json",
        "http://localhost/r.json",
        "http://[::1]/r.json",
        "file:///tmp/r.json",
    ],
)
def test_allowed_urls(url: str) -> None:
    assert downloads.checked_url(url) == url


def test_a_path_is_a_file_url(tmp_path: Path) -> None:
    assert downloads.checked_url(str(tmp_path / "r.json")) == (tmp_path / "r.json").as_uri()


@pytest.mark.parametrize(
    "url,message",
    [
        ("http://example.com/r.json", "plain http:// only for loopback addresses"),
        ("http://10.0.0.1/r.json", "plain http:// only for loopback addresses"),
        ("ftp://example.com/r.json", "only https://, loopback http://, file:// URLs and paths"),
        ("r.json", "only https://"),
    ],
)
def test_refused_urls(url: str, message: str) -> None:
    with pytest.raises(downloads.DownloadError, match=message):
        downloads.checked_url(url)


def test_a_truncated_download_is_an_error(tmp_path: Path) -> None:
    routes = Routes(files={"/a": b"x" * 100_000}, truncated={"/a"})
    with serve(routes) as served, pytest.raises(downloads.DownloadError, match=r"cut short|cannot fetch"):
        downloads.download(served.url("/a"), tmp_path / "a", 1 << 20)


def test_a_download_over_its_limit_is_an_error(tmp_path: Path) -> None:
    with serve(Routes(files={"/a": b"x" * 1000})) as served:
        with pytest.raises(downloads.DownloadError, match="more than the 10 allowed"):
            downloads.download(served.url("/a"), tmp_path / "a", 10)
        assert downloads.download(served.url("/a"), tmp_path / "a", 1000)[0] == 1000


def test_a_redirect_to_plain_http_elsewhere_is_refused(tmp_path: Path) -> None:
    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "http://example.com/evil")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(downloads.DownloadError, match="plain http:// only for loopback"):
            downloads.fetch(f"http://127.0.0.1:{server.server_address[1]}/r.json", 1000)
    finally:
        server.shutdown()
        server.server_close()


def test_the_cache_round_trip_and_a_broken_cache(tmp_path: Path) -> None:
    assert registry_cache.read(tmp_path) is None
    decoded = acp_registry.decode(registry(package_agent("n", "npx", "x", {})))
    now = time.time()
    registry_cache.write(tmp_path, registry_cache.Cached(url="file:///r", fetched_at=now, registry=decoded))
    cached = registry_cache.read(tmp_path)
    assert cached is not None and cached.registry == decoded and cached.age(now + 5) == 5
    registry_cache.path(tmp_path).write_text("{broken")
    assert registry_cache.read(tmp_path) is None


def hostile_entries() -> list[tuple[dict[str, Any], str]]:
    """Entries whose fields would become a path outside the agents' folder, an option of the package runner,
    or a command outside the install; each with what the message left out says."""
    url = "https://e/a.tar.gz"
    here = acp_registry.this_platform()

    def binary(**target: Any) -> dict[str, Any]:
        entry = binary_agent("evil", "1.0.0", url)
        entry["distribution"]["binary"][here].update(target)
        return entry

    return [
        (
            {**binary_agent("evil", "1.0.0", url), "version": "1.0.0/../../../outside"},
            "version '1.0.0/../../..",
        ),
        ({**binary_agent("evil", "1.0.0", url), "version": "1.0.0\n"}, "version '1.0.0\\n' is not"),
        ({**binary_agent("evil", "1.0.0", url), "version": "1.0.0-.."}, "version '1.0.0-..' is not"),
        ({**binary_agent("evil", "1.0.0", url), "id": "evil\n"}, "id 'evil\\n' is not"),
        # A Cyrillic i (U+0456): it looks like "tiny-agent" and is not that id.
        ({**binary_agent("evil", "1.0.0", url), "id": "t\u0456ny-agent"}, "('t\\u0456ny-agent'): Expected"),
        ({**binary_agent("evil", "1.0.0", url), "id": "a" * 65}, "is not lowercase ASCII"),
        (binary(cmd="/bin/sh"), "cmd '/bin/sh' is an absolute path"),
        (binary(cmd="../../outside/run"), "cmd '../../outside/run' leaves the agent's folder"),
        (binary(cmd="..\\..\\run.exe"), "leaves the agent's folder"),
        (binary(cmd="C:/Windows/run.exe"), "is an absolute path"),
        (binary(archive="https://e/a b.tar.gz"), "archive 'https://e/a b.tar.gz' is not a URL"),
        (binary(args=["ok\0no"]), "binary args: at most 256, each without NUL"),
        (binary(env={"A=B": "x"}), "binary env 'A=B' is not a NAME=value"),
        (package_agent("evil", "npx", "--call=touch /tmp/x", {}), "package '--call=touch /tmp/x' is not"),
        (package_agent("evil", "uvx", "--with=evil", {}), "no leading '-'"),
        ({**package_agent("evil", "npx", "x", {}), "name": "Evil\nacp.nvim: installed"}, "name 'Evil\\nacp"),
        *hostile_package_commands(),
        *hostile_previews(),
    ]


def with_cmd(runner: str, cmd: str) -> dict[str, Any]:
    entry = package_agent("evil", runner, "pkg", {})
    entry["distribution"][runner]["cmd"] = cmd
    return entry


def hostile_package_commands() -> list[tuple[dict[str, Any], str]]:
    """A package's `cmd` is a word of npx's or uvx's command line: never a path, an option or two words."""
    named = "is not an executable's name"
    return [
        (with_cmd("npx", "../bin/sh"), f"cmd '../bin/sh' {named}"),
        (with_cmd("npx", "bin/sh"), f"cmd 'bin/sh' {named}"),
        (with_cmd("uvx", "/bin/sh"), f"cmd '/bin/sh' {named}"),
        (with_cmd("uvx", "..\\run.exe"), named),
        (with_cmd("npx", "a..b"), f"cmd 'a..b' {named}"),
        (with_cmd("npx", "--call=touch /tmp/x"), f"cmd '--call=touch /tmp/x' {named}"),
        (with_cmd("uvx", "-w"), f"cmd '-w' {named}"),
        (with_cmd("npx", "agent\n"), f"cmd 'agent\\n' {named}"),
        (with_cmd("npx", "agent\x00"), f"cmd 'agent\\x00' {named}"),
        (with_cmd("npx", "agent run"), f"cmd 'agent run' {named}"),
        (with_cmd("npx", "a" * 129), named),
        (with_cmd("npx", ""), named),
        (with_cmd("npx", ".hidden"), named),
    ]


def with_preview(preview: object) -> dict[str, Any]:
    return {**package_agent("evil", "npx", "pkg", {}), "preview": preview}


def hostile_previews() -> list[tuple[dict[str, Any], str]]:
    """The preview is checked as the stable entry is, and is exactly a version and an npx/uvx
    distribution (the format's FORMAT.md, "Preview Channel")."""
    npx = {"npx": {"package": "pkg@3.1.0-preview.1"}}
    return [
        (with_preview({"version": "3.1.0/../x", "distribution": npx}), "preview version '3.1.0/../x' is not"),
        (with_preview({"version": "3.1.0\n", "distribution": npx}), "preview version '3.1.0\\n' is not"),
        (with_preview({"distribution": npx}), "missing required field `version` - at `$.preview`"),
        (with_preview({"version": "3.1.0"}), "missing required field `distribution` - at `$.preview`"),
        (
            with_preview({"version": "3.1.0", "distribution": npx, "name": "Other"}),
            "unknown field `name` - at `$.preview`",
        ),
        (
            with_preview({"version": "3.1.0", "distribution": {"binary": {"linux-x86_64": {}}}}),
            "binary preview distributions are not supported (npx and uvx only)",
        ),
        (with_preview({"version": "3.1.0", "distribution": {}}), "a preview distribution has npx or uvx"),
        (
            with_preview({"version": "3.1.0", "distribution": {"npx": {"package": "--call=x"}}}),
            "package '--call=x' is not a package name",
        ),
        (
            with_preview({"version": "3.1.0", "distribution": {"uvx": {"package": "p", "cmd": "../sh"}}}),
            "cmd '../sh' is not an executable's name",
        ),
        (
            with_preview(
                {"version": "3.1.0", "distribution": {"npx": {"package": "p", "env": {"A=B": "x"}}}}
            ),
            "package env 'A=B' is not a NAME=value",
        ),
        (with_preview("3.1.0"), "Expected `object | null`, got `str` - at `$.preview`"),
    ]


@pytest.mark.parametrize("entry,message", hostile_entries())
def test_an_entry_naming_a_path_or_an_option_is_left_out_and_named(
    entry: dict[str, Any], message: str
) -> None:
    decoded = acp_registry.decode(registry(entry, package_agent("good", "npx", "x", {})))
    assert [a.id for a in decoded.agents] == ["good"]
    (skipped,) = decoded.skipped
    assert skipped.startswith("agents[0] (") and message in skipped, skipped
    assert "\n" not in skipped


def test_a_tampered_cache_is_as_good_as_none(tmp_path: Path) -> None:
    """The cache is decoded with the same checks: an entry edited into a path there is never used."""
    decoded = acp_registry.decode(registry(binary_agent("tiny", "1.0.0", "https://e/a.tar.gz")))
    registry_cache.write(tmp_path, registry_cache.Cached(url="file:///r", fetched_at=1.0, registry=decoded))
    path = registry_cache.path(tmp_path)
    path.write_bytes(path.read_bytes().replace(b'"1.0.0"', b'"1.0.0/../../../outside"'))
    assert registry_cache.read(tmp_path) is None


@pytest.mark.parametrize(
    "runner,package,cmd,argv",
    [
        # The format's command lines (FORMAT.md, "Distribution Types"): the package alone runs its default
        # executable; with `cmd`, `npx --package <package> <cmd> [args]`, `uvx --from <package> <cmd> [args]`.
        ("npx", "@x/agent", None, ["--yes", "@x/agent@3.0.0", "--acp"]),
        ("npx", "@x/agent", "x-acp", ["--yes", "--package", "@x/agent@3.0.0", "x-acp", "--acp"]),
        ("npx", "@x/agent@2.0.0", "x_acp.v2", ["--yes", "--package", "@x/agent@2.0.0", "x_acp.v2", "--acp"]),
        ("uvx", "agent-pkg", None, ["agent-pkg==3.0.0", "--acp"]),
        ("uvx", "agent-pkg", "agent-acp", ["--from", "agent-pkg==3.0.0", "agent-acp", "--acp"]),
    ],
)
def test_a_package_cmd_is_the_executable_the_runner_runs(
    runner: str, package: str, cmd: str | None, argv: list[str]
) -> None:
    entry = package_agent("n", runner, package, {})
    entry["distribution"][runner]["args"] = ["--acp"]
    if cmd is not None:
        entry["distribution"][runner]["cmd"] = cmd
    found = acp_registry.plan(agent(entry), "linux-x86_64")
    assert isinstance(found, PackagePlan) and (found.runner, found.argv) == (runner, argv)


def test_a_preview_and_a_cmd_survive_the_cache(tmp_path: Path) -> None:
    entry = package_agent("n", "uvx", "pkg", {})
    entry["distribution"]["uvx"]["cmd"] = "pkg-acp"
    entry["preview"] = {
        "version": "3.1.0-preview.1",
        "distribution": {"npx": {"package": "p", "cmd": "p-acp"}},
    }
    decoded = acp_registry.decode(registry(entry))
    registry_cache.write(tmp_path, registry_cache.Cached(url="file:///r", fetched_at=1.0, registry=decoded))
    cached = registry_cache.read(tmp_path)
    assert cached is not None and cached.registry == decoded
    (again,) = cached.registry.agents
    assert again.preview is not None and again.preview.version == "3.1.0-preview.1"
    assert again.preview.distribution.npx is not None and again.preview.distribution.npx.cmd == "p-acp"


def test_good_versions_and_ids() -> None:
    for version in ("0.1.0", "10.20.30", "1.0.0-rc.1", "1.0.0+build.5", "1.0.0-beta-2+exp.sha.5114f85"):
        assert acp_registry.valid_version(version), version
    for agent_id in ("a", "claude-code-acp", "gemini", "x1"):
        assert acp_registry.valid_id(agent_id), agent_id


def test_a_cache_that_is_a_fifo_is_not_waited_on(tmp_path: Path) -> None:
    """Opened blocking, a FIFO there held the reader until a writer came (:checkhealth reads it on
    Neovim's thread)."""
    import os

    os.mkfifo(registry_cache.path(tmp_path))
    assert registry_cache.read(tmp_path) is None

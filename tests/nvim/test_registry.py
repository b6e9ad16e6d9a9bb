"""Agents from the ACP Registry, as a user sees them: offered by :AcpStart, installed, started, updated and
removed, refused when their archive is malicious. Everything offline: a test registry and archives served
on 127.0.0.1 (tests/registry_fixtures.py); the binary agent is the plugin's demo agent behind a launcher."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Nvim, setup_opts
from tests.registry_fixtures import (
    Member,
    Routes,
    Served,
    binary_agent,
    launcher_members,
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
    opts = setup_opts(tmp_path, registry={"url": url, "max_age": 3600}, **extra)
    opts.pop("default_agent")
    assert nvim.lua("return require('acp_nvim').setup(...)", opts), nvim.notes()


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

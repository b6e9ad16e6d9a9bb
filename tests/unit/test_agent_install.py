"""Installs of binary agents from real archives on disk: what lands where, and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_nvim.client import agent_install
from acp_nvim.client.acp_registry import BinaryTarget
from acp_nvim.client.agent_install import InstallError
from tests.registry_fixtures import Member, launcher_members, sha256, tar_gz, zip_bytes


def target(tmp_path: Path, data: bytes, name: str = "a.tar.gz", digest: str | None = None) -> BinaryTarget:
    path = tmp_path / "served" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    return BinaryTarget(archive=path.as_uri(), cmd="./bin/demo-agent", args=["acp"], sha256=digest)


def install(tmp_path: Path, archive: BinaryTarget, version: str = "1.0.0") -> agent_install.InstalledAgent:
    return agent_install.install(tmp_path / "agents", "tiny", "Tiny", version, archive)


@pytest.mark.parametrize("packer,name", [(tar_gz, "a.tar.gz"), (zip_bytes, "a.zip")])
def test_install_list_and_remove(tmp_path: Path, packer: object, name: str) -> None:
    data = packer(launcher_members())  # type: ignore[operator]
    record = install(tmp_path, target(tmp_path, data, name, sha256(data)))
    executable = agent_install.command(record)
    assert executable == tmp_path / "agents" / "tiny" / "1.0.0" / "bin" / "demo-agent"
    assert os.access(executable, os.X_OK)
    assert record.args == ["acp"]
    assert [r.version for r in agent_install.installed(tmp_path / "agents")] == ["1.0.0"]
    # Installed: a second install downloads nothing (the archive is gone).
    (tmp_path / "served" / name).unlink()
    assert install(tmp_path, target(tmp_path, b"", name)).folder == record.folder
    assert agent_install.remove(tmp_path / "agents", "tiny") == ["1.0.0"]
    assert not (tmp_path / "agents" / "tiny").exists()


def test_a_folder_without_its_record_is_not_an_install_and_is_replaced(tmp_path: Path) -> None:
    half = tmp_path / "agents" / "tiny" / "1.0.0" / "bin"
    half.mkdir(parents=True)
    (half / "demo-agent").write_text("#!/bin/sh\nexit 9\n")
    assert agent_install.installed(tmp_path / "agents") == []
    record = install(tmp_path, target(tmp_path, tar_gz(launcher_members())))
    assert "acp_nvim.agents.demo" in agent_install.command(record).read_text()


def test_a_failed_install_leaves_no_folder(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="checksum mismatch"):
        install(tmp_path, target(tmp_path, tar_gz(launcher_members()), digest="1" * 64))
    with pytest.raises(InstallError, match=r"not a readable tar\.gz or zip"):
        install(tmp_path, target(tmp_path, b"this is no archive"))
    with pytest.raises(InstallError, match=r"has no command '\./bin/demo-agent'"):
        install(tmp_path, target(tmp_path, tar_gz([Member("other", b"x")])))
    assert list((tmp_path / "agents" / "tiny").iterdir()) == []


def test_a_zip_link_chain_cannot_leave_the_folder(tmp_path: Path) -> None:
    """Each link looks inside on its own ("a" -> ".", "a/b" -> ".."), but "a/b" is really "b" at the top and
    its ".." is outside: the real path is what counts."""
    members = [
        *launcher_members(),
        Member("a", kind="symlink", link="."),
        Member("a/b", kind="symlink", link=".."),
    ]
    with pytest.raises(InstallError, match="links outside the agent's folder"):
        install(tmp_path, target(tmp_path, zip_bytes(members), "a.zip"))
    assert list((tmp_path / "agents" / "tiny").iterdir()) == []


def test_a_tar_link_chain_cannot_leave_the_folder(tmp_path: Path) -> None:
    members = [
        *launcher_members(),
        Member("a", kind="symlink", link="."),
        Member("a/b", kind="symlink", link=".."),
        Member("a/b/escaped.txt", b"x"),
    ]
    with pytest.raises(InstallError, match="refusing the archive"):
        install(tmp_path, target(tmp_path, tar_gz(members)))
    assert not (tmp_path / "agents" / "escaped.txt").exists()
    assert not list(tmp_path.rglob("escaped.txt"))


def test_devices_are_refused(tmp_path: Path) -> None:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        info = tarfile.TarInfo("bin/demo-agent")
        info.type = tarfile.CHRTYPE
        tar.addfile(info)
    with pytest.raises(InstallError, match="is not a file, folder or link"):
        install(tmp_path, target(tmp_path, out.getvalue()))


def test_an_abandoned_partial_install_is_removed(tmp_path: Path) -> None:
    parent = tmp_path / "agents" / "tiny"
    old, recent = parent / ".1.0.0.partial-old", parent / ".1.0.0.partial-new"
    for partial in (old, recent):
        (partial / "tree").mkdir(parents=True)
    os.utime(old, (0, 0))
    install(tmp_path, target(tmp_path, tar_gz(launcher_members())))
    # The recent one may be another Neovim's install under way: left alone.
    assert not old.exists() and recent.exists()

"""Installs of binary agents from real archives on disk: what lands where, and what is refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_nvim.app.registry import install as agent_install
from acp_nvim.app.registry.entries import BinaryTarget
from acp_nvim.app.registry.install import InstallError
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


def outside(tmp_path: Path) -> Path:
    """A folder beside the agents' folder, with a file in it: what a hostile entry would remove."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    return folder


def assert_untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    assert (folder / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize(
    "agent_id,version",
    [
        ("tiny", "1.0.0/../../../outside"),
        ("tiny", "1.0.0/../../.."),
        ("tiny", "1.0.0\n"),
        ("tiny", ".."),
        ("tiny", "1.0.0-.."),
        ("../outside", "1.0.0"),
        ("..", "outside"),
        ("tiny/../..", "outside"),
        ("t\0", "1.0.0"),
    ],
)
def test_a_version_or_id_that_is_a_path_touches_nothing(tmp_path: Path, agent_id: str, version: str) -> None:
    """Before the check, `agents/tiny/1.0.0/../../../outside` was removed (`rmtree`) before the download."""
    kept = outside(tmp_path)
    data = tar_gz(launcher_members())
    with pytest.raises(InstallError, match=r"refusing the (agent id|version)"):
        agent_install.install(tmp_path / "agents", agent_id, "Tiny", version, target(tmp_path, data))
    assert_untouched(kept)
    assert not (tmp_path / "agents").exists()


def test_a_linked_agent_folder_is_refused_not_followed(tmp_path: Path) -> None:
    """`agents/tiny` a link to a folder elsewhere: an install, a listing and a removal never go through it."""
    kept = outside(tmp_path)
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "tiny").symlink_to(kept)
    data = tar_gz(launcher_members())
    with pytest.raises(InstallError, match=r"refusing to touch .*tiny is a link \(to .*outside\)"):
        install(tmp_path, target(tmp_path, data))
    assert_untouched(kept)
    # An install found through the link (put there by someone else) is not listed, run or removed.
    (agents / "tiny").unlink()
    install(tmp_path, target(tmp_path, data))
    os.rename(agents / "tiny" / "1.0.0", kept / "1.0.0")
    (agents / "tiny").rmdir()
    (agents / "tiny").symlink_to(kept)
    assert agent_install.installed(agents) == []
    assert agent_install.remove(agents, "tiny") == []
    assert (kept / "1.0.0" / "bin" / "demo-agent").is_file() and (kept / "keep.txt").read_text() == "mine"


def test_a_version_folder_that_became_a_link_is_not_removed_through(tmp_path: Path) -> None:
    kept = outside(tmp_path)
    agents = tmp_path / "agents"
    (agents / "tiny").mkdir(parents=True)
    (agents / "tiny" / "1.0.0").symlink_to(kept)
    # No record there: an install would replace the folder; a link is refused instead.
    with pytest.raises(InstallError, match="is a link"):
        install(tmp_path, target(tmp_path, tar_gz(launcher_members())))
    assert_untouched(kept)


@pytest.mark.parametrize(
    "change",
    [
        {"cmd": "/bin/sh"},
        {"cmd": "../../../outside/run"},
        {"id": "other"},
        {"version": "9.9.9"},
        {"id": "../outside"},
    ],
)
def test_a_tampered_install_record_is_ignored(tmp_path: Path, change: dict[str, str]) -> None:
    """The record says what to run: one edited to run a command outside its folder, or naming another
    agent than its folder, is not an install."""
    record = install(tmp_path, target(tmp_path, tar_gz(launcher_members())))
    record_path = Path(record.folder) / agent_install.INSTALLED
    raw = json.loads(record_path.read_bytes())
    record_path.write_text(json.dumps({**raw, **change}))
    assert agent_install.installed(tmp_path / "agents") == []


def test_remove_takes_only_an_id(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "agents").mkdir()
    with pytest.raises(InstallError, match="is not a registry agent id"):
        agent_install.remove(tmp_path / "agents", "../empty")
    assert empty.is_dir()


def test_an_install_record_that_is_a_fifo_is_ignored_not_waited_on(tmp_path: Path) -> None:
    record = install(tmp_path, target(tmp_path, tar_gz(launcher_members())))
    record_path = Path(record.folder) / agent_install.INSTALLED
    record_path.unlink()
    os.mkfifo(record_path)
    assert agent_install.installed(tmp_path / "agents") == []

"""The host's own atomic write of a file no buffer holds (`acp_nvim/client/files/disk.py`), on real files."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from acp_nvim.client.files import disk
from acp_nvim.client.files.disk import NotRegular, PathChanged, write_atomically


def test_replaces_the_file_keeping_its_mode_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    target.chmod(0o604)
    inode = target.stat().st_ino
    assert write_atomically(str(target), b"new\n") is True
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    # Replaced by a rename, not rewritten in place: a reader holding the old file still sees the old bytes.
    assert target.stat().st_ino != inode
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_creates_a_new_file_and_its_folders_with_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deep" / "b.txt"
    assert write_atomically(str(target), b"x") is False
    assert target.read_bytes() == b"x"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_folder_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "x").mkdir(parents=True)
    outside.mkdir()
    checked = str(project / "x" / "new.txt")
    (project / "x").rmdir()
    (project / "x").symlink_to(outside)
    with pytest.raises(PathChanged):
        write_atomically(checked, b"x")
    assert list(outside.iterdir()) == []


def test_a_parent_above_swapped_for_a_symlink_is_refused(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "a" / "b").mkdir(parents=True)
    (outside / "b").mkdir(parents=True)
    checked = str(project / "a" / "b" / "new.txt")
    os.rename(project / "a", tmp_path / "moved")
    (project / "a").symlink_to(outside)
    with pytest.raises(PathChanged):
        write_atomically(checked, b"x")
    assert list((outside / "b").iterdir()) == []


def test_a_file_that_became_a_symlink_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    target = tmp_path / "project" / "f.txt"
    target.parent.mkdir()
    target.symlink_to(secret)
    with pytest.raises(PathChanged):
        write_atomically(str(target), b"x")
    assert secret.read_text() == "secret\n"
    assert target.is_symlink()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = threading.Event()

    def write() -> None:
        with pytest.raises(NotRegular):
            write_atomically(str(fifo), b"x")
        done.set()

    worker = threading.Thread(target=write, daemon=True)
    worker.start()
    worker.join(10)
    assert done.is_set(), "the write blocked on the FIFO"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_temp_names_are_unpredictable_and_short(tmp_path: Path) -> None:
    names = {disk.temp_name("é" * 200) for _ in range(100)}
    assert len(names) == 100
    assert all(len(n.encode()) <= 255 for n in names)


def test_a_failed_write_leaves_the_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(disk.os, "fsync", full)
    with pytest.raises(OSError, match="No space"):
        write_atomically(str(target), b"new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_missing_folders_are_never_created_through_a_swapped_symlink(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "a").mkdir(parents=True)
    outside.mkdir()
    checked = str(project / "a" / "new" / "deeper" / "f.txt")
    (project / "a").rmdir()
    (project / "a").symlink_to(outside)
    with pytest.raises(PathChanged):
        write_atomically(checked, b"x")
    assert list(outside.iterdir()) == []

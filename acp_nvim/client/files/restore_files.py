"""A folder's files put back as a snapshot held them: every file either as it was or fully restored.

In two steps: every new content is first written to a staging folder beside the files (a failure there,
disk full or else, leaves the folder exactly as it was); then each file is moved into place with one rename
(never half-written), files created since are removed and the folders that leaves empty with them. No path
is ever followed through a symlink: a link is restored as a link, and a file whose folder is a link now is
named, not written through it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile

import msgspec

from acp_nvim.client.files.disk import current_umask
from acp_nvim.client.files.shadow_git import EXECUTABLE, SYMLINK

STAGING_PREFIX = ".acp_nvim-restore-"


UMASK = current_umask()


class Write(msgspec.Struct, frozen=True):
    """A file to put back: its path in the folder, its git mode, its bytes (a link's target for a link)."""

    path: str
    mode: str
    data: bytes


class Outcome(msgspec.Struct, kw_only=True):
    written: list[str] = []
    removed: list[str] = []
    # Paths not restored (each left as it was), with why.
    failed: list[tuple[str, str]] = []
    # Set when nothing at all was changed: why.
    untouched: str | None = None


class Unsafe(OSError):
    """A path of the folder that goes through a symlink or a file."""


def restore(folder: str, writes: list[Write], removals: list[str]) -> Outcome:
    root = os.path.realpath(folder)
    outcome = Outcome()
    if not writes and not removals:
        return outcome
    try:
        staging = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=root)
    except OSError as err:
        outcome.untouched = f"{root}: {err.strerror}"
        return outcome
    try:
        staged: list[tuple[Write, str]] = []
        for number, write in enumerate(writes):
            try:
                staged.append((write, _stage(staging, number, write)))
            except OSError as err:
                outcome.untouched = f"{write.path}: {err.strerror or err}"
                return outcome
        for path in removals:
            try:
                _remove(root, path)
                outcome.removed.append(path)
            except OSError as err:
                outcome.failed.append((path, err.strerror or str(err)))
        for write, source in staged:
            try:
                _place(root, write, source)
                outcome.written.append(write.path)
            except OSError as err:
                outcome.failed.append((write.path, err.strerror or str(err)))
        _remove_empty_folders(root, removals)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return outcome


def _stage(staging: str, number: int, write: Write) -> str:
    path = os.path.join(staging, str(number))
    if write.mode == SYMLINK:
        os.symlink(os.fsdecode(write.data), path)
        return path
    # No fsync: a rename replaces each file whole either way, and one per file (or a sync before the
    # renames) made a restore of 1,000 files take 0.4-1.3 s instead of 0.1 s.
    with open(path, "wb") as out:
        out.write(write.data)
    return path


def _checked_parent(root: str, path: str, *, create: bool) -> str:
    """The real folder `path` is in, each component checked to be a folder (never a link); created when
    `create`."""
    parts = path.split("/")
    current = root
    for part in parts[:-1]:
        if part in ("", ".", ".."):
            raise Unsafe(errno.EINVAL, "not a path inside the folder")
        current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not create:
                raise
            os.mkdir(current)
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise Unsafe(errno.ENOTDIR, "a folder of its path is a link or a file now")
    if parts[-1] in ("", ".", ".."):
        raise Unsafe(errno.EINVAL, "not a path inside the folder")
    return current


def _remove(root: str, path: str) -> None:
    target = os.path.join(_checked_parent(root, path, create=False), path.rsplit("/", 1)[-1])
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)


def _mode(target: str, git_mode: str) -> int:
    executable = git_mode == EXECUTABLE
    try:
        info = os.lstat(target)
        if stat.S_ISREG(info.st_mode):
            bits = stat.S_IMODE(info.st_mode) & ~0o111
            return bits | ((bits & 0o444) >> 2 if executable else 0)
    except OSError:
        pass
    return (0o777 if executable else 0o666) & ~UMASK


def _place(root: str, write: Write, source: str) -> None:
    parent = _checked_parent(root, write.path, create=True)
    target = os.path.join(parent, write.path.rsplit("/", 1)[-1])
    if os.path.isdir(target) and not os.path.islink(target):
        # A folder where the file was: emptied by the removals (a non-empty one stays and is named).
        os.rmdir(target)
    if write.mode != SYMLINK:
        os.chmod(source, _mode(target, write.mode))
    try:
        os.replace(source, target)
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
        # Another file system under the folder: a copy beside the file, then the rename.
        beside = tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=parent)
        try:
            copy = os.path.join(beside, "file")
            if write.mode == SYMLINK:
                os.symlink(os.readlink(source), copy)
            else:
                shutil.copy2(source, copy)
            os.replace(copy, target)
        finally:
            shutil.rmtree(beside, ignore_errors=True)


def _remove_empty_folders(root: str, removals: list[str]) -> None:
    """The folders the removals left empty, up to the folder itself (never it)."""
    folders = {os.path.dirname(path) for path in removals}
    for folder in sorted(folders, key=len, reverse=True):
        while folder:
            try:
                os.rmdir(os.path.join(root, folder))
            except OSError:
                break
            folder = os.path.dirname(folder)

"""Binary agents from the registry, installed under stdpath("data")/acp_nvim/agents/{id}/{version}/.

An install downloads the archive beside that folder, checks it (the SHA-256 when the registry gives one; a
size and a readable tar.gz or zip always), and extracts it into a temporary folder next to the final one,
refusing any member that would land outside it (`..`, an absolute path, a link pointing out, a device). Only
a complete extraction is renamed into place, with a record of what it runs (`INSTALLED`): a folder without
that record is never started, so an interrupted install leaves nothing runnable behind. Blocking: run it in a
worker thread.

Nothing here removes or writes a path outside the agents' folder: the id and version are checked whole
(`acp_registry.valid_id`, `valid_version`) before they name a folder, and right before each removal, folder
creation and rename the path is resolved (symlinks included) and must be inside it; a link where a folder of
an install should be (`agents/{id}` pointing elsewhere) is refused, never followed. An install record that
does not match its folder is ignored.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import msgspec

from acp_nvim.app.registry import cache as registry_cache
from acp_nvim.app.registry import downloads
from acp_nvim.app.registry import entries as acp_registry
from acp_nvim.app.registry.entries import BinaryTarget

log = logging.getLogger("acp_nvim.agent_install")

INSTALLED = ".acp_nvim_install.json"
MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024
MAX_EXTRACTED_BYTES = 4 * 1024 * 1024 * 1024
MAX_MEMBERS = 100_000
MAX_RECORD_BYTES = 1024 * 1024


class InstallError(Exception):
    """The archive could not be installed: the message says why (nothing of it was left runnable)."""


class InstalledAgent(msgspec.Struct, frozen=True, kw_only=True):
    """The record an install leaves in its folder: what to run, and where it came from."""

    id: str
    name: str
    version: str
    cmd: str
    args: list[str] = []
    env: dict[str, str] = {}
    archive: str = ""
    installed_at: float = 0.0
    folder: str = ""


_record = msgspec.json.Decoder(InstalledAgent)


def folder(agents_dir: Path, agent_id: str, version: str) -> Path:
    """The install folder of `agent_id` `version`; `InstallError` when either is not one plain name."""
    if not acp_registry.valid_id(agent_id):
        raise InstallError(f"refusing the agent id {acp_registry.shown(agent_id)}: not a registry id")
    if not acp_registry.valid_version(version):
        raise InstallError(f"refusing the version {acp_registry.shown(version)}: not a plain version")
    return agents_dir / agent_id / version


def _outside(agents_dir: Path, path: Path) -> str | None:
    """Why `path` may not be removed or written, or None: resolved, it must be strictly inside
    `agents_dir` (itself resolved: stdpath("data") may be a link), and it must not be a link itself."""
    root = Path(os.path.realpath(agents_dir))
    real = Path(os.path.realpath(path))
    if path.is_symlink():
        return f"{path} is a link (to {real}), not a folder of {agents_dir}"
    if real == root or not real.is_relative_to(root):
        return f"{path} is {real}, outside {agents_dir}"
    return None


def _guard(agents_dir: Path, path: Path) -> None:
    why = _outside(agents_dir, path)
    if why is not None:
        log.warning("refusing to touch %s: %s", path, why)
        raise InstallError(f"refusing to touch {why}")


def _remove_tree(agents_dir: Path, path: Path) -> bool:
    """Removes `path` when it is inside `agents_dir` (checked right before); whether it was."""
    why = _outside(agents_dir, path)
    if why is not None:
        log.warning("not removing %s: %s", path, why)
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def _usable(agents_dir: Path, record_path: Path, record: InstalledAgent) -> str | None:
    """Why an install record may not be used, or None: it must be the record of its own folder."""
    where = record_path.parent
    if record.id != where.parent.name or record.version != where.name:
        return f"it is the record of {record.id} {record.version}, not of its folder"
    try:
        folder(agents_dir, record.id, record.version)
    except InstallError as err:
        return str(err)
    return acp_registry.command_path(record.cmd) or _outside(agents_dir, where)


def installed(agents_dir: Path) -> list[InstalledAgent]:
    """Every complete install, by id then version."""
    found: list[InstalledAgent] = []
    for record_path in sorted(agents_dir.glob(f"*/*/{INSTALLED}")):
        try:
            record = _record.decode(registry_cache.read_regular(record_path, MAX_RECORD_BYTES))
        except (OSError, msgspec.DecodeError) as err:
            log.warning("ignoring %s: %s", record_path, err)
            continue
        why = _usable(agents_dir, record_path, record)
        if why is not None:
            log.warning("ignoring %s: %s", record_path, why)
            continue
        found.append(msgspec.structs.replace(record, folder=str(record_path.parent)))
    return found


def find(agents_dir: Path, agent_id: str, version: str) -> InstalledAgent | None:
    return next((a for a in installed(agents_dir) if a.id == agent_id and a.version == version), None)


def remove(agents_dir: Path, agent_id: str, version: str | None = None) -> list[str]:
    """Removes the agent's installs (one version, or all); the versions removed."""
    if not acp_registry.valid_id(agent_id):
        raise InstallError(f"{acp_registry.shown(agent_id)} is not a registry agent id")
    removed: list[str] = []
    for record in installed(agents_dir):
        mine = record.id == agent_id and (version is None or record.version == version)
        if mine and _remove_tree(agents_dir, Path(record.folder)):
            removed.append(record.version)
    parent = agents_dir / agent_id
    if _outside(agents_dir, parent) is None and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()
    return removed


def command(record: InstalledAgent) -> Path:
    """The executable the install runs (checked to be inside its folder when it was installed)."""
    return Path(record.folder) / PurePosixPath(record.cmd)


def install(
    agents_dir: Path,
    agent_id: str,
    name: str,
    version: str,
    target: BinaryTarget,
    progress: downloads.Progress | None = None,
) -> InstalledAgent:
    """Downloads, checks and extracts `target`'s archive; the record of the install (an existing complete
    install of that version is returned as it is)."""
    final = folder(agents_dir, agent_id, version)
    existing = find(agents_dir, agent_id, version)
    if existing is not None:
        return existing
    agents_dir.mkdir(parents=True, exist_ok=True)
    if not final.parent.is_symlink():
        final.parent.mkdir(exist_ok=True)
    _guard(agents_dir, final.parent)
    _forget_abandoned(agents_dir, final.parent)
    if final.exists() or final.is_symlink():
        # Left by something else than a complete install (no record): never run, replaced.
        _guard(agents_dir, final)
        shutil.rmtree(final, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{version}.partial-", dir=final.parent))
    try:
        archive = work / "archive"
        size, digest = downloads.download(target.archive, archive, MAX_ARCHIVE_BYTES, progress)
        if size == 0:
            raise InstallError(f"{target.archive} is empty")
        expected = target.sha256.lower() if target.sha256 is not None else None
        if expected is not None and digest != expected:
            raise InstallError(
                f"checksum mismatch for {target.archive}: expected sha256 {expected}, got {digest}"
            )
        tree = work / "tree"
        tree.mkdir()
        _extract(archive, tree, target.archive)
        executable = _executable(tree, target.cmd)
        record = InstalledAgent(
            id=agent_id,
            name=name,
            version=version,
            cmd=target.cmd,
            args=target.args,
            env=target.env,
            archive=target.archive,
            installed_at=time.time(),
        )
        executable.chmod(executable.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        (tree / INSTALLED).write_bytes(msgspec.json.encode(record))
        # The one step that makes it runnable: a rename within the same folder (checked again: it may have
        # become a link while the archive came).
        _guard(agents_dir, final.parent)
        try:
            os.rename(tree, final)
        except OSError:
            # Another Neovim installed the same version meanwhile: its install is as good.
            done = find(agents_dir, agent_id, version)
            if done is None:
                raise
            return done
        return msgspec.structs.replace(record, folder=str(final))
    except downloads.DownloadError as err:
        raise InstallError(str(err)) from None
    finally:
        _remove_tree(agents_dir, work)


# A partial install older than this was abandoned (Neovim killed mid-download): its folder is removed.
ABANDONED_AFTER = 24 * 3600


def _forget_abandoned(agents_dir: Path, parent: Path) -> None:
    now = time.time()
    for partial in parent.glob(".*.partial-*"):
        try:
            if now - partial.stat().st_mtime > ABANDONED_AFTER:
                _remove_tree(agents_dir, partial)
        except OSError:
            continue


def _executable(tree: Path, cmd: str) -> Path:
    relative = _member_path(cmd.removeprefix("./"), f"the command {cmd!r}")
    path = tree / relative
    if not path.is_file() or (path.is_symlink() and not path.resolve().is_relative_to(tree.resolve())):
        raise InstallError(f"the archive has no command {cmd!r}")
    return path


def _member_path(name: str, what: str) -> PurePosixPath:
    """A member's path relative to the install folder; `InstallError` when it could land outside it."""
    normalized = name.replace("\\", "/")
    path = PurePosixPath(normalized)
    if path.is_absolute() or (len(normalized) > 1 and normalized[1] == ":"):
        raise InstallError(f"refusing the archive: {what} has an absolute path ({name})")
    if ".." in path.parts:
        raise InstallError(f"refusing the archive: {what} leaves the agent's folder ({name})")
    return path


def _link_inside(member: PurePosixPath, target: str, what: str) -> None:
    link = PurePosixPath(target.replace("\\", "/"))
    if link.is_absolute():
        raise InstallError(f"refusing the archive: {what} links to an absolute path ({target})")
    depth = len(member.parent.parts)
    for part in link.parts:
        depth += -1 if part == ".." else 0 if part == "." else 1
        if depth < 0:
            raise InstallError(f"refusing the archive: {what} links outside the agent's folder ({target})")


def _extract(archive: Path, tree: Path, url: str) -> None:
    if zipfile.is_zipfile(archive):
        _extract_zip(archive, tree)
        return
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
            _check_tar(members)
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tree, members=members, filter="data")
            else:  # Python before 3.11.4: the checks above only
                tar.extractall(tree, members=members)
    except tarfile.FilterError as err:
        # The standard library's own check, behind ours: it sees links made by earlier members.
        raise InstallError(f"refusing the archive: {err}") from None
    except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
        raise InstallError(f"{url} is not a readable tar.gz or zip archive: {err}") from None


def _check_tar(members: list[tarfile.TarInfo]) -> None:
    if len(members) > MAX_MEMBERS:
        raise InstallError(f"refusing the archive: more than {MAX_MEMBERS} members")
    total = 0
    for member in members:
        what = f"member {member.name!r}"
        path = _member_path(member.name, what)
        if member.issym():
            _link_inside(path, member.linkname, what)
        elif member.islnk():
            _member_path(member.linkname, what)
        elif not (member.isfile() or member.isdir()):
            raise InstallError(f"refusing the archive: {what} is not a file, folder or link")
        total += member.size
        if total > MAX_EXTRACTED_BYTES:
            raise InstallError(f"refusing the archive: it extracts to more than {MAX_EXTRACTED_BYTES} bytes")


def _extract_zip(archive: Path, tree: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zipped:
            infos = zipped.infolist()
            if len(infos) > MAX_MEMBERS:
                raise InstallError(f"refusing the archive: more than {MAX_MEMBERS} members")
            if sum(info.file_size for info in infos) > MAX_EXTRACTED_BYTES:
                raise InstallError(
                    f"refusing the archive: it extracts to more than {MAX_EXTRACTED_BYTES} bytes"
                )
            for info in infos:
                what = f"member {info.filename!r}"
                path = _member_path(info.filename, what)
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    _link_inside(path, zipped.read(info).decode("utf-8", "replace"), what)
            root = tree.resolve()
            for info in infos:
                path = PurePosixPath(info.filename.replace("\\", "/"))
                dest = tree / path
                # Lexical checks cannot see through links made by earlier members: the real path must stay.
                if not Path(os.path.realpath(dest)).is_relative_to(root):
                    raise InstallError(
                        f"refusing the archive: member {info.filename!r} leaves the agent's folder"
                    )
                mode = info.external_attr >> 16
                if info.is_dir():
                    dest.mkdir(parents=True, exist_ok=True)
                elif stat.S_ISLNK(mode):
                    target = zipped.read(info).decode("utf-8")
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    if not Path(os.path.realpath(dest.parent / target)).is_relative_to(root):
                        raise InstallError(
                            f"refusing the archive: member {info.filename!r} links outside the agent's folder"
                        )
                    os.symlink(target, dest)
                else:
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    with zipped.open(info) as source, dest.open("wb") as out:
                        shutil.copyfileobj(source, out)
                    if mode & 0o777:
                        dest.chmod(mode & 0o755)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as err:
        raise InstallError(f"the zip archive cannot be read: {err}") from None

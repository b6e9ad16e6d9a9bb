"""Writing a file that no editor buffer holds, atomically and only where the sandbox checked.

For an agent's write too large to go through a buffer: sending tens of MiB to Neovim holds its event loop for
as long as it takes to receive and decode them, whatever Lua then does. So the host writes such a file itself,
off the event loop, with the guarantees of the buffer path (`lua/acp_nvim/fs/save.lua`): a temp file created
exclusively under an unpredictable name next to the file, fsync, the file's permission bits and owner, rename
over the file, fsync of the folder. A reader or a crash sees the old bytes or the new, never a mix.

The path is the real path the sandbox resolved and checked. Everything below works relative to a descriptor
of its folder, and that folder is checked (through the kernel's own name of the descriptor) to still be the
checked path when it is opened and again before the rename: a folder swapped for a symlink after the check is
refused, never followed, and so is a file that became a symlink or anything but a regular file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat


class PathChanged(Exception):
    """The checked path no longer leads to what was checked (a symlink or another kind of file on it)."""


class NotRegular(Exception):
    """The path is a FIFO, socket, device or folder: nothing a text write may replace."""


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with the threads that create files meanwhile.
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _check_folder(dir_fd: int, folder: str) -> None:
    link = f"/proc/self/fd/{dir_fd}"
    try:
        actual = os.readlink(link)
    except OSError:
        # No /proc: compare identities instead, which a swap after the open also changes.
        opened = os.fstat(dir_fd)
        try:
            named = os.stat(folder, follow_symlinks=False)
        except OSError:
            raise PathChanged(f"{folder} is gone") from None
        if (opened.st_dev, opened.st_ino) != (named.st_dev, named.st_ino) or stat.S_ISLNK(named.st_mode):
            raise PathChanged(f"{folder} no longer leads where it was checked") from None
        return
    if actual != folder:
        raise PathChanged(f"{folder} no longer leads where it was checked (now {actual})")


def _existing(dir_fd: int, name: str, path: str) -> os.stat_result | None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise PathChanged(f"{path} became a symlink after it was checked")
    if not stat.S_ISREG(st.st_mode):
        raise NotRegular(f"{path} is not a regular file")
    return st


def _open_folder(folder: str) -> int:
    """A descriptor of `folder`, reached one component at a time from `/` without following any symlink,
    creating what is missing (so nothing is ever created through a symlink swapped in since the check)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open("/", flags)
    try:
        for part in (p for p in folder.split("/") if p):
            try:
                nxt = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                nxt = os.open(part, flags, dir_fd=fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PathChanged(f"{folder} no longer leads where it was checked") from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def temp_name(name: str) -> str:
    """Hidden, next to the file, never guessed in advance, and within NAME_MAX for any name."""
    base = name.encode("utf-8", "surrogateescape")[:180].decode("utf-8", "ignore")
    return f".{base}.acp-{secrets.token_hex(8)}.tmp"


def write_atomically(path: str, data: bytes) -> bool:
    """Replace (or create) the file at the checked real `path` with `data`. Returns whether it existed.
    Raises PathChanged, NotRegular or OSError."""
    folder, name = os.path.split(path)
    dir_fd = _open_folder(folder)
    tmp: str | None = None
    try:
        _check_folder(dir_fd, folder)
        before = _existing(dir_fd, name, path)
        tmp = temp_name(name)
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd
        )
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if before is not None:
                # Another owner's file becomes ours, as with any editor's save.
                with contextlib.suppress(PermissionError):
                    os.fchown(fd, before.st_uid, before.st_gid)
                os.fchmod(fd, stat.S_IMODE(before.st_mode))
            else:
                os.fchmod(fd, 0o666 & ~_umask())
            os.fsync(fd)
        finally:
            os.close(fd)
        # Right before the rename, the folder and the file must still be what was checked.
        _check_folder(dir_fd, folder)
        _existing(dir_fd, name, path)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        tmp = None
        os.fsync(dir_fd)
        return before is not None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
        os.close(dir_fd)

"""Writing a file that no editor buffer holds, atomically and only where the sandbox checked.

For an agent's write too large to go through a buffer: sending tens of MiB to Neovim holds its event loop for
as long as it takes to receive and decode them, whatever Lua then does. So the host writes such a file itself,
off the event loop, with the guarantees of the buffer path (`lua/acp_nvim/editor/fs/save.lua`): a temp file
created exclusively under an unpredictable name next to the file, fsync, the file's permission bits and owner,
rename over the file, fsync of the folder. A reader or a crash sees the old bytes or the new, never a mix.

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

from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS
from acp_nvim.protocol.errors import RESOURCE_NOT_FOUND


class PathChanged(Exception):
    """The checked path no longer leads to what was checked (a symlink or another kind of file on it)."""


class NotRegular(Exception):
    """The path is a FIFO, socket, device or folder: nothing a text write may replace."""


def current_umask() -> int:
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
        kind = "directory" if stat.S_ISDIR(st.st_mode) else _KINDS.get(stat.S_IFMT(st.st_mode), "unknown")
        raise NotRegular(f"{path} is not a regular file ({kind}); refusing to write it")
    return st


def _why_changed(folder: str, part: str, parent_fd: int) -> str:
    # O_NOFOLLOW | O_DIRECTORY on a symlink fails with ENOTDIR on Linux, ELOOP elsewhere: lstat tells.
    try:
        is_link = stat.S_ISLNK(os.stat(part, dir_fd=parent_fd, follow_symlinks=False).st_mode)
    except OSError:
        is_link = False
    if is_link:
        return f"{folder} no longer leads where it was checked: {part} is now a symlink"
    return f"{folder} no longer leads where it was checked"


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
                    raise PathChanged(_why_changed(folder, part, fd)) from None
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
        # The descriptor is the checked folder by construction (no symlink followed on the way to it).
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
                os.fchmod(fd, 0o666 & ~current_umask())
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


class ReadRefused(Exception):
    """A read answered with an error: `code` is the JSON-RPC code (as `jsonrpc` numbers them)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


_KINDS = {
    stat.S_IFIFO: "fifo",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "char",
    stat.S_IFBLK: "block",
    stat.S_IFLNK: "link",
}


def read_text(path: str, max_bytes: int) -> str:
    """The text of the file at the checked real `path`, as an agent's read gets it: exactly valid UTF-8 with
    no NUL byte, CRLF folded to LF, at most `max_bytes` bytes; ReadRefused otherwise. The file is opened
    without following a symlink swapped in since the check and without blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ReadRefused(RESOURCE_NOT_FOUND, f"file not found: {path}") from None
    except NotADirectoryError:
        raise ReadRefused(RESOURCE_NOT_FOUND, f"file not found: {path}") from None
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise ReadRefused(INVALID_PARAMS, f"refusing to read {path}: it became a symlink") from None
        raise ReadRefused(INTERNAL_ERROR, f"cannot read {path}: {err.strerror}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ReadRefused(INVALID_PARAMS, f"{path} is a directory, not a text file")
        if not stat.S_ISREG(st.st_mode):
            kind = _KINDS.get(stat.S_IFMT(st.st_mode), "unknown")
            raise ReadRefused(INVALID_PARAMS, f"{path} is not a regular file ({kind})")
        if st.st_size > max_bytes:
            raise ReadRefused(
                INVALID_PARAMS, f"{path} is too large to read: {st.st_size} bytes, the limit is {max_bytes}"
            )
        # One byte more than the limit tells that the file grew past it since the stat.
        data = os.read(fd, max_bytes + 1) if st.st_size else b""
        while len(data) <= max_bytes:
            more = os.read(fd, max_bytes + 1 - len(data))
            if not more:
                break
            data += more
        if len(data) > max_bytes:
            raise ReadRefused(INVALID_PARAMS, f"{path} grew beyond the read limit of {max_bytes} bytes")
    except OSError as err:
        raise ReadRefused(INTERNAL_ERROR, f"cannot read {path}: {err.strerror}") from None
    finally:
        os.close(fd)
    if b"\0" in data:
        raise ReadRefused(INVALID_PARAMS, f"{path} is binary (contains NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReadRefused(INVALID_PARAMS, f"{path} is not valid UTF-8 text") from None
    return text.replace("\r\n", "\n") if "\r" in text else text


def slice_lines(text: str, line: int | None, limit: int | None) -> str:
    """What a read with `line` (1-based) and `limit` (lines) answers: the whole text when neither is given,
    else those lines joined by "\\n" without a trailing newline ("" past the end or for limit 0)."""
    if line is None and limit is None:
        return text
    if limit == 0:
        return ""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it starts none
    start = (line or 1) - 1
    chosen = lines[start:] if limit is None else lines[start : start + limit]
    return "\n".join(chosen)

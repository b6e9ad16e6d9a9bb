"""A folder's shadow index used by one process at a time: an OS lock (`flock`) on a file beside it, held
around every use of the index (`ShadowRepo.snapshot`: the repository's set-up, the index checksum the
shortcut trusts, `ls-files`, `add`, `write-tree`).

Two Neovims on one folder share its shadow repository and index. Without it git's own `index.lock` fails the
one that comes second ("File exists"), a `git init` of both fails on `config.lock`, and the checksum shortcut
can read the other's index between its check and its use (and give a tree that is not the folder's). Why a
lock and not an index per process: the index is the stat cache that keeps a snapshot fast, and a new one is
cold (every file read again, and another per Neovim left behind); two Neovims on one folder at the very same
moment are rare, and then one waits a snapshot's few milliseconds. (Within one host two chats on a folder
never meet here: the folder's `anyio.Lock`, `Snapshots.lock`, keeps their snapshots apart already.)

The lock is tried without blocking (`LOCK_NB`: a syscall of microseconds, on the event loop), and while the
other holds it, tried again at growing intervals until the deadline. A thread blocked in `flock` could not be
called back at the deadline: it would take the lock after we gave up, and a stuck holder would pile up
blocked threads, one a prompt. A holder that dies lets go with its process (the kernel drops its locks); one
that hangs is waited for `WAIT_S`, then the checkpoint fails with a message and the prompt goes without it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
from collections.abc import AsyncIterator

import anyio

log = logging.getLogger("acp_nvim.checkpoints")

# How long a snapshot waits for another process's (a few ms: up to seconds for the first snapshot of a large
# folder) before the prompt goes without its checkpoint.
WAIT_S = 5.0
RETRY_FIRST_S = 0.001
RETRY_MAX_S = 0.025


def lock_path(index: str) -> str:
    # Not `<index>.lock`: that one is git's own, created and removed by every command that writes the index.
    return index + ".flock"


@contextlib.asynccontextmanager
async def held(path: str, folder: str, wait_s: float = WAIT_S) -> AsyncIterator[None]:
    """The lock at `path` held by this process (TimeoutError, naming `folder`, after `wait_s`)."""
    fd = _open(path)
    try:
        await _take(fd, path, folder, wait_s)
        yield
    finally:
        # Its last descriptor closed, the lock is let go.
        os.close(fd)


def _open(path: str) -> int:
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o600)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return os.open(path, flags, 0o600)


async def _take(fd: int, path: str, folder: str, wait_s: float) -> None:
    deadline = anyio.current_time() + wait_s
    delay = RETRY_FIRST_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as err:
            if err.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                # A file system without locks: as before there were any (git's own `index.lock` still guards
                # the index's writes).
                log.warning("no lock on %s (%s): checkpoints of %s unguarded", path, err, folder)
                return
        left = deadline - anyio.current_time()
        if left <= 0:
            log.warning("%s held by another process for over %g s", path, wait_s)
            raise TimeoutError(
                f"another Neovim has been using the checkpoints of {folder} for over {wait_s:g} s"
            )
        await anyio.sleep(min(delay, left))
        delay = min(delay * 2, RETRY_MAX_S)

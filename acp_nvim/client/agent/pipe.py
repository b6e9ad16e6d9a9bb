"""The agent's stdout as a pipe of our own, read in large blocks.

anyio's process stdout is an asyncio StreamReader: 64 KiB per receive, and a transport that stops reading the
pipe once 128 KiB wait in its buffer. A streaming agent then writes into a full 64 KiB pipe, blocks, wakes for
each few KiB we take, and spends ~40% more of its own CPU than it does talking to a client that drains its
pipe at once. Here the pipe is enlarged (1 MiB, Linux's default ceiling for an unprivileged process) and each
read takes all that is in it, up to `READ_SIZE`: the agent's writes find room, and a stream of small lines
costs one read per megabyte, not one per 64 KiB. What was read is handed on `SLICE_SIZE` at a time, each
after a checkpoint: the lines of one slice are decoded and reduced together, and the host's CPU per update
grows with that batch (its objects leave the caches: 1.3 us per update in 64 KiB batches, 1.7 us in 1 MiB
ones), and the loop runs its other tasks between slices.
"""

from __future__ import annotations

import contextlib
import os

import anyio
from anyio.abc import ByteReceiveStream
from anyio.lowlevel import checkpoint

READ_SIZE = 1 << 20
SLICE_SIZE = 64 << 10
PIPE_SIZE = 1 << 20
# Linux's fcntl to size a pipe (not in Python's fcntl module before 3.10 on every platform).
_F_SETPIPE_SZ = 1031


def open_pipe() -> tuple[int, int]:
    """A pipe for the agent's stdout: (our non-blocking read end, the write end to hand the child)."""
    read_fd, write_fd = os.pipe()
    try:
        import fcntl

        # As large as allowed; a smaller pipe (another OS, a lowered pipe-max-size) still works, only slower.
        with contextlib.suppress(OSError):
            fcntl.fcntl(read_fd, _F_SETPIPE_SZ, PIPE_SIZE)
        os.set_blocking(read_fd, False)
    except BaseException:
        os.close(read_fd)
        os.close(write_fd)
        raise
    return read_fd, write_fd


class PipeReader(ByteReceiveStream):
    """The read end of a non-blocking pipe: each `receive` returns what the pipe holds, up to `max_bytes`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._closed = False
        # What was read and not handed on yet, from `_offset`.
        self._read = b""
        self._offset = 0

    async def receive(self, max_bytes: int = SLICE_SIZE) -> bytes:
        # A checkpoint per slice, as anyio's streams have: an agent that never lets its pipe empty must not
        # keep the loop from everything else (Neovim's requests, the writer, timers).
        await checkpoint()
        if self._closed:
            raise anyio.ClosedResourceError
        if self._offset >= len(self._read):
            self._read, self._offset = await self._read_pipe(), 0
        start = self._offset
        self._offset = start + max_bytes
        if start == 0 and len(self._read) <= max_bytes:
            return self._read
        return self._read[start : self._offset]

    async def _read_pipe(self) -> bytes:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._read = b""
        # A task waiting for the pipe to be readable is woken (ClosedResourceError) before the fd is reused.
        anyio.notify_closing(self._fd)
        os.close(self._fd)

    async def aclose(self) -> None:
        self.close()

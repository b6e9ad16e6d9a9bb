"""An anyio `Process` for a child this process spawned without anyio (`prespawn`): pipes and a pid.

The pipes are read and written non-blocking, waiting on the event loop (`anyio.wait_readable`/`wait_writable`)
when they have nothing to give or no room. The exit is seen through a pidfd where the kernel has them
(Linux 5.3+), else by polling `waitpid`.
"""

from __future__ import annotations

import contextlib
import os
import signal

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, ByteSendStream, Process

READ_SIZE = 65536
# Where there is no pidfd: how often a running child is asked whether it has exited.
EXIT_POLL_SECONDS = 0.05


class PipeReceiveStream(ByteReceiveStream):
    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    async def receive(self, max_bytes: int = READ_SIZE) -> bytes:
        # A checkpoint even when the pipe has data: an agent writing faster than we read would otherwise keep
        # this task from ever yielding, and the loop's other tasks (the flush to Neovim each frame) would wait
        await anyio.lowlevel.checkpoint()
        while True:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        _close(self)


class PipeSendStream(ByteSendStream):
    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd: int | None = fd

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint()
        view = memoryview(item)
        while view:
            if self._fd is None:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except BrokenPipeError as err:
                raise anyio.BrokenResourceError from err
            view = view[written:]

    async def aclose(self) -> None:
        _close(self)


def _close(stream: PipeReceiveStream | PipeSendStream) -> None:
    fd, stream._fd = stream._fd, None
    if fd is not None:
        anyio.notify_closing(fd)
        os.close(fd)


class AdoptedProcess(Process):
    """A child of this process, with its stdio pipes: what `anyio.open_process` would have returned."""

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int) -> None:
        self._pid = pid
        self._returncode: int | None = None
        self._stdin = PipeSendStream(stdin)
        self._stdout = PipeReceiveStream(stdout)
        self._stderr = PipeReceiveStream(stderr)

    async def wait(self) -> int:
        while True:
            if self._returncode is not None:
                return self._returncode
            if self._reap():
                continue
            pidfd = _pidfd_open(self._pid)
            if pidfd is None:
                await anyio.sleep(EXIT_POLL_SECONDS)
                continue
            try:
                await anyio.wait_readable(pidfd)
            finally:
                anyio.notify_closing(pidfd)
                os.close(pidfd)

    def _reap(self) -> bool:
        try:
            pid, status = os.waitpid(self._pid, os.WNOHANG)
        except ChildProcessError:
            # Reaped elsewhere: the status is lost.
            self._returncode = -1 if self._returncode is None else self._returncode
            return True
        if pid == 0:
            return False
        self._returncode = os.waitstatus_to_exitcode(status)
        return True

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, sig: signal.Signals) -> None:
        if self._returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, sig)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> ByteReceiveStream:
        return self._stderr

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._stdin.aclose()
            await self._stdout.aclose()
            await self._stderr.aclose()
            await self.wait()


def _pidfd_open(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd

"""The process's own stdin and stdout as the byte streams of a JSON-RPC connection, for a peer that speaks on
them (the demo agent, the MCP server): raw reads of the pipe and blocking writes, each in a worker thread."""

from __future__ import annotations

import os
import sys

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream


class StdinStream(ByteReceiveStream):
    """Raw reads of a pipe fd in a worker thread: they return what is there, not wait for a full buffer."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await anyio.to_thread.run_sync(os.read, self._fd, max_bytes, abandon_on_cancel=True)
        if not data:
            raise anyio.EndOfStream
        return data

    async def aclose(self) -> None:
        pass


class StdoutStream(ByteSendStream):
    """Blocking writes in a worker thread, so a peer that reads slowly never stalls the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    async def send(self, item: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_all, item)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    async def aclose(self) -> None:
        pass


def protocol_stdio() -> tuple[StdinStream, StdoutStream]:
    """stdin and a private copy of stdout for the protocol; fd 1 (and sys.stdout) then point at stderr, so
    a stray print or library write can never corrupt the JSON-RPC stream."""
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return StdinStream(0), StdoutStream(protocol_out)

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from unittest import mock

import anyio
import pytest

from acp_nvim.client.agent import pipe
from acp_nvim.client.agent.pipe import PIPE_SIZE, SLICE_SIZE, PipeReader, open_pipe

# Linux's fcntl to read a pipe's size.
F_GETPIPE_SZ = 1032
LINUX = sys.platform.startswith("linux")


def _child_writing(count: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        f"import sys; sys.stdout.buffer.write(b''.join(b'%07d\\n' % i for i in range({count})))",
    ]


def _lines(count: int) -> bytes:
    return b"".join(b"%07d\n" % i for i in range(count))


async def _read_all(reader: PipeReader) -> list[bytes]:
    chunks = []
    try:
        while True:
            chunks.append(await reader.receive())
    except anyio.EndOfStream:
        return chunks


@pytest.mark.skipif(not LINUX, reason="pipe sizes are Linux's")
def test_the_pipe_is_enlarged_so_that_an_agent_writes_ahead_of_us_without_waiting() -> None:
    """512 KB, 8 times a default pipe: the agent writes it all and exits before we read a byte; it is read
    from the pipe at once, and handed on in slices."""
    limit = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    reads: list[int] = []
    real_read = os.read

    def read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        reads.append(len(data))
        return data

    async def main() -> list[bytes]:
        read_fd, write_fd = open_pipe()
        assert fcntl.fcntl(read_fd, F_GETPIPE_SZ) >= min(PIPE_SIZE, limit)
        assert not os.get_blocking(read_fd)
        reader = PipeReader(read_fd)
        process = await anyio.open_process(_child_writing(64_000), stdout=write_fd)
        os.close(write_fd)
        with anyio.fail_after(30):
            assert await process.wait() == 0
            with mock.patch.object(pipe.os, "read", read):
                chunks = await _read_all(reader)
        reader.close()
        return chunks

    if limit < 512 * 1024:
        pytest.skip("pipe-max-size is lowered on this machine")
    chunks = anyio.run(main)
    assert b"".join(chunks) == _lines(64_000)
    assert reads == [len(_lines(64_000)), 0]
    assert max(map(len, chunks)) == SLICE_SIZE and len(chunks) == -(-len(_lines(64_000)) // SLICE_SIZE)


def test_a_stream_larger_than_the_pipe_is_read_whole_then_its_end_then_closed() -> None:
    async def main() -> bytes:
        read_fd, write_fd = open_pipe()
        reader = PipeReader(read_fd)
        process = await anyio.open_process(_child_writing(400_000), stdout=write_fd)
        os.close(write_fd)
        with anyio.fail_after(30):
            chunks = await _read_all(reader)
            await process.wait()
        reader.close()
        with pytest.raises(anyio.ClosedResourceError):
            await reader.receive()
        return b"".join(chunks)

    assert anyio.run(main) == _lines(400_000)

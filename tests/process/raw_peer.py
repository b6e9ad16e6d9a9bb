"""A raw JSON-RPC line peer over a subprocess's stdin/stdout, for tests that must not depend on our client."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

Message = dict[str, Any]


class RawPeer:
    """Plays the client: numbers its own requests, reads every line the agent writes, keeps them in order."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._stdin = process.stdin
        self._stdout = BufferedByteReceiveStream(process.stdout)
        self._next_id = 0
        self.received: list[Message] = []

    @classmethod
    @asynccontextmanager
    async def spawn(
        cls, argv: Sequence[str], env: dict[str, str] | None = None, cwd: str | None = None
    ) -> AsyncIterator[RawPeer]:
        # stderr is inherited so pytest's fd capture shows the agent's log on failure.
        process = await anyio.open_process(list(argv), env=env, cwd=cwd, stderr=None)
        peer = cls(process)
        try:
            yield peer
        finally:
            with anyio.CancelScope(shield=True):
                await peer.close()

    async def close(self) -> None:
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()
        with anyio.move_on_after(5):
            await self.process.wait()
            return
        self.process.kill()
        await self.process.wait()

    async def send(self, message: Message) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        await self._stdin.send(data)

    async def request(self, method: str, params: Any) -> int:
        request_id = self._next_id
        self._next_id += 1
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def respond(self, request_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def respond_error(self, request_id: Any, code: int, message: str) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    async def recv(self, timeout: float = 10) -> Message:
        with anyio.fail_after(timeout):
            line = await self._stdout.receive_until(b"\n", 16 * 1024 * 1024)
        message: Message = json.loads(line)
        self.received.append(message)
        return message

    async def recv_until(
        self, predicate: Callable[[Message], bool], timeout: float = 10
    ) -> tuple[list[Message], Message]:
        """Messages before the first one matching `predicate`, and that one."""
        skipped: list[Message] = []
        with anyio.fail_after(timeout):
            while True:
                message = await self.recv(timeout)
                if predicate(message):
                    return skipped, message
                skipped.append(message)

    async def response_to(self, request_id: int, timeout: float = 10) -> tuple[list[Message], Message]:
        return await self.recv_until(lambda m: is_response(m, request_id), timeout)

    async def call(self, method: str, params: Any, timeout: float = 10) -> Message:
        """Request and wait for its response, asserting nothing else arrives meanwhile."""
        request_id = await self.request(method, params)
        skipped, response = await self.response_to(request_id, timeout)
        assert not skipped, f"unexpected messages before response to {method}: {skipped}"
        return response

    async def wait_exit(self, timeout: float = 10) -> int:
        with anyio.fail_after(timeout):
            return await self.process.wait()


def is_response(message: Message, request_id: Any) -> bool:
    return (
        "method" not in message
        and message.get("id") == request_id
        and ("result" in message or "error" in message)
    )


def is_request(message: Message, method: str) -> bool:
    return message.get("method") == method and "id" in message


def update_kind(message: Message) -> str | None:
    if message.get("method") != "session/update":
        return None
    kind = message["params"]["update"].get("sessionUpdate")
    return kind if isinstance(kind, str) else None


__all__ = ["Message", "RawPeer", "is_request", "is_response", "update_kind"]

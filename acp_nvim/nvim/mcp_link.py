"""The MCP server's connection back to its Neovim: msgpack-rpc over Neovim's own socket (`v:servername`), on
anyio, so that the server notices at once when Neovim goes (its reader sees the socket close) and a language
server's answer, which Neovim sends later as a notification, arrives without a thread or a poll.

pynvim is not used here: its session is blocking and reads only while a call waits, so a Neovim that quits
between calls would go unnoticed, and importing it costs 55 ms of the server's start. The wire format is
read by `msgpack` (pynvim's own dependency, the streaming unpacker msgpack-rpc needs: msgspec decodes only
whole messages).
"""

from __future__ import annotations

import contextlib
import itertools
import logging

import anyio
import msgpack  # type: ignore[import-untyped]
import msgspec
from anyio.abc import ByteStream

from acp_nvim.app.mcp.port import (
    Buffer,
    Diagnostic,
    LspAnswer,
    LspQuestion,
    LspStarted,
    Selection,
    Unreachable,
)
from acp_nvim.nvim import lua_api

log = logging.getLogger("acp_nvim.mcp")

ANSWER = "acp_mcp_answer"
READ_SIZE = 1 << 16


class NeovimGone(Exception):
    """The connection to Neovim closed (it quit) or could not be made."""


class NeovimError(Exception):
    """Neovim answered a call with an error (a Lua error of the mechanism): its message."""


async def open_stream(address: str) -> ByteStream:
    """Neovim's server address: a socket path, or host:port (`--listen 127.0.0.1:6666`)."""
    try:
        if "/" not in address and ":" in address:
            host, _, port = address.rpartition(":")
            return await anyio.connect_tcp(host, int(port))
        return await anyio.connect_unix(address)
    except (OSError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise NeovimGone(f"cannot connect to Neovim at {address}: {why}") from None


class NeovimLink:
    """One msgpack-rpc channel to Neovim: requests answered by id, and the language servers' answers by token
    (`lua/acp_nvim/editor/mcp.lua`)."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream
        self._ids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._waiting: dict[int, tuple[anyio.Event, list[object]]] = {}
        self._answers: dict[int, tuple[anyio.Event, list[object]]] = {}
        self._write_lock = anyio.Lock()
        self.closed = anyio.Event()
        self.channel = 0

    async def run(self) -> None:
        """Reads until Neovim closes the connection; then every call waiting fails and `closed` is set."""
        unpacker = msgpack.Unpacker(raw=False, unicode_errors="replace", strict_map_key=False)
        try:
            while True:
                try:
                    data = await self._stream.receive(READ_SIZE)
                except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                    return
                unpacker.feed(data)
                for message in unpacker:
                    self._dispatch(message)
        finally:
            self.closed.set()
            for event, _ in [*self._waiting.values(), *self._answers.values()]:
                event.set()

    def _dispatch(self, message: object) -> None:
        if not isinstance(message, list) or not message:
            return
        if message[0] == 1 and len(message) == 4:
            waiter = self._waiting.pop(message[1], None)
            if waiter is not None:
                waiter[1].extend((message[2], message[3]))
                waiter[0].set()
        elif message[0] == 2 and len(message) == 3 and message[1] == ANSWER:
            params = message[2]
            if isinstance(params, list) and len(params) == 2:
                waiter = self._answers.pop(params[0], None)
                if waiter is not None:
                    waiter[1].append(params[1])
                    waiter[0].set()

    async def request(self, method: str, *args: object) -> object:
        if self.closed.is_set():
            raise NeovimGone("Neovim has quit")
        msgid = next(self._ids)
        event, box = anyio.Event(), list[object]()
        self._waiting[msgid] = (event, box)
        try:
            async with self._write_lock:
                await self._stream.send(msgpack.packb([0, msgid, method, list(args)]))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            self._waiting.pop(msgid, None)
            raise NeovimGone("Neovim has quit") from None
        await event.wait()
        if not box:
            raise NeovimGone("Neovim has quit")
        error, result = box
        if error is not None:
            raise NeovimError(str(error[1] if isinstance(error, list) and len(error) > 1 else error))
        return result

    async def lua(self, code: str, *args: object) -> object:
        return await self.request("nvim_exec_lua", code, list(args))

    async def start(self) -> None:
        """Learns its channel id (the language servers' answers are sent to it)."""
        info = await self.request("nvim_get_api_info")
        if isinstance(info, list) and info and isinstance(info[0], int):
            self.channel = info[0]

    async def diagnostics(self, paths: list[str] | None) -> list[Diagnostic]:
        return msgspec.convert(_list(await self.lua(lua_api.MCP_DIAGNOSTICS, paths)), list[Diagnostic])

    async def buffers(self) -> list[Buffer]:
        return msgspec.convert(_list(await self.lua(lua_api.MCP_BUFFERS)), list[Buffer])

    async def selection(self) -> Selection:
        return msgspec.convert(await self.lua(lua_api.MCP_SELECTION), Selection)

    async def lsp(self, question: LspQuestion, timeout: float = 10.0) -> LspAnswer:
        """A language server request through the buffer of `path`; the answer, or why there is none."""
        token = next(self._tokens)
        event, box = anyio.Event(), list[object]()
        self._answers[token] = (event, box)
        started = msgspec.convert(
            await self.lua(
                lua_api.MCP_LSP,
                self.channel,
                token,
                question.method,
                question.path,
                question.line,
                question.column,
                question.query,
            ),
            LspStarted,
        )
        if not started.ok:
            self._answers.pop(token, None)
            raise Unreachable(started.fact or "no_server")
        try:
            with anyio.move_on_after(timeout) as scope:
                await event.wait()
        finally:
            # Timed out, or the client cancelled the call: the servers' requests are cancelled too.
            if self._answers.pop(token, None) is not None and not self.closed.is_set():
                with anyio.CancelScope(shield=True), contextlib.suppress(NeovimGone, NeovimError):
                    await self.lua(lua_api.MCP_CANCEL, token)
        if scope.cancelled_caught:
            raise Unreachable("timeout")
        if not box:
            raise NeovimGone("Neovim has quit")
        return msgspec.convert(box[0], LspAnswer)

    async def aclose(self) -> None:
        await self._stream.aclose()


def _list(value: object) -> object:
    """Lua's empty table comes as an empty map."""
    return [] if value == {} else value

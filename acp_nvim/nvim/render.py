"""Coalesced rendering of one chat: session changes become at most one Lua call per frame.

An agent streaming 10,000 chunks must cost Neovim tens of calls, not 10,000: updates mark the state dirty, and
a flush goes at most once a frame. The first change after a quiet frame goes at once (the agent's first words
are not held back), the ones that follow it within the frame wait for its end, together; the start and the end
of a turn flush at once, out of that rhythm: the prompt's call does not make the agent's first words, which
follow it within milliseconds, wait for the frame it would have begun.

The ops travel as JSON text (msgspec, in C), in chunks of at most `CHUNK_OPS` ops, decoded by Lua with
`vim.json.decode` (C again) as its drain reaches each chunk. Handed to pynvim as Python lists and dicts, the
ops of a replayed history of 10,000 updates (5,000 items) cost ~150 ms: pynvim walks every nested value in
Python before packing it, then Neovim converts the msgpack objects to Lua tables in one go, inside the call,
in its main loop. As JSON they cost ~9 ms to encode, and Neovim decodes a chunk (~1 ms) at a time between the
keys the user types.

A notification carries at most `FRAME_BYTES` of chunks (one chunk more when a single one is larger); what
is left waits for the next frames, in order. Neovim reads a whole notification in one go before anything
else: 50 MiB of text in one call held it for seconds, whatever the Lua side did with it afterwards.
"""

from __future__ import annotations

import logging
from collections import deque

import anyio
import msgspec

from acp_nvim.app.chat.ops import ChatOp
from acp_nvim.app.chat.view import LineBreaks, ops_for
from acp_nvim.app.port import Spawn
from acp_nvim.client.session.state import SessionState
from acp_nvim.nvim.bridge import FRAME_SECONDS, Bridge
from acp_nvim.nvim.lua_api import LuaApi

log = logging.getLogger("acp_nvim.render")

# Ops per JSON chunk: what Lua decodes in one go (~0.5 ms for 128 ops of a replayed history).
CHUNK_OPS = 128
# A chunk larger than this is split (down to one op); the view keeps single ops smaller (view.SLICE_CHARS).
CHUNK_BYTES = 64 * 1024
# JSON sent to Neovim per notification, about: a frame's worth of work for it to read and decode.
FRAME_BYTES = 256 * 1024

# The output of a running command that the agent runs itself, when nothing else changed, goes at most this
# often: the chat's terminal view redraws every 50 ms, and an agent resending a growing output on every line
# made each frame one more Neovim call (4 a second still show it grow).
OUTPUT_SECONDS = 0.25

_encode = msgspec.json.Encoder().encode


class ChatRenderer:
    def __init__(self, bridge: Bridge, state: SessionState, agent_name: str, spawn: Spawn) -> None:
        self._lua = LuaApi(bridge)
        self._state = state
        self._agent_name = agent_name
        self._spawn = spawn
        self._scheduled = False
        # When the last call went (anyio's clock): the next one waits until a frame after it.
        self._sent_at = -FRAME_SECONDS
        # The last call was a caller's `flush` (a turn's start or end), not the frame's: the next change goes
        # at once all the same.
        self._out_of_frame = True
        self._output_sent = 0.0
        # Set while a flush of output alone waits for OUTPUT_SECONDS: any other change ends the wait.
        self._output_wait: anyio.CancelScope | None = None
        # Encoded chunks not sent yet (beyond a notification's FRAME_BYTES), oldest first.
        self._backlog: deque[bytes] = deque()
        # Where each message's last line stands in the chat (app/chat/line_breaks.py).
        self._breaks: LineBreaks = {}

    def changed(self) -> None:
        """The state changed: render now when nothing went in the last frame or the last call was a caller's
        `flush` (the prompt's), else at the frame's end (several changes in a frame share one call)."""
        if not self._scheduled:
            if self.shows_at_once() and not self._state.only_output_pending():
                self._send()
                return
            self._scheduled = True
            self._spawn(self._flush_after_frame)
        elif self._output_wait is not None and not self._state.only_output_pending():
            self._output_wait.cancel()

    def shows_at_once(self) -> bool:
        if self._scheduled or self._backlog:
            return False
        return self._out_of_frame or self._sent_at + FRAME_SECONDS <= anyio.current_time()

    async def _flush_after_frame(self) -> None:
        await anyio.sleep(max(0.0, self._sent_at + FRAME_SECONDS - anyio.current_time()))
        if self._state.only_output_pending() and not self._backlog:
            wait = self._output_sent + OUTPUT_SECONDS - anyio.current_time()
            if wait > 0:
                with anyio.CancelScope() as self._output_wait:
                    await anyio.sleep(wait)
                self._output_wait = None
            self._output_sent = anyio.current_time()
        self._send()

    def flush(self) -> None:
        """Sends what changed: now, up to a frame's worth; the rest a frame later (and so on). When it sent
        something, the next change goes at once too (unless a backlog is left): this call is the caller's,
        not one of the frame's."""
        if self._send():
            self._out_of_frame = not self._backlog

    def _send(self) -> bool:
        """Sends up to a frame's worth now; whether there was anything to send."""
        self._scheduled = False
        changes = self._state.take_changes()
        backlog = self._backlog
        if changes:
            backlog.extend(encode_ops(ops_for(self._state, changes, self._agent_name, self._breaks)))
        if not backlog:
            return False
        chunks = [backlog.popleft()]
        size = len(chunks[0])
        while backlog and size + len(backlog[0]) <= FRAME_BYTES:
            size += len(backlog[0])
            chunks.append(backlog.popleft())
        self._lua.chat_apply(self._state.session_id, chunks)
        self._sent_at = anyio.current_time()
        self._out_of_frame = False
        if backlog:
            self.changed()
        return True

    def discard(self) -> None:
        """Sends nothing more: the chat is reset for another transcript of the same session id."""
        self._backlog.clear()
        self._breaks.clear()
        self._state.take_changes()


def encode_ops(ops: list[ChatOp]) -> list[bytes]:
    """`ops` as JSON arrays of at most CHUNK_OPS ops and, unless one op alone is larger, CHUNK_BYTES each
    (bytes: a msgpack bin, a Lua string to Neovim)."""
    chunks: list[bytes] = []
    for start in range(0, len(ops), CHUNK_OPS):
        _encode_within(ops[start : start + CHUNK_OPS], chunks)
    return chunks


def _encode_within(ops: list[ChatOp], chunks: list[bytes]) -> None:
    encoded = _encode(ops)
    if len(encoded) <= CHUNK_BYTES or len(ops) == 1:
        chunks.append(encoded)
        return
    # Rare (long texts): halves until each part fits, so the common case costs one encode per chunk.
    middle = len(ops) // 2
    _encode_within(ops[:middle], chunks)
    _encode_within(ops[middle:], chunks)

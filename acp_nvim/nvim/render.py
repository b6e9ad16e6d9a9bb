"""Coalesced rendering of one chat: session changes become at most one Lua call per frame.

An agent streaming 10,000 chunks must cost Neovim tens of calls, not 10,000: updates mark the state dirty and
the first one schedules a flush one frame later; the end of a turn flushes at once.

The ops travel as JSON text (msgspec, in C), in chunks of at most `CHUNK_OPS` ops, decoded by Lua with
`vim.json.decode` (C again) as its drain reaches each chunk. Handed to pynvim as Python lists and dicts, the
ops of a replayed history of 10,000 updates (5,000 items) cost ~150 ms: pynvim walks every nested value in
Python before packing it, then Neovim converts the msgpack objects to Lua tables in one go, inside the call,
in its main loop. As JSON they cost ~9 ms to encode, and Neovim decodes a chunk (~1 ms) at a time between the
keys the user types.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import msgspec

from acp_nvim.client.session import SessionState
from acp_nvim.nvim.bridge import FRAME_SECONDS, Bridge
from acp_nvim.nvim.view import Op, ops_for

log = logging.getLogger("acp_nvim.render")

APPLY = "require('acp_nvim.chat').apply_json(...)"
# Ops per JSON chunk: what Lua decodes in one go (~0.5 ms for 128 ops of a replayed history).
CHUNK_OPS = 128

_encode = msgspec.json.Encoder().encode

Spawn = Callable[[Callable[[], Coroutine[Any, Any, None]]], None]


class ChatRenderer:
    def __init__(self, bridge: Bridge, state: SessionState, agent_name: str, spawn: Spawn) -> None:
        self._bridge = bridge
        self._state = state
        self._agent_name = agent_name
        self._spawn = spawn
        self._scheduled = False

    def changed(self) -> None:
        """The state changed: render within a frame (several changes in a frame share one call)."""
        if not self._scheduled:
            self._scheduled = True
            self._spawn(self._flush_after_frame)

    async def _flush_after_frame(self) -> None:
        await anyio.sleep(FRAME_SECONDS)
        self.flush()

    def flush(self) -> None:
        self._scheduled = False
        changes = self._state.take_changes()
        if not changes:
            return
        ops = ops_for(self._state, changes, self._agent_name)
        self._bridge.lua(APPLY, self._state.session_id, encode_ops(ops))


def encode_ops(ops: list[Op]) -> list[bytes]:
    """`ops` as JSON arrays of at most CHUNK_OPS ops each (bytes: a msgpack bin, a Lua string to Neovim)."""
    return [_encode(ops[start : start + CHUNK_OPS]) for start in range(0, len(ops), CHUNK_OPS)]

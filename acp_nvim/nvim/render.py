"""Coalesced rendering of one chat: session changes become at most one Lua call per frame.

An agent streaming 10,000 chunks must cost Neovim tens of calls, not 10,000: updates mark the state dirty and
the first one schedules a flush one frame later; the end of a turn flushes at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

import anyio

from acp_nvim.client.session import SessionState
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.view import ops_for

log = logging.getLogger("acp_nvim.render")

FRAME_SECONDS = 0.016
APPLY = "require('acp_nvim.chat').apply(...)"

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
        self._bridge.lua(APPLY, self._state.session_id, ops)

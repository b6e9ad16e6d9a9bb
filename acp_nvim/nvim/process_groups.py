"""Tells Neovim which process groups the agents run in, so nothing they started outlives the editor.

The host stops its agents itself (`AgentProcess.stop`), but it cannot when it is the one that dies: a
SIGKILLed host leaves its agents reparented to init, and at `:qa` Neovim may kill the host before it has
finished stopping them. So every agent group is reported to Lua (`lua/acp_nvim/editor/agent_groups.lua`) as
soon as the agent is spawned and withdrawn only once the group is seen empty; Lua signals whatever is still
recorded when the host's job exits and on VimLeavePre. At interpreter exit the host also SIGKILLs the groups
it still knows, in case Neovim is gone too.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable

from acp_nvim.client.agent.process import AgentCommand, GroupEvent, observe_groups
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.lua_api import LuaApi

log = logging.getLogger("acp_nvim.process_groups")


class GroupReporter:
    """Observer of agent process groups: keeps the live set and mirrors it into Lua."""

    def __init__(self, bridge: Bridge) -> None:
        self._lua = LuaApi(bridge)
        # Observers run on the anyio thread; `kill_remaining` may run on whatever thread exits the process.
        self._lock = threading.Lock()
        self._live: dict[int, str] = {}
        self._unsubscribe: Callable[[], None] | None = None

    def install(self) -> GroupReporter:
        if self._unsubscribe is None:
            self._unsubscribe = observe_groups(self)
        return self

    def __call__(self, event: GroupEvent, pgid: int, command: AgentCommand) -> None:
        with self._lock:
            if event == "started":
                self._live[pgid] = command.name
            else:
                self._live.pop(pgid, None)
        try:
            if event == "started":
                self._lua.reaper_add(pgid, command.name)
            else:
                self._lua.reaper_remove(pgid)
        except Exception:
            # Neovim already gone (interpreter exit): Lua has nothing left to keep in step with.
            log.debug("could not report process group %d %s to Neovim", pgid, event)

    def live(self) -> dict[int, str]:
        with self._lock:
            return dict(self._live)

    def kill_remaining(self) -> list[int]:
        """SIGKILL each group not seen empty yet: at interpreter exit, once the polite stop had its chance."""
        killed: list[int] = []
        for pgid in self.live():
            try:
                os.killpg(pgid, signal.SIGKILL)
                killed.append(pgid)
            except ProcessLookupError:
                pass
            except PermissionError as err:
                log.warning("cannot signal process group %d: %s", pgid, err)
        if killed:
            log.info("killed agent process groups left at exit: %s", killed)
        return killed

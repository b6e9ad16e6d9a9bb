"""Asking in Lua, answered later in Python: a picker's choice, a login terminal's exit code, a terminal job's
exit status.

The anyio side opens a slot, hands its token to Lua and awaits the slot; Lua answers with
`acp_reply(token, value)` (`answer` in `lua/acp_nvim/ui/ask.lua`) whenever the answer exists.
Nothing polls, and an answer for a slot nobody waits on any more (the request was cancelled, the agent died)
is dropped.

Pickers are shown one at a time, whoever asks: `vim.ui.select` implementations are not meant to be stacked, so
the permission broker, the sandbox question, the session/auth/mode pickers and elicitation forms all hold
`pickers` while theirs is open, and a question arriving meanwhile waits its turn (anyio locks are fair: in
order of arrival).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import anyio

from acp_nvim.app.port import Choice
from acp_nvim.nvim import lua_api, lua_values
from acp_nvim.nvim.lua_values import LuaValue

log = logging.getLogger("acp_nvim.ui")


__all__ = ["Choice", "Slot", "Ui"]


class Slot:
    """One answer to wait for; `token` is what Lua sends back with it."""

    def __init__(self, token: int) -> None:
        self.token = token
        self.value: LuaValue = None
        self._done = anyio.Event()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def set(self, value: LuaValue) -> None:
        if not self._done.is_set():
            self.value = value
            self._done.set()

    async def wait(self) -> LuaValue:
        await self._done.wait()
        return self.value


class Ui:
    """Only used from the anyio thread."""

    def __init__(self, lua: Callable[..., None]) -> None:
        """`lua(code, *args)` runs Lua without waiting (the bridge)."""
        self._lua = lua
        self._tokens = itertools.count(1)
        self._open: dict[int, Slot] = {}
        # The one queue of pickers (see the module docstring).
        self.pickers = anyio.Lock()

    @contextmanager
    def slot(self) -> Iterator[Slot]:
        """A token for one late answer, valid inside the block."""
        slot = Slot(next(self._tokens))
        self._open[slot.token] = slot
        try:
            yield slot
        finally:
            self._open.pop(slot.token, None)

    async def ask(self, code: str, *args: LuaValue) -> LuaValue:
        """Runs `code` with a fresh token before `args` and waits for the answer Lua sends with it."""
        with self.slot() as slot:
            return await self.ask_with(slot, code, *args)

    async def ask_with(self, slot: Slot, code: str, *args: LuaValue) -> LuaValue:
        """`ask` with a slot the caller holds, so it can resolve the slot itself (a cancel)."""
        self._lua(code, slot.token, *args)
        return await slot.wait()

    def resolve(self, token: LuaValue, value: LuaValue) -> None:
        """An answer from Lua (`acp_reply`)."""
        slot = self._open.get(token) if isinstance(token, int) else None
        if slot is None:
            log.debug("answer for unknown or finished token %r dropped", token)
            return
        slot.set(value)

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        """The id the user picked, or None when the picker was dismissed."""
        if not choices:
            return None
        items = [lua_values.PickerItem(id=choice.id, label=choice.label) for choice in choices]
        request = lua_values.SelectRequest(prompt=prompt, kind=kind, items=items)
        async with self.pickers:
            value = await self.ask(lua_api.ASK_SELECT, lua_values.to_lua(request))
        known = {choice.id for choice in choices}
        return value if isinstance(value, str) and value in known else None

    async def ask_text(self, prompt: str, default: str) -> str | None:
        """What the user typed (`vim.ui.input`), or None when dismissed; in the one queue of pickers."""
        request = lua_values.InputRequest(prompt=prompt, default=default)
        async with self.pickers:
            value = await self.ask(lua_api.ASK_INPUT, lua_values.to_lua(request))
        return value if isinstance(value, str) else None

    async def terminal(self, title: str, argv: Sequence[str], env: dict[str, str]) -> int:
        """Runs `argv` in a Neovim terminal window; returns its exit code (-1 when it could not start)."""
        request = lua_values.LoginTerminalRequest(title=title, argv=list(argv), env=env)
        value = await self.ask(lua_api.ASK_TERMINAL, lua_values.to_lua(request))
        return value if isinstance(value, int) else -1

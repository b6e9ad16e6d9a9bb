"""Questions the anyio side waits on: a choice through `vim.ui.select`, the exit of a terminal job.

Lua shows the picker (or runs the terminal) and answers with `acp_ui_answer(id, value)`. Pickers are shown one
at a time: `vim.ui.select` implementations are not meant to be stacked, and a second question arriving while
the first is open waits its turn. An answer for a question nobody waits for any more is ignored.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

log = logging.getLogger("acp_nvim.ui")

SELECT = "require('acp_nvim.ui').select(...)"
TERMINAL = "require('acp_nvim.ui').terminal(...)"


@dataclass(frozen=True)
class Choice:
    """One item of a picker: `id` comes back when chosen, `label` is what the user reads."""

    id: str
    label: str


@dataclass
class _Question:
    answered: anyio.Event = field(default_factory=anyio.Event)
    value: Any = None


class UiRequests:
    def __init__(self, lua: Callable[..., None]) -> None:
        self._lua = lua
        self._ids = itertools.count(1)
        self._open: dict[int, _Question] = {}
        self._picker = anyio.Lock()

    async def _ask(self, code: str, *args: Any) -> Any:
        question_id = next(self._ids)
        question = _Question()
        self._open[question_id] = question
        try:
            self._lua(code, question_id, *args)
            await question.answered.wait()
            return question.value
        finally:
            self._open.pop(question_id, None)

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        """The id the user picked, or None when the picker was dismissed."""
        if not choices:
            return None
        items = [{"id": choice.id, "label": choice.label} for choice in choices]
        async with self._picker:
            value = await self._ask(SELECT, {"prompt": prompt, "kind": kind, "items": items})
        known = {choice.id for choice in choices}
        return value if isinstance(value, str) and value in known else None

    async def terminal(self, title: str, argv: Sequence[str], env: dict[str, str]) -> int:
        """Runs `argv` in a Neovim terminal window; returns its exit code (-1 when it could not start)."""
        value = await self._ask(TERMINAL, {"title": title, "argv": list(argv), "env": env})
        return value if isinstance(value, int) else -1

    def answer(self, question_id: int, value: Any) -> None:
        question = self._open.get(question_id)
        if question is None or question.answered.is_set():
            log.debug("late answer for question %s ignored", question_id)
            return
        question.value = value
        question.answered.set()

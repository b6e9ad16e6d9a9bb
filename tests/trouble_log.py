"""How often an agent's trouble of one kind happened, read from the log lines `client/agent/diagnostics.py`
writes: each of its first messages ("agent X sent a line that is not JSON …") counts one, each of its counts
("agent X sent 999 more lines that are not JSON") its number."""

from __future__ import annotations

import re
from collections.abc import Iterable

from acp_nvim.client.agent.diagnostics import PHRASES, TroubleKind


def troubles_logged(messages: Iterable[str], kind: TroubleKind) -> int:
    first, more = PHRASES[kind]
    once = re.compile(rf"agent \S+ {re.escape(first)}")
    counted = re.compile(rf"agent \S+ sent (\d+) {re.escape(more)}")
    total = 0
    for message in messages:
        if once.match(message):
            total += 1
        elif match := counted.match(message):
            total += int(match.group(1))
    return total


def troubles_by_kind(messages: Iterable[str]) -> dict[str, int]:
    """`troubles_logged` of every kind that happened at all."""
    shown = list(messages)
    counts = {kind: troubles_logged(shown, kind) for kind in PHRASES}
    return {kind: count for kind, count in counts.items() if count}

"""What `status().state` shows before the host has answered: the one table of it, `status_facts.json`.

The state is Python's (`status.py` builds it from the agent's lifecycle and its session). But the statusline
must show at once that a start or a prompt is under way, before the host exists or answers, and something
must say "error" when the host died or the configuration is invalid, when no Python runs to say it. So Lua
records *facts* ("a start was requested", "a prompt was submitted", "the host exited") and shows, for each,
what this table declares; the next status the host pushes replaces it. Data (a JSON file beside this module,
which `lua/acp_nvim/ui/status.lua` reads from the plugin's tree) because Lua needs it before any host runs;
this module checks it when the host loads, and the host's own messages come from it. Lua writes no state
name and no rule of its own.

A fact's entry: `state`, what is shown; `in`, the states it applies in (all when absent; otherwise the state
is left as it is, or, where `refused` names a message for the current state (`*` for any other), the action
is refused with that message); `reset`, the status starts afresh (a new agent) rather than keeping its
fields; `clear`, fields that no longer hold (the dead host's session).
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from acp_nvim.app.views import State


class Fact(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    state: State
    reset: bool = False
    clear: list[str] = []
    refused: dict[str, str] = {}
    # `in` is a keyword in Python.
    applies_in: list[State] | None = msgspec.field(default=None, name="in")


class StatusFacts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    no_host: State
    chat_coming_in: list[State]
    messages: dict[str, str]
    facts: dict[str, Fact]


TABLE_PATH = Path(__file__).with_name("status_facts.json")
FACTS = msgspec.json.decode(TABLE_PATH.read_bytes(), type=StatusFacts)

for _name, _fact in FACTS.facts.items():
    for _message in _fact.refused.values():
        if _message not in FACTS.messages:
            raise ValueError(f"{TABLE_PATH.name}: fact {_name!r} refuses with unknown message {_message!r}")

#: Why a prompt is refused while the agent works: the same words whether Lua or the host refuses it.
BUSY = FACTS.messages["busy"]

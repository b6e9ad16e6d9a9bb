"""The ACP v1 method table: who handles each method, its params and result types (no I/O).

Built from the ``x-method``/``x-side`` annotations the generator copies out of the official schema
(``schema.SCHEMA_METHODS``), so a method added to the schema appears here on regeneration.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from acp_nvim.protocol import schema

#: The protocol version this client speaks (sent in ``initialize``).
PROTOCOL_VERSION: Final = 1

Side = Literal["agent", "client", "protocol"]

# Methods handled by the agent (we call them).
INITIALIZE: Final = "initialize"
AUTHENTICATE: Final = "authenticate"
LOGOUT: Final = "logout"
SESSION_NEW: Final = "session/new"
SESSION_LOAD: Final = "session/load"
SESSION_RESUME: Final = "session/resume"
SESSION_CLOSE: Final = "session/close"
SESSION_LIST: Final = "session/list"
SESSION_DELETE: Final = "session/delete"
SESSION_SET_MODE: Final = "session/set_mode"
SESSION_SET_CONFIG_OPTION: Final = "session/set_config_option"
SESSION_PROMPT: Final = "session/prompt"
SESSION_CANCEL: Final = "session/cancel"
# Methods handled by the client (the agent calls us).
SESSION_REQUEST_PERMISSION: Final = "session/request_permission"
SESSION_UPDATE: Final = "session/update"
FS_READ_TEXT_FILE: Final = "fs/read_text_file"
FS_WRITE_TEXT_FILE: Final = "fs/write_text_file"
TERMINAL_CREATE: Final = "terminal/create"
TERMINAL_OUTPUT: Final = "terminal/output"
TERMINAL_WAIT_FOR_EXIT: Final = "terminal/wait_for_exit"
TERMINAL_KILL: Final = "terminal/kill"
TERMINAL_RELEASE: Final = "terminal/release"
ELICITATION_CREATE: Final = "elicitation/create"
ELICITATION_COMPLETE: Final = "elicitation/complete"
# Either side may send it.
CANCEL_REQUEST: Final = "$/cancel_request"


class MethodSpec(msgspec.Struct, frozen=True):
    """One method: ``side`` is who handles it ("agent": we call it; "client": we handle it;
    "protocol": both directions). ``result`` is None for notifications."""

    name: str
    params: Any
    result: Any
    side: Side
    is_notification: bool


def _side(value: str) -> Side:
    if value not in ("agent", "client", "protocol"):
        raise ValueError(f"unknown x-side {value!r} in the generated schema")
    return value  # type: ignore[return-value]


METHODS: Final[dict[str, MethodSpec]] = {
    name: MethodSpec(
        name=name, params=params, result=result, side=_side(side), is_notification=result is None
    )
    for name, (side, params, result) in schema.SCHEMA_METHODS.items()
}

AGENT_METHODS: Final = frozenset(n for n, m in METHODS.items() if m.side == "agent")
CLIENT_METHODS: Final = frozenset(n for n, m in METHODS.items() if m.side == "client")

"""The steering extension: a prompt sent into the agent's running turn instead of after it.

Not in ACP's schema: codex-acp (2.6) advertises it in `initialize`'s `_meta` as `{"steering": {"supported":
true}}` and takes `_session/steering` with the session's id and the prompt's content blocks. Asked with
`idleBehavior: "promptRequired"`, an agent whose turn ended meanwhile answers `promptRequired` instead of
starting a turn of its own with it: the client keeps the prompt and sends it as a prompt of its own turn.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from acp_nvim.protocol import schema as s

METHOD = "_session/steering"

Outcome = Literal["injected", "promptRequired", "startedNewTurn", "failed"]


class SteeringRequest(msgspec.Struct, kw_only=True, rename="camel"):
    session_id: str
    prompt: list[s.ContentBlock]
    meta: dict[str, object] = msgspec.field(
        name="_meta", default_factory=lambda: {"steering": {"idleBehavior": "promptRequired"}}
    )


class SteeringResponse(msgspec.Struct, kw_only=True):
    # An outcome this client does not know reads as "failed": the prompt stays queued.
    outcome: str = "failed"
    reason: str | None = None


def advertised(init: s.InitializeResponse) -> bool:
    """Whether the agent said, in `initialize`, that it takes `_session/steering`."""
    meta = init.meta if isinstance(init.meta, dict) else {}
    steering = meta.get("steering")
    return isinstance(steering, dict) and steering.get("supported") is True

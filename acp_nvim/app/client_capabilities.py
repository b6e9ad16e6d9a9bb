"""What the application adds to the editor's client capabilities, for one agent."""

from __future__ import annotations

import msgspec

from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u


def advertise(
    caps: s.ClientCapabilities, terminal_auth: bool, subagents: bool = False
) -> s.ClientCapabilities:
    """What the application adds to the editor's capabilities for one agent: boolean config options,
    notices and context compaction (always shown here: the chat, `client/session/state.py`), terminal
    login when enabled for it, and, to an agent known to offer subagents (unstable:
    `client/session/subagents.py`), subagents and plans by id (`plan_update`, which such an agent sends for
    a plan it proposes: `client/session/unstable_updates.py`). The unstable schema has no agent capability
    for plans: they go with the one unstable feature the agent is known to speak."""
    session = caps.session or s.ClientSessionCapabilities()
    session = msgspec.structs.replace(
        session,
        config_options=s.SessionConfigOptionsCapabilities(boolean=s.BooleanConfigOptionCapabilities()),
        notices=s.NoticeCapabilities(),
        compaction=s.CompactionCapabilities(),
    )
    auth = msgspec.structs.replace(caps.auth, terminal=terminal_auth)
    caps = msgspec.structs.replace(caps, session=session, auth=auth)
    if not subagents:
        return caps
    return u.ClientCapabilities(
        **msgspec.structs.asdict(caps), subagents=u.SubagentCapabilities(), plan=u.PlanCapabilities()
    )

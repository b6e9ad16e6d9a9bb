"""What the application adds to the editor's client capabilities, for one agent."""

from __future__ import annotations

import msgspec

from acp_nvim.protocol import schema as s


def advertise(caps: s.ClientCapabilities, terminal_auth: bool) -> s.ClientCapabilities:
    """What the application adds to the editor's capabilities for one agent: boolean config options,
    notices and context compaction (always shown here: the chat, `client/session/state.py`), and terminal
    login when enabled for it."""
    session = caps.session or s.ClientSessionCapabilities()
    session = msgspec.structs.replace(
        session,
        config_options=s.SessionConfigOptionsCapabilities(boolean=s.BooleanConfigOptionCapabilities()),
        notices=s.NoticeCapabilities(),
        compaction=s.CompactionCapabilities(),
    )
    auth = msgspec.structs.replace(caps.auth, terminal=terminal_auth)
    return msgspec.structs.replace(caps, session=session, auth=auth)

"""The probe words the line `:checkhealth` shows for an agent's handshake; health.lua shows it as it is."""

from __future__ import annotations

from acp_nvim.probe import initialize_line
from acp_nvim.protocol import schema as s


def test_the_handshake_line_names_the_agents_title_else_its_name() -> None:
    titled = s.Implementation(name="probe-me", title="Probe Me", version="2.0")
    assert initialize_line(titled, 1) == "initialize: Probe Me 2.0 (protocol 1)"
    assert initialize_line(s.Implementation(name="fake", version="1"), 1) == "initialize: fake 1 (protocol 1)"
    assert initialize_line(None, 1) == "initialize: no agentInfo (protocol 1)"

"""The agents the client answers differently (acp_nvim/client/agent/quirks.py): only those named there."""

from __future__ import annotations

from acp_nvim.client.agent.quirks import missing_file_reads_empty
from acp_nvim.protocol import schema as s


def test_only_gemini_cli_reads_a_missing_file_as_empty() -> None:
    assert missing_file_reads_empty(s.Implementation(name="gemini-cli", version="0.61.0"))
    assert not missing_file_reads_empty(s.Implementation(name="codex-acp", version="0.16.0"))
    assert not missing_file_reads_empty(s.Implementation(name="OpenCode", version="1.18.33"))
    # No agentInfo: the protocol's answer.
    assert not missing_file_reads_empty(None)

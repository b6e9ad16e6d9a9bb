"""Issue 29: the unstable session features an agent advertises, read from a real agent's `initialize`
(codex-acp 2.6, offline) and none from one that advertises none (the TypeScript SDK example agent). The
client's own messages stay valid against the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_nvim.client.agent.capabilities import UnstableSession
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.process import AgentCommand
from acp_nvim.protocol import unstable as u
from tests.conftest import NODE, TS_EXAMPLE_AGENT
from tests.fakemodel.agents import codex
from tests.process.recording_editor import RecordingEditor
from tests.wire_check import WireCheck

pytestmark = pytest.mark.anyio


@pytest.fixture
def wire(schema: dict[str, Any]) -> WireCheck:
    return WireCheck(schema)


async def test_codex_acp_2_6_offers_fork_titles_subagents_and_system_prompts(
    tmp_path: Path, wire: WireCheck
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    argv, env, files = codex(home)
    for path, text in files.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        # No model is asked for in a handshake: the port is never dialled.
        Path(path).write_text(text.replace("{port}", "9"))
    command = AgentCommand(argv[0], argv[1:], env=env, cwd=str(tmp_path))
    async with AgentConnection.launch(
        command, RecordingEditor(), on_message=wire.record, handshake_timeout=60
    ) as agent:
        assert agent.agent_info is not None and agent.agent_info.version == "2.6.0"
        assert agent.unstable_session == UnstableSession(
            fork=True, title=True, archive=False, status=False, system_prompt=True, subagents=True
        )
        assert isinstance(agent.capabilities, u.AgentCapabilities)
        assert agent.capabilities.providers is not None
    wire.assert_valid()


async def test_an_agent_advertising_none_offers_nothing_unstable(tmp_path: Path, wire: WireCheck) -> None:
    command = AgentCommand(NODE, [str(TS_EXAMPLE_AGENT)], cwd=str(tmp_path))
    async with AgentConnection.launch(
        command, RecordingEditor(), on_message=wire.record, handshake_timeout=20
    ) as agent:
        assert agent.unstable_session == UnstableSession()
        session = await agent.new_session(str(tmp_path))
        assert session.session_id
    wire.assert_valid()

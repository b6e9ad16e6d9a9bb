"""`elicitation/create` and `elicitation/complete` at the client layer: served only in the modes the editor
advertises, every request answered once, against a real agent on the official Python SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_nvim.protocol import schema as s
from tests.process.recording_editor import RecordingEditor
from tests.process.test_client_agents import journal, scripted_agent, text
from tests.wire_check import WireCheck

pytestmark = pytest.mark.anyio

FORM = {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}
URL = {"mode": "url", "message": "Open", "elicitationId": "e1", "url": "https://example.test"}


class FormOnlyEditor(RecordingEditor):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[s.CreateElicitationRequest] = []
        self.completed: list[str] = []

    def client_capabilities(self) -> s.ClientCapabilities:
        return s.ClientCapabilities(
            elicitation=s.ElicitationCapabilities(form=s.ElicitationFormCapabilities())
        )

    async def create_elicitation(self, params: s.CreateElicitationRequest) -> s.CreateElicitationResponse:
        self.asked.append(params)
        return s.CreateElicitationResponseAccept(content={"name": "Ann"})

    async def complete_elicitation(self, params: s.CompleteElicitationNotification) -> None:
        self.completed.append(params.elicitation_id)


@pytest.fixture
def wire(schema: dict[str, Any]) -> WireCheck:
    return WireCheck(schema)


async def test_not_advertised_is_method_not_found(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {"echo": False, "turns": [[{"elicit": FORM}]]}
    async with scripted_agent(scenario, RecordingEditor(), wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        await agent.prompt(session.session_id, text("go"))
    (entry,) = [e for e in journal(tmp_path) if e.get("call") == "elicitation/create"]
    assert entry["kind"] == "error" and entry["code"] == -32601


async def test_only_the_advertised_mode_is_served(tmp_path: Path, wire: WireCheck) -> None:
    scenario = {"echo": False, "turns": [[{"elicit": FORM}, {"elicit": URL}, {"complete": "e1"}]]}
    editor = FormOnlyEditor()
    async with scripted_agent(scenario, editor, wire, tmp_path) as agent:
        session = await agent.new_session(str(tmp_path))
        await agent.prompt(session.session_id, text("go"))
    form, url = [e for e in journal(tmp_path) if e.get("call") == "elicitation/create"]
    assert form["result"] == {"action": "accept", "content": {"name": "Ann"}}
    assert url["kind"] == "error" and url["code"] == -32602
    assert [type(a) for a in editor.asked] == [s.CreateElicitationRequestForm]
    assert editor.completed == []  # url mode not advertised: the notification is ignored

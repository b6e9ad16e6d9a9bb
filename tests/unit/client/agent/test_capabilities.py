"""What an agent advertised of the unstable session features, read from its `initialize` answer: codex-acp
2.6's as it sends it (tests/fixtures/initialize/codex_acp_2.6.0.json, captured from the pinned peer), and
agents that advertise none of them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from acp_nvim.client.agent import capabilities
from acp_nvim.client.agent.capabilities import UnstableSession
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from tests.conftest import ROOT, SCHEMA_PATH
from tests.schema_check import assert_valid

CODEX_2_6 = ROOT / "tests" / "fixtures" / "initialize" / "codex_acp_2.6.0.json"


def advertised(raw: bytes) -> UnstableSession:
    init = codec.decode(raw, u.InitializeResponse)
    caps = init.agent_capabilities or s.AgentCapabilities()
    return capabilities.unstable_session(caps, capabilities.session_capability_names(raw))


def test_codex_acp_2_6_advertises_fork_title_subagents_and_system_prompts() -> None:
    raw = CODEX_2_6.read_bytes()
    unstable_schema = json.loads(SCHEMA_PATH.with_name("schema.unstable.json").read_text())
    assert_valid(unstable_schema, "InitializeResponse", json.loads(raw))
    assert advertised(raw) == UnstableSession(
        fork=True, title=True, archive=False, status=False, system_prompt=True, subagents=True
    )
    init = codec.decode(raw, u.InitializeResponse)
    caps = init.agent_capabilities
    # The stable capabilities read as before.
    assert caps.load_session and caps.session_capabilities.resume is not None
    assert caps.mcp_capabilities.http and not caps.mcp_capabilities.acp
    assert isinstance(caps, u.AgentCapabilities) and caps.providers is not None
    assert capabilities.session_capability_names(raw) == {
        "resume",
        "list",
        "close",
        "delete",
        "fork",
        "title",
        "additionalDirectories",
        "subagents",
        "systemPrompt",
    }


@pytest.mark.parametrize(
    "answer",
    [
        {"protocolVersion": 1},
        {"protocolVersion": 1, "agentCapabilities": {}},
        {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": {"list": {}, "resume": {}}}},
        # gemini-cli 0.61's shape: no sessionCapabilities at all.
        {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True, "promptCapabilities": {"image": True}},
        },
    ],
)
def test_an_agent_advertising_none_offers_nothing_unstable(answer: dict[str, Any]) -> None:
    assert advertised(json.dumps(answer).encode()) == UnstableSession()


def test_a_feature_advertised_false_or_null_or_malformed_is_not_offered() -> None:
    session = {"fork": False, "title": None, "archive": "yes", "subagents": False, "systemPrompt": 3}
    raw = json.dumps({"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": session}}).encode()
    # The whole answer still decodes: a malformed unstable capability is dropped, not the handshake.
    assert advertised(raw) == UnstableSession()


def test_capabilities_built_as_the_stable_type_offer_nothing_unstable() -> None:
    caps = s.AgentCapabilities(session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()))
    assert capabilities.unstable_session(caps) == UnstableSession()
    assert capabilities.unstable_session_capabilities(caps) == u.SessionCapabilities()


@pytest.mark.parametrize("raw", [None, b"null", b"[]", b'{"agentCapabilities": 3}', b"{"])
def test_session_capability_names_of_an_odd_answer_are_none(raw: bytes | None) -> None:
    assert capabilities.session_capability_names(raw) == frozenset()

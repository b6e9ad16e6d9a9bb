"""The method table matches the official method list, and the generated module is current."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from acp_nvim.protocol import AGENT_METHODS, CLIENT_METHODS, METHODS, codec, methods
from acp_nvim.protocol import schema as acp
from tests.conftest import ROOT, SCHEMA_PATH

META = ROOT.parent / "shared" / "acp" / "v1" / "meta.json"
GENERATOR = ROOT / "tools" / "gen_protocol.py"


@pytest.fixture(scope="module")
def meta() -> dict[str, Any]:
    return json.loads(META.read_text())


def test_methods_match_meta_json(meta: dict[str, Any]) -> None:
    assert set(meta["agentMethods"].values()) == AGENT_METHODS
    assert set(meta["clientMethods"].values()) == CLIENT_METHODS
    assert set(meta["protocolMethods"].values()) == {n for n, m in METHODS.items() if m.side == "protocol"}
    assert meta["version"] == methods.PROTOCOL_VERSION


def test_name_constants_cover_the_table() -> None:
    constants = {v for k, v in vars(methods).items() if k.isupper() and isinstance(v, str)}
    assert set(METHODS) <= constants


@pytest.mark.parametrize(
    ("name", "params", "result", "side", "notification"),
    [
        ("initialize", acp.InitializeRequest, acp.InitializeResponse, "agent", False),
        ("session/prompt", acp.PromptRequest, acp.PromptResponse, "agent", False),
        ("session/cancel", acp.CancelNotification, None, "agent", True),
        ("session/update", acp.SessionNotification, None, "client", True),
        (
            "session/request_permission",
            acp.RequestPermissionRequest,
            acp.RequestPermissionResponse,
            "client",
            False,
        ),
        ("fs/write_text_file", acp.WriteTextFileRequest, acp.WriteTextFileResponse, "client", False),
        ("elicitation/complete", acp.CompleteElicitationNotification, None, "client", True),
        ("$/cancel_request", acp.CancelRequestNotification, None, "protocol", True),
    ],
)
def test_method_spec(name: str, params: Any, result: Any, side: str, notification: bool) -> None:
    spec = METHODS[name]
    assert (spec.name, spec.params, spec.result, spec.side, spec.is_notification) == (
        name,
        params,
        result,
        side,
        notification,
    )


def test_every_method_type_has_a_decoder() -> None:
    for spec in METHODS.values():
        codec.decoder(spec.params)
        if spec.result is not None:
            codec.decoder(spec.result)


def test_generator_check_passes_on_committed_output() -> None:
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_generator_check_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "schema.py"
    stale.write_text("# stale\n")
    proc = subprocess.run(
        [sys.executable, str(GENERATOR), "--check", "--output", str(stale), "--schema", str(SCHEMA_PATH)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert proc.returncode == 1
    assert "out of date" in proc.stderr and "gen_protocol.py" in proc.stderr
    assert stale.read_text() == "# stale\n"


def test_generated_structs_keep_camel_case_keys() -> None:
    fields = {f.name: f.encode_name for f in msgspec.structs.fields(acp.RequestPermissionRequest)}
    assert fields == {
        "session_id": "sessionId",
        "tool_call": "toolCall",
        "options": "options",
        "meta": "_meta",
    }

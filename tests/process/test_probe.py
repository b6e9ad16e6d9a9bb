"""`python -m acp_nvim probe`: one JSON report on success, one line and a non-zero exit on failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NODE, ROOT, TS_EXAMPLE_AGENT


def probe(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_nvim", "probe", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_probe_reports_the_handshake_and_a_session(tmp_path: Path) -> None:
    result = probe("--session", "--", NODE, str(TS_EXAMPLE_AGENT), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["protocolVersion"] == 1
    assert "loadSession" not in report["agentCapabilities"]  # false is the default, so not repeated
    assert report["agentInfo"] is None
    assert report["initialized"] == "initialize: no agentInfo (protocol 1)"
    assert report["authMethods"] == []
    assert len(report["sessionId"]) > 8
    assert set(report["milliseconds"]) == {"initialize", "session/new"}


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (["no-such-agent-xyz"], "acp_nvim probe: agent command not found: no-such-agent-xyz"),
        (
            ["sh", "-c", "echo 'bad token' >&2; exit 4"],
            "acp_nvim probe: agent sh exited with code 4: bad token",
        ),
        (["sleep", "30"], "acp_nvim probe: agent sleep did not answer initialize within 1 s"),
    ],
)
def test_probe_failures_are_one_line(tmp_path: Path, command: list[str], reason: str) -> None:
    result = probe("--timeout", "1", "--", *command, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip() == reason

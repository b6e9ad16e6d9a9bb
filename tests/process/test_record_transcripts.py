"""tools/record_transcripts.py against the pinned peer agents: a fresh recording has the same conversations
as the checked-in fixtures that tests/unit/test_protocol_transcripts.py replays, so those stay what the
agents say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, TRANSCRIPTS

RECORDER = ROOT / "tools" / "record_transcripts.py"


def conversation_shape(path: Path) -> list[str]:
    """Who sent what kind of message, in order; what varies between runs (session ids) left out."""
    shape = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            shape.append(line)
        elif line.startswith((">> ", "<< ")):
            try:
                body = json.loads(line[3:])
            except json.JSONDecodeError:
                shape.append(line[:3] + "(not JSON)")
                continue
            kind = body.get("method") or ("error" if "error" in body else "result")
            params = body.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            if isinstance(update, dict):
                kind += " " + str(update.get("sessionUpdate"))
            shape.append(f"{line[:3]}{kind}")
    return shape


def test_a_fresh_recording_has_the_conversations_of_the_checked_in_transcripts(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(RECORDER), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # its report goes to stderr, like every log of the project
    recorded = sorted(p.name for p in tmp_path.glob("*.txt"))
    assert recorded == sorted(p.name for p in TRANSCRIPTS.glob("*.txt"))
    for name in recorded:
        fresh, checked_in = conversation_shape(tmp_path / name), conversation_shape(TRANSCRIPTS / name)
        assert fresh == checked_in, f"{name}: re-record with tools/record_transcripts.py (CONTRIBUTING.md)"
    probe = (tmp_path / "error_behaviour_probe.txt").read_text(encoding="utf-8")
    assert '"error":{"code":-32700' in probe  # the TypeScript agent's answer to the line that is not JSON
    assert '"id":1,"result":null' in probe  # the Python SDK agent's stub session/list
    allow = (tmp_path / "ts_agent_prompt_allow.txt").read_text(encoding="utf-8")
    assert '"optionId":"allow"' in allow and "Configuration updated" in allow
    reject = (tmp_path / "ts_agent_prompt_reject.txt").read_text(encoding="utf-8")
    assert '"optionId":"reject"' in reject and "Configuration updated" not in reject
    assert '"stopReason":"cancelled"' in (tmp_path / "ts_agent_cancel.txt").read_text(encoding="utf-8")

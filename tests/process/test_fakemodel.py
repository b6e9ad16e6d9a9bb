"""The fake model server and the jail of the real agents' tests (tests/fakemodel/): what each dialect streams
for a scripted step, that a request for another host is refused and logged, and that a jailed process sees no
network but loopback."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakemodel.server import FakeModelServer, read_log

JAIL = Path(__file__).resolve().parents[1] / "fakemodel" / "jail.py"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FakeModelServer]:
    script = tmp_path / "script.json"
    steps = {
        "HELLO": [{"text": "Hello from the fake model."}],
        "CALL": [{"tool": "shell", "args": {"cmd": "ls"}}, {"text": "Listed."}],
    }
    script.write_text(json.dumps({"steps": steps}))
    fake = FakeModelServer(script, tmp_path / "log.jsonl")
    threading.Thread(target=fake.serve_forever, daemon=True).start()
    yield fake
    fake.shutdown()
    fake.server_close()


def post(server: FakeModelServer, path: str, body: dict[str, object]) -> list[dict[str, object]]:
    """The SSE events of one request, decoded."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    data = connection.getresponse().read().decode()
    connection.close()
    lines = [line[len("data: ") :] for line in data.splitlines() if line.startswith("data: ")]
    return [json.loads(line) for line in lines if line != "[DONE]"]


def test_each_dialect_streams_the_scripted_text(server: FakeModelServer) -> None:
    events = post(server, "/v1/responses", {"input": [{"role": "user", "content": "HELLO there"}]})
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    assert "".join(map(str, deltas)) == "Hello from the fake model."
    assert events[-1]["type"] == "response.completed"

    chunks = post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "HELLO"}]})
    text = "".join(str(c["choices"][0]["delta"].get("content") or "") for c in chunks)  # type: ignore[index]
    assert text == "Hello from the fake model."

    gemini = {"contents": [{"role": "user", "parts": [{"text": "HELLO"}]}]}
    parts = post(server, "/v1beta/models/m:streamGenerateContent?alt=sse", gemini)
    text = "".join(p["candidates"][0]["content"]["parts"][0]["text"] for p in parts)  # type: ignore[index]
    assert text == "Hello from the fake model."


def test_a_tool_result_brings_the_next_step(server: FakeModelServer) -> None:
    tools = [{"type": "function", "function": {"name": "shell"}}]
    first = post(
        server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "CALL"}], "tools": tools}
    )
    call = first[0]["choices"][0]["delta"]["tool_calls"][0]  # type: ignore[index]
    assert call["function"] == {"name": "shell", "arguments": json.dumps({"cmd": "ls"})}
    messages = [{"role": "user", "content": "CALL"}, {"role": "tool", "content": "a b"}]
    after = post(server, "/v1/chat/completions", {"messages": messages, "tools": tools})
    assert "Listed." in json.dumps(after)
    # A title request (no tools) never gets the call.
    title = post(server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "CALL"}]})
    assert "tool_calls" not in json.dumps(title)


def test_a_request_for_another_host_is_refused_and_logged(server: FakeModelServer, tmp_path: Path) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "http://example.com/telemetry")
    assert connection.getresponse().status == 403
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("CONNECT", "example.com:443")
    assert connection.getresponse().status == 403
    connection.close()
    escapes = [entry for entry in read_log(tmp_path / "log.jsonl") if entry.get("escape")]
    assert [e["method"] for e in escapes] == ["GET", "CONNECT"]


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root")
def test_a_jailed_process_has_only_loopback_and_the_server(tmp_path: Path) -> None:
    script, log = tmp_path / "script.json", tmp_path / "log.jsonl"
    script.write_text(json.dumps({"steps": {}}))
    probe = (
        "import os, socket, urllib.request; "
        "print(sorted(name for _, name in socket.if_nameindex())); "
        "print(os.environ['HTTPS_PROXY'] == 'http://127.0.0.1:' + os.environ['PORT']); "
        "print(urllib.request.urlopen('http://127.0.0.1:' + os.environ['PORT'] + '/v1/models').status)"
    )
    config = {
        "argv": [sys.executable, "-c", probe],
        "env": {"PORT": "{port}"},
        "script": str(script),
        "log": str(log),
    }
    (tmp_path / "jail.json").write_text(json.dumps(config))
    out = subprocess.run(
        [sys.executable, str(JAIL), str(tmp_path / "jail.json")], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["['lo']", "True", "200"]
    assert read_log(log) == [{"method": "GET", "path": "/v1/models"}]

"""Record wire transcripts of real agents for tests/unit/test_protocol_transcripts.py.

Run after ``scripts/setup``: ``.venv/bin/python tools/record_transcripts.py [--out DIR]`` (default
``tests/fixtures/transcripts``). It starts the pinned peer agents: the TypeScript SDK example agent from
``tests/peers/node_modules`` (run by node) and ``tests/agents/echo_agent.py`` (on the Python SDK from the
dev dependencies), drives them with a raw line client that is not ours (so a bug of our client cannot shape
what is recorded) and writes one file per scenario.

Format, one message per line, exactly the bytes that crossed the pipe:
``>> `` a line the client sent, ``<< `` a line the agent sent, ``## `` the start of a conversation with a new
agent process (request ids start again), ``# `` and ``-- `` comments (provenance, exit code).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

ROOT = Path(__file__).resolve().parent.parent
TS_PACKAGE = ROOT / "tests" / "peers" / "node_modules" / "acp-sdk-example"
TS_AGENT = TS_PACKAGE / "dist" / "examples" / "agent.js"
PY_AGENT = ROOT / "tests" / "agents" / "echo_agent.py"
DEFAULT_OUT = ROOT / "tests" / "fixtures" / "transcripts"

# The TypeScript example agent pauses about a second per simulated model step; a turn has several.
READ_TIMEOUT = 30.0
LINE_LIMIT = 16 * 1024 * 1024
PROBE_CWD = "/home/user/project"
CLIENT_CAPABILITIES = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
CLIENT_INFO = {"name": "acp-nvim-recorder", "version": "0.0.1"}

Message = dict[str, Any]


@dataclass
class AgentCommand:
    argv: list[str]
    shown: str  # the command as written in the transcript: relative to the repository, no local paths


def ts_agent() -> AgentCommand:
    node = shutil.which("node") or "node"
    return AgentCommand([node, str(TS_AGENT)], f"node {TS_AGENT.relative_to(ROOT)}")


def py_agent() -> AgentCommand:
    return AgentCommand([sys.executable, str(PY_AGENT)], f"python {PY_AGENT.relative_to(ROOT)}")


@dataclass
class Probe:
    """A raw JSON-RPC line client that writes down every line in the order it saw it."""

    process: Process
    lines: list[str]
    on_request: Callable[[Probe, Message], Awaitable[None]] | None = None
    _next_id: int = 0
    _stdout: BufferedByteReceiveStream = field(init=False)

    def __post_init__(self) -> None:
        assert self.process.stdout is not None
        self._stdout = BufferedByteReceiveStream(self.process.stdout)

    async def send_line(self, text: str) -> None:
        assert self.process.stdin is not None
        self.lines.append(">> " + text)
        await self.process.stdin.send(text.encode() + b"\n")

    async def send(self, message: Message) -> None:
        await self.send_line(json.dumps(message, separators=(",", ":")))

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def respond(self, request_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def receive(self) -> Message | None:
        """The next line from the agent, written down; None when it is not a JSON object."""
        with anyio.fail_after(READ_TIMEOUT):
            raw = await self._stdout.receive_until(b"\n", LINE_LIMIT)
        text = raw.decode("utf-8", "replace")
        self.lines.append("<< " + text)
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            return None
        return message if isinstance(message, dict) else None

    async def receive_until(self, done: Callable[[Message], bool]) -> Message:
        """Read (answering the agent's requests on the way) until a message satisfies `done`."""
        while True:
            message = await self.receive()
            if message is None:
                continue
            if done(message):
                return message
            if "method" in message and "id" in message and self.on_request is not None:
                await self.on_request(self, message)

    async def request(self, method: str, params: Any) -> int:
        request_id = self._next_id
        self._next_id += 1
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    async def answer_to(self, request_id: int) -> Message:
        return await self.receive_until(lambda m: m.get("id") == request_id and "method" not in m)

    async def call(self, method: str, params: Any) -> Message:
        return await self.answer_to(await self.request(method, params))

    async def drain(self) -> None:
        """Close our side and write down what the agent still says until it closes its own."""
        assert self.process.stdin is not None
        await self.process.stdin.aclose()
        with anyio.fail_after(READ_TIMEOUT):
            while True:
                try:
                    await self.receive()
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    return


Scenario = Callable[[Probe], Awaitable[None]]


async def converse(
    command: AgentCommand,
    scenario: Scenario,
    lines: list[str],
    on_request: Callable[[Probe, Message], Awaitable[None]] | None = None,
) -> None:
    with (
        tempfile.TemporaryDirectory(prefix="acp-record-") as cwd,
        open(Path(cwd) / "stderr", "w+b") as stderr,
    ):
        process = await anyio.open_process(command.argv, cwd=cwd, stderr=stderr, env=dict(os.environ))
        try:
            probe = Probe(process, lines, on_request)
            await scenario(probe)
            await probe.drain()
            with anyio.fail_after(READ_TIMEOUT):
                code = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        stderr.seek(0)
        count = len(stderr.read().splitlines())
        lines.append(f"-- exit code {code}; stderr lines: {count}")


async def start_session(probe: Probe) -> str:
    await probe.call(
        "initialize",
        {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPABILITIES, "clientInfo": CLIENT_INFO},
    )
    created = await probe.call("session/new", {"cwd": PROBE_CWD, "mcpServers": []})
    session_id = created["result"]["sessionId"]
    assert isinstance(session_id, str), created
    return session_id


def prompt_turn(text: str) -> Scenario:
    async def run(probe: Probe) -> None:
        session_id = await start_session(probe)
        await probe.call(
            "session/prompt", {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        )

    return run


def choose(option_id: str) -> Callable[[Probe, Message], Awaitable[None]]:
    async def answer(probe: Probe, request: Message) -> None:
        assert request["method"] == "session/request_permission", request
        await probe.respond(request["id"], {"outcome": {"outcome": "selected", "optionId": option_id}})

    return answer


def update_kind(message: Message) -> str | None:
    params = message.get("params")
    update = (
        params.get("update")
        if message.get("method") == "session/update" and isinstance(params, dict)
        else None
    )
    kind = update.get("sessionUpdate") if isinstance(update, dict) else None
    return kind if isinstance(kind, str) else None


async def cancel_mid_turn(probe: Probe) -> None:
    session_id = await start_session(probe)
    prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
    prompt_id = await probe.request("session/prompt", prompt)
    # Cancel once the turn has visibly started a tool call, as a user pressing "stop" would.
    await probe.receive_until(lambda m: update_kind(m) == "tool_call")
    await probe.notify("session/cancel", {"sessionId": session_id})
    await probe.answer_to(prompt_id)


async def error_behaviour(probe: Probe) -> None:
    """Methods the agent lacks, extension traffic, a bad cwd, an unknown session, a line that is not JSON."""
    await probe.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    await probe.call("session/list", {})
    await probe.call("_vendor/ping", {})
    await probe.notify("_vendor/note", {})
    await probe.call("session/new", {"cwd": "relative/path", "mcpServers": []})
    await probe.call("session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]})
    await probe.send_line("not json at all")  # answered (or not) before the agent sees our end of input


def header(what: str) -> list[str]:
    version = json.loads((TS_PACKAGE / "package.json").read_text())["version"]
    return [
        f"# {what}",
        "# Recorded by tools/record_transcripts.py;"
        f" TypeScript example agent of @agentclientprotocol/sdk {version}.",
    ]


async def record(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, list[str]] = {}

    for name, option in (("allow", "allow"), ("reject", "reject")):
        lines = header(f"The TypeScript example agent's turn, its permission request answered {option!r}.")
        await converse(ts_agent(), prompt_turn("do it"), lines, choose(option))
        files[f"ts_agent_prompt_{name}.txt"] = lines

    lines = header("The TypeScript example agent's turn, cancelled once a tool call started.")
    await converse(ts_agent(), cancel_mid_turn, lines)
    files["ts_agent_cancel.txt"] = lines

    lines = header("A prompt turn of tests/agents/echo_agent.py (Python SDK).")
    await converse(py_agent(), prompt_turn("hi there"), lines)
    files["py_echo_agent_prompt.txt"] = lines

    lines = header("The same error-behaviour probe against each agent.")
    for command in (ts_agent(), py_agent()):
        lines.append(f"## {command.shown}")
        await converse(command, error_behaviour, lines)
    files["error_behaviour_probe.txt"] = lines

    written = []
    for name, content in files.items():
        path = out / name
        path.write_text("\n".join(content) + "\n", encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="directory to write (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    if not TS_AGENT.exists():
        print(f"record_transcripts: {TS_AGENT} is missing; run scripts/setup first", file=sys.stderr)
        return 2
    written = anyio.run(record, args.out)
    for path in written:
        print(f"record_transcripts: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

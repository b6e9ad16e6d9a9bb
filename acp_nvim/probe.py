"""`python -m acp_nvim probe [--session] -- CMD ARGS...`: start an agent, handshake, print one JSON report.

Used by `:checkhealth acp_nvim` and by people debugging an agent set-up. Success prints the report on stdout
and exits 0; failure prints one line on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Sequence

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from acp_nvim.client.agent import command as agent_command
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.process import AgentCommand, StartError
from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s


class ProbeReport(msgspec.Struct, kw_only=True, rename="camel"):
    """What the probe prints: the command run, what the handshake said, and each step's milliseconds."""

    command: str
    protocol_version: int
    agent_info: s.Implementation | None
    # The handshake's line, worded here for :checkhealth (`initialize_line`).
    initialized: str
    agent_capabilities: s.AgentCapabilities
    auth_methods: list[s.AuthMethod]
    # Only with --session.
    session_id: str | UnsetType = UNSET
    milliseconds: dict[str, float]


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m acp_nvim probe", description=__doc__)
    parser.add_argument("--session", action="store_true", help="also create a session in the current folder")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for each step")
    parser.add_argument(
        "--fallback", action="append", default=[], help="an older executable to run when CMD is not installed"
    )
    parser.add_argument(
        "--older-args",
        type=lambda text: msgspec.json.decode(text, type=agent_command.OlderArgs),
        help='arguments for older versions, as JSON: {"before": "0.33.0", "args": [...], "package": "..."}',
    )
    parser.add_argument("command", nargs="+", help="the agent command and its arguments (after --)")
    return parser.parse_args(argv)


def _elapsed_ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def initialize_line(agent_info: s.Implementation | None, protocol_version: int) -> str:
    """The line `:checkhealth` shows for the handshake: the agent's title (else name), version, protocol."""
    if agent_info is None:
        return f"initialize: no agentInfo (protocol {protocol_version})"
    title = agent_info.title if agent_info.title is not None else agent_info.name
    return f"initialize: {title} {agent_info.version} (protocol {protocol_version})"


async def _probe(args: argparse.Namespace) -> ProbeReport:
    command = await agent_command.resolve(
        AgentCommand(command=args.command[0], args=args.command[1:], cwd=os.getcwd()),
        args.fallback,
        args.older_args,
    )
    timings: dict[str, float] = {}
    start = time.perf_counter()
    async with AgentConnection.launch(command, HeadlessEditor(), handshake_timeout=args.timeout) as agent:
        timings["initialize"] = _elapsed_ms(start)
        report = ProbeReport(
            command=command.describe(),
            protocol_version=agent.protocol_version,
            agent_info=agent.agent_info,
            initialized=initialize_line(agent.agent_info, agent.protocol_version),
            agent_capabilities=agent.capabilities,
            auth_methods=agent.auth_methods,
            milliseconds=timings,
        )
        if args.session:
            step = time.perf_counter()
            with anyio.fail_after(args.timeout):
                session = await agent.new_session(os.getcwd())
            timings["session/new"] = _elapsed_ms(step)
            report.session_id = session.session_id
    return report


def main(argv: Sequence[str]) -> int:
    args = _parse(argv)
    # The report and the one-line reason are the interface; log records would only garble stderr.
    logging.getLogger("acp_nvim").addHandler(logging.NullHandler())
    logging.getLogger("acp_nvim").propagate = False
    try:
        report = anyio.run(_probe, args)
    except StartError as err:
        print(f"acp_nvim probe: {err}", file=sys.stderr)
        return 1
    except TimeoutError:
        print(f"acp_nvim probe: session/new timed out after {args.timeout:g} s", file=sys.stderr)
        return 1
    except RpcError as err:
        print(f"acp_nvim probe: session/new failed: {failure.describe(err)}", file=sys.stderr)
        return 1
    except ConnectionClosed as err:
        print(f"acp_nvim probe: session/new failed: {err}", file=sys.stderr)
        return 1
    sys.stdout.write(msgspec.json.encode(report).decode() + "\n")
    return 0

"""The ACP handshake: `initialize` sent with our capabilities and identity, its answer checked, and the
`StartError` for each way it can fail (the agent exits, never answers, refuses, or speaks another version).
"""

from __future__ import annotations

import anyio
import msgspec

from acp_nvim import __version__
from acp_nvim.client.agent import capabilities, failure
from acp_nvim.client.agent.process import AgentCommand, StartError, StderrTail
from acp_nvim.client.editor import Editor
from acp_nvim.client.session import shell
from acp_nvim.jsonrpc import Connection, ConnectionClosed, RpcError
from acp_nvim.protocol import codec
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

CLIENT_INFO = s.Implementation(name="acp.nvim", title="acp.nvim", version=__version__)
DEFAULT_HANDSHAKE_TIMEOUT = 30.0


class AgentExited(StartError):
    pass


class HandshakeTimeout(StartError):
    pass


class VersionMismatch(StartError):
    pass


class HandshakeFailed(StartError):
    pass


def _with_terminal_output(caps: s.ClientCapabilities) -> s.ClientCapabilities:
    """Asks for Zed's display-only terminal (`_meta.terminal_output`, with pieces marked as such:
    `terminal_output_delta`): codex-acp and claude-agent-acp then stream the output of the commands they run
    themselves as pieces, not as a text resent whole; the session reducer shows both
    (client/session/shell.py)."""
    meta = {**(caps.meta or {}), shell.TERMINAL_OUTPUT_META: True, shell.TERMINAL_OUTPUT_DELTA_META: True}
    return msgspec.structs.replace(caps, meta=meta)


async def initialize(
    connection: Connection,
    editor: Editor,
    client_info: s.Implementation,
    timeout: float,
    command: AgentCommand,
    stderr: StderrTail,
) -> tuple[u.InitializeResponse, frozenset[str]]:
    """The agent's answer, decoded as the unstable schema reads it (its unstable capabilities readable,
    none of them used unless advertised), and the names of every session capability it advertised."""
    mark = stderr.count
    request = s.InitializeRequest(
        protocol_version=m.PROTOCOL_VERSION,
        client_capabilities=_with_terminal_output(editor.client_capabilities()),
        client_info=client_info,
    )
    try:
        with anyio.fail_after(timeout):
            raw = await connection.request(m.INITIALIZE, request)
    except TimeoutError:
        raise HandshakeTimeout(
            f"agent {command.name} did not answer initialize within {timeout:g} s"
        ) from None
    except ConnectionClosed as err:
        raise AgentExited(str(err)) from None
    except RpcError as err:
        await failure.note_stderr(err, stderr, mark)
        raise HandshakeFailed(f"agent {command.name} refused initialize: {failure.describe(err)}") from None
    try:
        response = codec.decode(raw, u.InitializeResponse)
    except msgspec.ValidationError as err:
        raise HandshakeFailed(f"agent {command.name} sent an invalid initialize answer: {err}") from None
    except RecursionError:
        raise HandshakeFailed(
            f"agent {command.name} sent an initialize answer nested too deeply to decode"
        ) from None
    if response.protocol_version != m.PROTOCOL_VERSION:
        raise VersionMismatch(
            f"agent {command.name} speaks ACP protocol version {response.protocol_version}; "
            f"acp.nvim supports version {m.PROTOCOL_VERSION}"
        )
    return response, capabilities.session_capability_names(raw)

"""What the client does differently for a known agent whose ACP layer cannot take the protocol's answer,
keyed by the `agentInfo.name` it sends in `initialize`. Each entry says which version showed it and why the
protocol's answer fails there, so that it can be dropped once the agent is fixed.
"""

from __future__ import annotations

from acp_nvim.protocol import schema as s

# gemini-cli (checked with 0.61.0) creates a file by first reading it through `fs/read_text_file`. Its ACP
# connection rejects a failed request with the bare JSON-RPC error object, not an `Error`, so its check for
# "no such file" (an `Error` whose message says "Resource not found", "ENOENT", ...) never matches, whatever
# code or message the client answers: `-32002` fails its write ("Error checking existing file"). The reference
# client, Zed, answers the read of a missing file in the project with empty text (its buffer for a path not on
# disk yet is a new, empty one); for such an agent a missing file reads the same way.
_MISSING_FILE_READS_EMPTY = frozenset({"gemini-cli"})


def missing_file_reads_empty(agent: s.Implementation | None) -> bool:
    """Whether a read of a missing file (inside the session's roots) is answered with empty text for this
    agent, instead of the protocol's `-32002` that every other agent gets."""
    return agent is not None and agent.name in _MISSING_FILE_READS_EMPTY

"""The Neovim MCP server as a session offers it: `neovim`, a stdio server run by the plugin's own Python
(`python -m acp_nvim mcp`), pointed at this Neovim and at the session's folders (its sandbox)."""

from __future__ import annotations

import os
from collections.abc import Sequence

import acp_nvim
from acp_nvim.app.runs import NeovimMcp
from acp_nvim.protocol import schema as s

NAME = "neovim"
# The folder holding the `acp_nvim` package: the plugin runs from its checkout, which the interpreter's own
# environment does not hold.
PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(acp_nvim.__file__)))


def neovim_mcp(enabled: bool, tools: Sequence[str], interpreter: str, address: str) -> NeovimMcp | None:
    """How this agent's sessions start the server; None when it is turned off, serves no tool, or Neovim has
    no server address to connect back to."""
    if not enabled or not tools or not address or not interpreter:
        return None
    return NeovimMcp(interpreter=interpreter, address=address, tools=list(tools), pythonpath=PACKAGE_ROOT)


def server(neovim: NeovimMcp, cwd: str, directories: Sequence[str]) -> s.McpServerStdio:
    """The `mcpServers` entry of a session in `cwd` (and its additional `directories`)."""
    args = ["-m", "acp_nvim", "mcp", "--nvim", neovim.address]
    for root in [cwd, *directories]:
        args += ["--root", root]
    args += ["--tools", ",".join(neovim.tools)]
    env = [s.EnvVariable(name="PYTHONPATH", value=neovim.pythonpath)] if neovim.pythonpath else []
    return s.McpServerStdio(name=NAME, command=neovim.interpreter, args=args, env=env)

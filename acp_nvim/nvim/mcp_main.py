"""`python -m acp_nvim mcp --nvim ADDRESS --root DIR... [--tools NAME,...]`: the Neovim MCP server a session
offers its agent (`app/mcp/offer.py` writes this command line into `session/new`'s `mcpServers`).

It connects back to the Neovim at ADDRESS (its `v:servername`), serves MCP on stdin/stdout, and ends when
either side goes: the agent closing its stdin (the session ended), or Neovim closing the connection (it
quit). Started when that Neovim is gone, it says so on stderr and exits 1. Logs go to stderr (the agent's
log of the server), stdout is the protocol alone.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Sequence

import anyio

from acp_nvim import __version__
from acp_nvim.app.mcp.tools import INSTRUCTIONS, TOOL_NAMES, NeovimTools
from acp_nvim.jsonrpc.stdio import protocol_stdio
from acp_nvim.mcp.messages import CallToolResult, Implementation, ToolError
from acp_nvim.mcp.server import McpServer, serve
from acp_nvim.nvim.mcp_link import NeovimError, NeovimGone, NeovimLink, open_stream

log = logging.getLogger("acp_nvim.mcp")

NAME = "neovim"


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m acp_nvim mcp", description=__doc__)
    parser.add_argument("--nvim", default=os.environ.get("NVIM", ""), help="Neovim's server address")
    parser.add_argument("--root", action="append", default=[], help="a folder of the session (repeatable)")
    parser.add_argument("--tools", default=",".join(TOOL_NAMES), help="the tools served, comma-separated")
    return parser.parse_args(argv)


async def _run(args: argparse.Namespace) -> int:
    if not args.nvim:
        print("acp.nvim MCP server: no Neovim to connect to (--nvim ADDRESS)", file=sys.stderr)
        return 2
    try:
        link = NeovimLink(await open_stream(args.nvim))
    except NeovimGone as err:
        print(f"acp.nvim MCP server: {err}; the Neovim that offered this server is gone", file=sys.stderr)
        return 1
    roots = args.root or [os.getcwd()]
    neovim = NeovimTools(link, roots, [name for name in args.tools.split(",") if name])

    async def call(name: str, arguments: dict[str, object]) -> CallToolResult:
        try:
            return await neovim.call(name, arguments)
        except NeovimGone:
            raise ToolError("Neovim has quit") from None
        except NeovimError as err:
            log.warning("%s failed in Neovim: %s", name, err)
            raise ToolError(f"Neovim could not answer {name}: {str(err).splitlines()[0]}") from None

    server = McpServer(
        Implementation(name=NAME, title="Neovim (acp.nvim)", version=__version__),
        neovim.tools,
        call,
        INSTRUCTIONS,
    )
    receive, send = protocol_stdio()
    gone = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(link.run)

        async def watch() -> None:
            nonlocal gone
            await link.closed.wait()
            gone = True
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        with contextlib.suppress(NeovimGone):
            await link.start()
        await serve(server, receive, send)
        tg.cancel_scope.cancel()
    if gone:
        print("acp.nvim MCP server: Neovim closed the connection (it quit); exiting", file=sys.stderr)
    await link.aclose()
    return 0


def main(argv: Sequence[str]) -> int:
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="acp.nvim MCP %(levelname)s %(message)s"
    )
    args = _parse(argv)
    try:
        code = anyio.run(_run, args)
    except KeyboardInterrupt:
        code = 130
    sys.stderr.flush()
    # The stdin reader may still sit in a worker thread's read(): it must not hold the exit.
    os._exit(code)

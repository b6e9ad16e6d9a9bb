"""Helpers for the tests of the Neovim MCP server (`python -m acp_nvim mcp`): a small Python project with a
real language server (pylsp, from the test venv) attached in Neovim, the official MCP SDK's client on the
server, and every message the server sends parsed strictly by the SDK's own types (`mcp.types`)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import ROOT
from tests.nvim.conftest import Nvim

PYLSP = str(Path(sys.executable).parent / "pylsp")

PKG = '''def greet(name):
    """Say hello to someone."""
    return "hello " + name


class Greeter:
    def run(self):
        return greet("world")
'''
MAIN = """from pkg import greet

print(greet("you"))
print(missing)
"""


def make_project(root: Path) -> None:
    (root / "pkg.py").write_text(PKG)
    (root / "main.py").write_text(MAIN)


def open_with_pylsp(nvim: Nvim, root: Path) -> None:
    """Opens both files in Neovim with pylsp attached (started as a user's config would, `vim.lsp.start`),
    and a linter's diagnostic on main.py (pylsp alone, without pyflakes, reports none)."""
    nvim.api.command(f"cd {root}")
    for name in ("pkg.py", "main.py"):
        nvim.api.command(f"edit {root / name}")
        nvim.lua(
            "local cmd, root = ... vim.lsp.start({name = 'pylsp', cmd = {cmd}, root_dir = root})",
            PYLSP,
            str(root),
        )
    nvim.wait("#vim.lsp.get_clients({bufnr = vim.fn.bufnr(args[1])}) > 0", 30, str(root / "pkg.py"))
    nvim.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('lint'), vim.fn.bufnr(...), {{lnum = 3, col = 6,"
        " end_col = 13, severity = vim.diagnostic.severity.ERROR, source = 'lint', code = 'F821',"
        " message = \"undefined name 'missing'\"}})",
        str(root / "main.py"),
    )


def server_params(nvim: Nvim, root: Path, *extra: str) -> StdioServerParameters:
    address = nvim.lua("return vim.v.servername")
    args = ["-m", "acp_nvim", "mcp", "--nvim", address, "--root", str(root), *extra]
    return StdioServerParameters(command=sys.executable, args=args, env={"PYTHONPATH": str(ROOT)})


# The result type of each request the tests send, by method.
RESULTS: dict[str, Any] = {
    "initialize": mt.InitializeResult,
    "tools/list": mt.ListToolsResult,
    "tools/call": mt.CallToolResult,
    "ping": mt.EmptyResult,
}


def strict(line: str | bytes, method: str | None = None) -> dict[str, Any]:
    """One message the server sent, parsed strictly by the SDK's types: the envelope, and the result as the
    type of the request it answers."""
    message = json.loads(line)
    if "error" in message:
        mt.JSONRPCError.model_validate_json(line, strict=True)
    else:
        mt.JSONRPCResponse.model_validate_json(line, strict=True)
        if method is not None:
            RESULTS[method].model_validate_json(json.dumps(message["result"]), strict=True)
    return message  # type: ignore[no-any-return]


@asynccontextmanager
async def mcp_session(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    """The SDK's client on the server started by `params`; on leaving, every response the server sent is
    checked strictly against the SDK's types, by the method it answered."""
    methods: dict[Any, str] = {}
    seen: list[Any] = []
    async with stdio_client(params) as (read, write):
        tap_send, tap_receive = anyio.create_memory_object_stream[Any](100)
        out_send, out_receive = anyio.create_memory_object_stream[Any](100)

        async def tap() -> None:
            async with tap_send:
                async for item in read:
                    seen.append(item)
                    await tap_send.send(item)

        async def note() -> None:
            async for item in out_receive:
                message = item.message
                if isinstance(message, mt.JSONRPCRequest):
                    methods[message.id] = message.method
                await write.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(tap)
            tg.start_soon(note)
            async with ClientSession(tap_receive, out_send) as session:
                yield session
            tg.cancel_scope.cancel()
    for item in seen:
        if isinstance(item, Exception):
            raise item
        message = item.message
        if isinstance(message, mt.JSONRPCResponse | mt.JSONRPCError):
            line = message.model_dump_json(by_alias=True, exclude_unset=True)
            strict(line, methods.get(message.id) if isinstance(message, mt.JSONRPCResponse) else None)


class Client:
    """The SDK's session driven from a plain (synchronous) test: pynvim's calls cannot run inside an event
    loop, so the MCP client runs in a portal's thread."""

    def __init__(self, portal: BlockingPortal, session: ClientSession) -> None:
        self.portal = portal
        self.session = session

    def initialize(self) -> mt.InitializeResult:
        return self.portal.call(self.session.initialize)

    def list_tools(self) -> mt.ListToolsResult:
        return self.portal.call(self.session.list_tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert isinstance(result, mt.CallToolResult)
        return result


@contextmanager
def mcp_client(params: StdioServerParameters) -> Iterator[Client]:
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(mcp_session(params)) as session:
        yield Client(portal, session)

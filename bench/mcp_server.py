"""The Neovim MCP server (`python -m acp_nvim mcp`, issue 28): its start, a `diagnostics` call over 1,000
diagnostics, and how long any of its calls holds Neovim.

The server is spawned as an agent spawns it and driven with raw JSON lines over its pipes (no client library
in the timing). Start: spawn to the `initialize` answer. Diagnostics: `tools/call diagnostics` (every open
file) with 1,000 diagnostics set on a buffer, request written to answer read. Neovim held: each call of
`lua/acp_nvim/editor/mcp.lua` wrapped and timed with `vim.uv.hrtime` inside Neovim.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Protocol

from bench.harness import NS_PER_S, ROOT, Neovim, Result, median, ms

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
WRAP = """
local M = require('acp_nvim.editor.mcp')
_G.mcp_held = {}
for _, name in ipairs({'diagnostics', 'buffers', 'selection', 'lsp'}) do
  local f = M[name]
  M[name] = function(...)
    local t = vim.uv.hrtime()
    local out = f(...)
    table.insert(_G.mcp_held, vim.uv.hrtime() - t)
    return out
  end
end
"""


class Config(Protocol):
    quick: bool
    runs: int

    def size(self, full: int, quick: int) -> int: ...

    def workdir(self, name: str) -> Path: ...


def _spawn(socket: str, root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "acp_nvim", "mcp", "--nvim", socket, "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def _ask(server: subprocess.Popen[bytes], ident: int, method: str, params: Any) -> dict[str, Any]:
    assert server.stdin and server.stdout
    server.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
    )
    server.stdin.write(b"\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())  # type: ignore[no-any-return]


def mcp_server(config: Config) -> Result:
    result = Result("mcp_server")
    workdir = config.workdir("mcp_server")
    count = config.size(1000, 100)
    nv = Neovim(workdir)
    try:
        path = workdir / "big.py"
        path.write_text("".join(f"x{i} = {i}\n" for i in range(count)))
        nv.api.command(f"edit {path}")
        nv.lua(
            "local n = ... local list = {} for i = 0, n - 1 do list[#list + 1] = {lnum = i, col = 0,"
            " message = 'undefined name x' .. i, severity = 1 + i % 4, source = 'bench'} end"
            " vim.diagnostic.set(vim.api.nvim_create_namespace('bench'), 0, list)",
            count,
        )
        nv.lua(WRAP)
        starts: list[float] = []
        calls: list[float] = []
        for _ in range(config.size(max(config.runs, 3), 1)):
            began = time.perf_counter()
            server = _spawn(nv.socket, workdir)
            try:
                assert "result" in _ask(server, 1, "initialize", HELLO)
                starts.append(time.perf_counter() - began)
                for ident in range(2, 2 + config.size(20, 3)):
                    began = time.perf_counter()
                    answer = _ask(server, ident, "tools/call", {"name": "diagnostics", "arguments": {}})
                    calls.append(time.perf_counter() - began)
                    assert len(answer["result"]["structuredContent"]["diagnostics"]) == count, answer
            finally:
                server.kill()
                server.wait()
        held = [ns / NS_PER_S for ns in nv.lua("return _G.mcp_held")]
    finally:
        nv.close()
    result.figures["start (spawn to initialize answered)"] = (
        f"median {ms(median(starts))}, max {ms(max(starts))}"
    )
    result.figures[f"diagnostics call, {count} diagnostics"] = (
        f"median {ms(median(calls))}, max {ms(max(calls))}"
    )
    result.figures["Neovim held per call"] = f"median {ms(median(held))}, max {ms(max(held))}"
    judged = not config.quick
    result.judge(f"starts under 300 ms ({ms(median(starts))})", median(starts) < 0.300, judged)
    result.judge(f"diagnostics answers under 20 ms ({ms(median(calls))})", median(calls) < 0.020, judged)
    result.judge(f"no call holds Neovim more than a frame ({ms(max(held))})", max(held) < 0.016, judged)
    return result

"""The Neovim MCP server (`python -m acp_nvim mcp`) against a real headless Neovim with the plugin and a real
language server (pylsp on a small project), driven by the official MCP SDK's client; every response parsed
strictly by the SDK's types (`tests/nvim/mcp_io.py`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.conftest import ROOT
from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.mcp_io import make_project, mcp_client, open_with_pylsp, server_params, strict
from tests.schema_check import assert_valid


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text
    return result.structured_content  # type: ignore[no-any-return]


def test_each_tool_answers_what_neovim_and_its_language_server_know(nvim: Nvim, project: Path) -> None:
    make_project(project)
    open_with_pylsp(nvim, project)
    pkg, main = str(project / "pkg.py"), str(project / "main.py")
    with mcp_client(server_params(nvim, project)) as session:
        init = session.initialize()
        assert init.server_info.name == "neovim" and init.protocol_version == "2025-11-25"
        listed = {tool.name: tool for tool in (session.list_tools()).tools}
        assert sorted(listed) == sorted(
            [
                "diagnostics",
                "definition",
                "references",
                "hover",
                "document_symbols",
                "workspace_symbols",
                "open_buffers",
                "selection",
            ]
        )
        assert listed["definition"].input_schema["required"] == ["path", "line", "column"]
        assert all(tool.annotations and tool.annotations.read_only_hint for tool in listed.values())

        # diagnostics: what vim.diagnostic holds: file, line, column, severity, source, message.
        diagnostics = structured(session.call_tool("diagnostics", {"path": "main.py"}))["diagnostics"]
        expected = nvim.lua(
            "local out = {} for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr(...))) do"
            " out[#out + 1] = {d.lnum + 1, d.col + 1, d.message, d.source} end return out",
            main,
        )
        assert [[d["line"], d["column"], d["message"], d["source"]] for d in diagnostics] == expected
        assert any("missing" in d["message"] for d in diagnostics)
        every = structured(session.call_tool("diagnostics", {}))["diagnostics"]
        assert {d["path"] for d in every} >= {main}

        # definition: `greet` used at main.py 3:7 is defined at pkg.py 1:5.
        found = structured(session.call_tool("definition", {"path": main, "line": 3, "column": 7}))
        assert [(loc["path"], loc["line"], loc["column"]) for loc in found["locations"]] == [(pkg, 1, 5)]
        # references: its definition, its import and both calls.
        refs = structured(session.call_tool("references", {"path": pkg, "line": 1, "column": 5}))
        assert sorted((loc["path"], loc["line"]) for loc in refs["locations"]) == sorted(
            [(pkg, 1), (pkg, 8), (main, 1), (main, 3)]
        )
        hover = session.call_tool("hover", {"path": main, "line": 3, "column": 7})
        assert "Say hello to someone." in hover.content[0].text
        symbols = structured(session.call_tool("document_symbols", {"path": "pkg.py"}))["symbols"]
        names = {(s["name"], s["line"]) for s in symbols}
        assert {("[Function] greet", 1), ("[Class] Greeter", 6)} <= names
        buffers = structured(session.call_tool("open_buffers", {}))["buffers"]
        assert {b["path"]: b["language_servers"] for b in buffers} == {pkg: ["pylsp"], main: ["pylsp"]}

        # Unsaved text is what the tools see: two lines typed above greet, not written.
        nvim.api.command(f"buffer {pkg}")
        nvim.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, {'import os', ''})")
        nvim.api.current.window.cursor = (3, 4)
        # (`greet("world")` moved from line 8 to 10; jedi reads other modules from disk, so within pkg.py.)
        found = structured(session.call_tool("definition", {"path": pkg, "line": 10, "column": 16}))
        assert [(loc["line"], loc["column"]) for loc in found["locations"]] == [(3, 5)]
        assert found["locations"][0]["text"] == "def greet(name):"
        selection = structured(session.call_tool("selection", {}))
        assert selection == {
            **selection,
            "path": pkg,
            "mode": "cursor",
            "line": 3,
            "column": 5,
            "text": "def greet(name):",
            "modified": True,
        }
        modified = structured(session.call_tool("open_buffers", {}))["buffers"]
        assert [b["modified"] for b in modified if b["path"] == pkg] == [True]
        nvim.api.input("vj")
        nvim.wait_mode("v")
        wait_until(
            lambda: tuple(nvim.api.current.window.cursor) == (4, 4), 10, "the selection to reach line 4"
        )
        selected = structured(session.call_tool("selection", {}))
        assert (selected["mode"], selected["text"]) == ("v", 'greet(name):\n    "')


def test_a_path_outside_the_session_folders_is_refused_with_nothing_of_it(
    nvim: Nvim, project: Path, tmp_path: Path
) -> None:
    make_project(project)
    secret = tmp_path / "secret.py"
    secret.write_text("TOKEN = 'do-not-show'\n")
    nvim.api.command(f"edit {secret}")
    nvim.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('t'), 0,"
        " {{lnum = 0, col = 0, message = 'do-not-show'}})"
    )
    with mcp_client(server_params(nvim, project)) as session:
        session.initialize()
        for name, args in [
            ("diagnostics", {"path": str(secret)}),
            ("definition", {"path": str(secret), "line": 1, "column": 1}),
            ("document_symbols", {"path": "../secret.py"}),
            ("hover", {"path": "/etc/passwd", "line": 1, "column": 1}),
        ]:
            result = session.call_tool(name, args)
            assert result.is_error, (name, result)
            assert "outside the session's folders" in result.content[0].text
            assert "do-not-show" not in result.model_dump_json()
        # Nor does "all" reach it: the diagnostic is counted, not shown; the buffer is not listed.
        every = session.call_tool("diagnostics", {})
        assert "do-not-show" not in every.model_dump_json()
        assert "1 in files outside the session's folders left out" in every.content[0].text
        assert structured(session.call_tool("open_buffers", {}))["buffers"] == []
        bad = session.call_tool("definition", {"path": "pkg.py", "line": 0, "column": "x"})
        assert bad.is_error and "`line` must be a whole number" in bad.content[0].text


def raw_server(nvim: Nvim | None, root: Path, address: str | None = None) -> subprocess.Popen[bytes]:
    address = address or (nvim.lua("return vim.v.servername") if nvim else "")
    return subprocess.Popen(
        [sys.executable, "-m", "acp_nvim", "mcp", "--nvim", address, "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def ask(server: subprocess.Popen[bytes], message: dict[str, Any]) -> dict[str, Any]:
    assert server.stdin and server.stdout
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    return json.loads(server.stdout.readline())  # type: ignore[no-any-return]


def test_version_negotiation_and_the_json_rpc_errors_the_spec_names(nvim: Nvim, project: Path) -> None:
    server = raw_server(nvim, project)
    try:
        hello = {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        older = ask(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert strict(json.dumps(older), "initialize")["result"]["protocolVersion"] == "2025-03-26"
        hello["protocolVersion"] = "2099-01-01"
        newer = ask(server, {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": hello})
        assert strict(json.dumps(newer), "initialize")["result"]["protocolVersion"] == "2025-11-25"
        assert strict(json.dumps(ask(server, {"jsonrpc": "2.0", "id": 3, "method": "ping"})), "ping")
        unknown = ask(server, {"jsonrpc": "2.0", "id": 4, "method": "resources/list"})
        assert strict(json.dumps(unknown))["error"]["code"] == -32601
        no_tool = ask(server, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "rm"}})
        assert strict(json.dumps(no_tool))["error"]["code"] == -32602
        # Its stdin closed (the session ended): it exits.
        assert server.stdin
        server.stdin.close()
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()
        server.wait()


def test_the_server_exits_when_neovim_quits_and_refuses_to_start_without_it(
    nvim: Nvim, project: Path, tmp_path: Path
) -> None:
    server = raw_server(nvim, project)
    try:
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        assert "result" in ask(server, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        nvim.api.command("qa!")
    except Exception:
        pass  # the channel closing under the qa! is expected
    try:
        assert server.wait(timeout=10) == 0
        assert server.stderr
        assert b"Neovim closed the connection (it quit)" in server.stderr.read()
    finally:
        server.kill()
        server.wait()
    gone = raw_server(None, project, address=str(tmp_path / "no-such-nvim.sock"))
    _, err = gone.communicate(timeout=10)
    assert gone.returncode == 1
    assert b"cannot connect to Neovim at" in err and b"the Neovim that offered this server is gone" in err


def test_session_new_offers_the_neovim_server_and_its_command_serves(
    nvim: Nvim, agent: Scripted, project: Path, schema: dict[str, Any]
) -> None:
    make_project(project)
    agent.start([], project)
    (new,) = [e for e in agent.entries() if e.get("method") == "session/new"]
    assert_valid(schema, "NewSessionRequest", new["params"])
    (neovim,) = [server for server in new["params"]["mcpServers"] if server["name"] == "neovim"]
    assert neovim["command"] == sys.executable
    assert neovim["args"][:5] == ["-m", "acp_nvim", "mcp", "--nvim", nvim.lua("return vim.v.servername")]
    assert neovim["args"][5:7] == ["--root", str(project)]
    from mcp.client.stdio import StdioServerParameters

    env = {item["name"]: item["value"] for item in neovim["env"]}
    params = StdioServerParameters(command=neovim["command"], args=neovim["args"], env=env, cwd=str(project))
    nvim.api.command(f"edit {project / 'main.py'}")
    with mcp_client(params) as session:
        session.initialize()
        buffers = session.call_tool("open_buffers", {})
        assert str(project / "main.py") in buffers.content[0].text


def test_opts_mcp_turns_the_server_off_and_chooses_its_tools(
    nvim: Nvim, agent: Scripted, project: Path, tmp_path: Path
) -> None:
    agent.start([], project, mcp={"enabled": False, "servers": [{"name": "mine", "command": "my-mcp"}]})
    (new,) = [e for e in agent.entries() if e.get("method") == "session/new"]
    assert [s["name"] for s in new["params"]["mcpServers"]] == ["mine"]
    bad = nvim.lua(
        "return require('acp_nvim').setup(...)",
        {"python": sys.executable, "mcp": {"tools": ["diagnostics", "rm_rf"]}},
    )
    assert bad is not False
    nvim.wait_configured()
    nvim.wait("#acp_test.notes > 0")
    assert any(
        "`mcp.tools` must be a list of the Neovim MCP server's tools" in n["msg"] for n in nvim.notes()
    )


def test_checkhealth_shows_what_sessions_are_offered(nvim: Nvim, agent: Scripted, project: Path) -> None:
    agent.start(
        [], project, mcp={"tools": ["diagnostics", "hover"], "servers": [{"name": "mine", "command": "x"}]}
    )
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "MCP servers offered to agents" in report, report
    address = nvim.lua("return vim.v.servername")
    assert f"neovim: diagnostics, hover; connects back to {address}" in report, report
    assert "yours: mine (stdio)" in report, report


# A language server inside Neovim (`vim.lsp.start` with a function as `cmd`) that answers workspace/symbol,
# which pylsp does not: one symbol in the project, one outside it.
SYMBOL_SERVER = r"""
local inside, outside, root = ...
local function at(path, name)
  local start = { line = 0, character = 4 }
  return { name = name, kind = 12, location = { uri = vim.uri_from_fname(path),
    range = { start = start, ["end"] = { line = 0, character = 9 } } } }
end
local function server(dispatchers)
  local closing = false
  return {
    request = function(method, params, callback)
      if method == "initialize" then
        callback(nil, { capabilities = { workspaceSymbolProvider = true } })
      elseif method == "workspace/symbol" then
        callback(nil, { at(inside, params.query), at(outside, params.query .. "_elsewhere") })
      else
        callback(nil, vim.NIL)
      end
      return true, 1
    end,
    notify = function(method)
      if method == "exit" then
        dispatchers.on_exit(0, 15)
      end
      return true
    end,
    is_closing = function() return closing end,
    terminate = function() closing = true end,
  }
end
vim.lsp.start({ name = "symbols", cmd = server, root_dir = root }, { bufnr = vim.fn.bufnr(inside) })
"""


def test_workspace_symbols_are_what_the_servers_say_inside_the_folders(
    nvim: Nvim, project: Path, tmp_path: Path
) -> None:
    make_project(project)
    outside = tmp_path / "elsewhere.py"
    outside.write_text("def greet_elsewhere(): pass\n")
    open_with_pylsp(nvim, project)
    with mcp_client(server_params(nvim, project)) as session:
        session.initialize()
        # pylsp answers no workspace/symbol: the tool says so.
        refused = session.call_tool("workspace_symbols", {"query": "greet"})
        assert refused.is_error and "do not support workspace/symbol" in refused.content[0].text
        nvim.lua(SYMBOL_SERVER, str(project / "pkg.py"), str(outside), str(project))
        nvim.wait("#vim.lsp.get_clients({name = 'symbols'}) > 0")
        found = session.call_tool("workspace_symbols", {"query": "greet"})
        symbols = structured(found)["symbols"]
        assert [(s["path"], s["line"], s["column"], s["name"]) for s in symbols] == [
            (str(project / "pkg.py"), 1, 5, "[Function] greet")
        ]
        assert structured(found)["left_out"] == 1
        assert "elsewhere" not in found.model_dump_json()

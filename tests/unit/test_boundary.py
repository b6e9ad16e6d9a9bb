"""The Python<->Lua boundary, declared once on each side, names only what exists on the other.

Python reaches Lua through `acp_nvim/nvim/lua_api.py` alone; Lua reaches the host through
`lua/acp_nvim/host/api.lua` alone. A renamed or removed function on either side fails here, not as a Lua
error in the user's face (or a host method silently never called) at run time.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from acp_nvim.nvim.host_methods import METHODS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "acp_nvim"
LUA = ROOT / "lua"
LUA_API = PACKAGE / "nvim" / "lua_api.py"
HOST_API = LUA / "acp_nvim" / "host" / "api.lua"
RPLUGIN = ROOT / "rplugin" / "python3" / "acp_nvim_host.py"
HOST_INIT = LUA / "acp_nvim" / "host" / "init.lua"
ENTRY_POINTS = LUA / "acp_nvim" / "host" / "entry_points.lua"
MCP_MECHANISM = LUA / "acp_nvim" / "editor" / "mcp.lua"
# One module's row of entry_points.lua: `["acp_nvim.ui.chat"] = { "create", "open" },`.
ENTRY_ROW = re.compile(r'^\s*\["(acp_nvim(?:\.\w+)*)"\]\s*=\s*\{([^}]*)\},?\s*$', re.MULTILINE)

# `require('acp_nvim.ui.chat').open` in a Lua chunk written as a Python string.
LUA_CALL = re.compile(r"""require\(\s*['"](acp_nvim(?:\.\w+)*)['"]\s*\)\s*\.\s*(\w+)""")
# What a module exports: `function M.open(`, `M.open = function`, or a re-export `M.read = read.read`.
LUA_EXPORT = re.compile(
    r"^[ \t]*(?:function\s+M\.(\w+)\s*\(|M\.(\w+)[ \t]*=[ \t]*(?:function\b|[A-Za-z_][\w.]*[ \t]*$))",
    re.MULTILINE,
)
# The host methods host/api.lua names (each is a string literal there), and the remote-plugin function.
HOST_METHOD = re.compile(r'"(acp_\w+)"')
HOST_FUNCTION_CALL = re.compile(r"vim\.fn\.(Acp\w+)")
ANY_HOST_CALL = re.compile(r"vim\.rpc(?:notify|request)|vim\.fn\.Acp\w+")
# The synchronous host methods: host/api.lua sends them through its `request` (rpcrequest).
HOST_REQUEST = re.compile(r'\brequest\("(acp_\w+)"')
# The remote-plugin functions host/init.lua registers: `{ type = "function", name = "AcpX", sync = 1, ...}`.
FUNCTION_SPEC = re.compile(r'type = "function", name = "(\w+)", sync = (\d)')


def lua_module_file(module: str) -> Path:
    base = LUA / Path(*module.split("."))
    plain = base.with_suffix(".lua")
    return plain if plain.exists() else base / "init.lua"


def lua_exports(module: str) -> set[str]:
    path = lua_module_file(module)
    assert path.exists(), f"Lua module {module} not found (looked for {path})"
    return {a or b for a, b in LUA_EXPORT.findall(path.read_text(encoding="utf-8"))}


def host_exports() -> set[str]:
    """The names of the host's table (`host_methods.METHODS`): the rplugin declares an export per row."""
    return {method.name for method in METHODS}


def host_api_calls() -> set[str]:
    source = HOST_API.read_text(encoding="utf-8")
    return set(HOST_METHOD.findall(source)) | set(HOST_FUNCTION_CALL.findall(source))


def test_every_lua_function_python_calls_exists_in_its_lua_module() -> None:
    calls = set(LUA_CALL.findall(LUA_API.read_text(encoding="utf-8")))
    # The declaration must cover the chat, status, fs, terminals, questions and start-up: not be empty.
    assert len(calls) >= 20, calls
    missing = sorted(f"{module}.{name}" for module, name in calls if name not in lua_exports(module))
    assert missing == [], f"lua_api.py calls Lua functions that do not exist: {missing}"


def entry_points() -> set[tuple[str, str]]:
    rows = ENTRY_ROW.findall(ENTRY_POINTS.read_text(encoding="utf-8"))
    return {(module, name) for module, names in rows for name in re.findall(r'"(\w+)"', names)}


def test_the_lua_table_of_entry_points_names_exactly_what_python_calls() -> None:
    """`host/entry_points.lua` is the Lua reader's list of what the host calls: both lists, both ways."""
    calls = set(LUA_CALL.findall(LUA_API.read_text(encoding="utf-8")))
    listed = entry_points()
    assert len(listed) >= 20, listed
    assert sorted(calls - listed) == [], "called by lua_api.py, missing from host/entry_points.lua"
    assert sorted(listed - calls) == [], "listed in host/entry_points.lua, called by no lua_api.py chunk"


def test_no_python_module_but_lua_api_writes_lua_calls() -> None:
    offenders = []
    for path in [*PACKAGE.rglob("*.py"), RPLUGIN]:
        if path == LUA_API:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if LUA_CALL.search(line) or ("exec_lua(" in line and path.name != "bridge.py"):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "Lua entry points belong in acp_nvim/nvim/lua_api.py:\n" + "\n".join(offenders)


def test_every_host_method_lua_calls_is_exported_by_the_host() -> None:
    calls = host_api_calls()
    unknown = sorted(calls - host_exports())
    assert unknown == [], f"host/api.lua calls host methods the rplugin does not export: {unknown}"


def test_every_host_export_has_its_lua_function() -> None:
    exports = host_exports()
    assert len(exports) >= 19, exports
    unused = sorted(exports - host_api_calls())
    assert unused == [], f"host methods no function of host/api.lua calls: {unused}"


def test_the_host_answers_exactly_the_calls_lua_waits_for() -> None:
    """A row's `sync` is how Lua calls it: an rpcrequest waits for an answer a notification never sends."""
    source = HOST_API.read_text(encoding="utf-8")
    waited = set(HOST_REQUEST.findall(source)) | set(HOST_FUNCTION_CALL.findall(source))
    answered = {method.name for method in METHODS if method.sync}
    assert len(waited) >= 5, waited
    assert sorted(waited - answered) == [], "host/api.lua waits for these, the host's table does not answer"
    assert sorted(answered - waited) == [], "the host's table answers these, host/api.lua does not wait"


def test_the_remote_plugin_functions_lua_registers_are_the_tables() -> None:
    """host/init.lua registers the rplugin's functions itself (no :UpdateRemotePlugins): the same names, the
    same sync, as the table's function rows."""
    registered = {(name, sync == "1") for name, sync in FUNCTION_SPEC.findall(HOST_INIT.read_text("utf-8"))}
    declared = {(method.name, method.sync) for method in METHODS if method.function}
    assert declared == registered != set()


def test_no_lua_module_but_host_api_calls_the_host() -> None:
    offenders = []
    for path in LUA.rglob("*.lua"):
        if path == HOST_API:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("--", 1)[0]
            # The MCP server's answers go to its own channel (the caller's), never to the host.
            if path == MCP_MECHANISM and "vim.rpcnotify, channel, " in code:
                continue
            if ANY_HOST_CALL.search(code):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "host methods belong in lua/acp_nvim/host/api.lua:\n" + "\n".join(offenders)


def test_the_parsers_see_both_ways_of_defining_and_calling() -> None:
    """The checks above are only as good as their patterns: each form the code uses is recognised."""
    lua = 'function M.one(x)\nM.two = function()\nM.three = read.read\nM.NAME = "x"\nlocal no = 1\n'
    assert {a or b for a, b in LUA_EXPORT.findall(lua)} == {"one", "two", "three"}
    assert LUA_CALL.findall("return require('acp_nvim.editor.fs').read(...)") == [
        ("acp_nvim.editor.fs", "read")
    ]
    assert ANY_HOST_CALL.search('pcall(vim.rpcnotify, channel, "acp_b")')
    assert ANY_HOST_CALL.search("pcall(vim.fn.AcpNvimBootstrap, options)")


def test_the_lua_declaration_of_what_crosses_is_current() -> None:
    """`host/types.lua` is written from the Structs by tools/gen_lua_types.py; a Struct changed without it
    fails here (and in scripts/test)."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_lua_types.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    declared = (LUA / "acp_nvim" / "host" / "types.lua").read_text(encoding="utf-8")
    assert "---@alias acp.ChatOp acp.AddOp|" in declared and "---@class acp.Status" in declared


def test_the_python_side_of_the_boundary_names_no_any() -> None:
    # What crosses is typed (lua_values.LuaValue, the Structs): an `Any` in nvim/ would let an untyped value
    # reach Lua, or one from Lua go unchecked, without mypy seeing it.
    named = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((PACKAGE / "nvim").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bAny\b", line)
    ]
    assert named == []

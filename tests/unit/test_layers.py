"""The layers of the package import only downwards (CONTRIBUTING.md, "Layers"), read from the source (ast).

protocol -> msgspec (and the standard library) only; jsonrpc -> nothing of ACP (its cancel method's name is
a parameter); client -> no application or Neovim module; app -> no Neovim adapter; only `acp_nvim.nvim` and
the rplugin entry import pynvim; `typing_extensions` (typing's backport, no dependency of the plugin) only
for type checkers, under `if TYPE_CHECKING:`. Nothing is imported to check it: a layer that imports one
above it fails here by name, before it can form a cycle at run time. And no hand-written module is over 400
lines (issue 13): one that grows past it is split by responsibility.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "acp_nvim"
RPLUGIN = ROOT / "rplugin" / "python3" / "acp_nvim_host.py"

STDLIB = set(sys.stdlib_module_names) | {"__future__"}
# Imported for type checkers only, by any layer: never at run time, where the plugin does not depend on it.
TYPING_ONLY = {"typing_extensions"}

# What each part may import besides the standard library and itself. `acp_nvim` alone is the package root
# (its `__version__`).
ALLOWED: dict[str, set[str]] = {
    "acp_nvim.protocol": {"msgspec", "acp_nvim"},
    "acp_nvim.jsonrpc": {"msgspec", "anyio", "acp_nvim"},
    # The MCP server's protocol, on the JSON-RPC connection: no ACP, no Neovim.
    "acp_nvim.mcp": {"msgspec", "anyio", "acp_nvim", "acp_nvim.jsonrpc"},
    "acp_nvim.client": {"msgspec", "anyio", "acp_nvim", "acp_nvim.protocol", "acp_nvim.jsonrpc"},
    "acp_nvim.app": {
        "msgspec",
        "anyio",
        "acp_nvim",
        "acp_nvim.protocol",
        "acp_nvim.jsonrpc",
        "acp_nvim.client",
        "acp_nvim.mcp",
    },
    "acp_nvim.nvim": {
        "msgspec",
        "anyio",
        "pynvim",
        # pynvim's own dependency: the MCP server's msgpack-rpc to Neovim (`nvim/mcp_link.py`) reads a stream.
        "msgpack",
        "acp_nvim.mcp",
        "acp_nvim",
        "acp_nvim.protocol",
        "acp_nvim.jsonrpc",
        "acp_nvim.client",
        "acp_nvim.app",
    },
    "acp_nvim.agents": {"msgspec", "anyio", "acp_nvim", "acp_nvim.protocol", "acp_nvim.jsonrpc"},
    # `python -m acp_nvim probe`: an agent check without Neovim.
    "acp_nvim.probe": {
        "msgspec",
        "anyio",
        "acp_nvim",
        "acp_nvim.protocol",
        "acp_nvim.jsonrpc",
        "acp_nvim.client",
    },
    "acp_nvim.__main__": {"acp_nvim", "acp_nvim.probe", "acp_nvim.nvim"},
    "acp_nvim.__init__": set(),
    "rplugin": {"pynvim", "acp_nvim.nvim"},
}


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def part_of(module: str) -> str:
    """The layer a module belongs to: `acp_nvim.X` for a subpackage X, the module itself at the top."""
    parts = module.split(".")
    if parts[0] != "acp_nvim":
        return parts[0]
    if len(parts) == 1:
        return "acp_nvim"
    if (PACKAGE / parts[1]).is_dir():
        return f"acp_nvim.{parts[1]}"
    return f"acp_nvim.{parts[1]}"


def typing_only_lines(tree: ast.AST) -> set[int]:
    """The lines of the imports inside `if TYPE_CHECKING:` blocks (not their `else`)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}:
            for inner in node.body:
                lines.update(n.lineno for n in ast.walk(inner) if isinstance(n, (ast.Import, ast.ImportFrom)))
    return lines


def imports(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """(line, module) of every import in the file, at any depth (functions, TYPE_CHECKING blocks too)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield node.lineno, target
            # `from acp_nvim.nvim import lua_api` imports the module acp_nvim.nvim.lua_api.
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def sources() -> list[tuple[Path, str, str]]:
    files = [(path, module_name(path)) for path in sorted(PACKAGE.rglob("*.py"))]
    found = [(path, module, part_of(module)) for path, module in files]
    found.append((RPLUGIN, "acp_nvim_host", "rplugin"))
    return found


def is_module(name: str) -> bool:
    base = ROOT / Path(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def violations() -> list[str]:
    found: list[str] = []
    for path, module, part in sources():
        allowed = ALLOWED.get(part if part != "acp_nvim" else "acp_nvim.__init__")
        assert allowed is not None, f"{module} belongs to no layer in ALLOWED: add it there"
        typing_only = typing_only_lines(ast.parse(path.read_text(encoding="utf-8"), str(path)))
        for line, target in imports(path, module):
            top = target.split(".")[0]
            if top in STDLIB or (top in TYPING_ONLY and line in typing_only):
                continue
            if top == "acp_nvim":
                if not is_module(target):
                    continue  # a name imported from a module, not a module
                target_part = part_of(target) if target != "acp_nvim" else "acp_nvim"
                if target_part == part or target_part in allowed:
                    continue
            elif top in allowed:
                continue
            where = path.relative_to(ROOT)
            found.append(f"{where}:{line}: {part} imports {target}")
    return sorted(set(found))


def test_no_layer_imports_one_above_it() -> None:
    assert violations() == []


def test_every_module_is_walked() -> None:
    names = {module for _, module, _ in sources()}
    # The walk must see the layers it guards, or it would pass on nothing.
    for expected in (
        "acp_nvim.protocol.codec",
        "acp_nvim.jsonrpc.connection",
        "acp_nvim.client.agent.connection",
    ):
        assert expected in names
    assert any(name.startswith("acp_nvim.app.") for name in names)
    assert any(name.startswith("acp_nvim.nvim.") for name in names)


@pytest.mark.parametrize(
    ("part", "target", "bad"),
    [
        ("acp_nvim.protocol", "anyio", True),
        ("acp_nvim.jsonrpc", "acp_nvim.protocol.schema", True),
        ("acp_nvim.client", "acp_nvim.app.runs", True),
        ("acp_nvim.client", "acp_nvim.nvim.bridge", True),
        ("acp_nvim.app", "acp_nvim.nvim.lua_api", True),
        ("acp_nvim.app", "pynvim", True),
        ("acp_nvim.app", "acp_nvim.client.session.state", False),
        ("acp_nvim.nvim", "acp_nvim.app.port", False),
    ],
)
def test_the_rules_refuse_what_they_should(part: str, target: str, bad: bool) -> None:
    top = target.split(".")[0]
    allowed = ALLOWED[part]
    ok = part_of(target) in allowed if top == "acp_nvim" else top in allowed
    assert ok is not bad


def test_only_the_neovim_adapters_and_the_rplugin_import_pynvim() -> None:
    users = sorted(
        {
            str(path.relative_to(ROOT))
            for path, module, _ in sources()
            for _, t in imports(path, module)
            if t.split(".")[0] == "pynvim"
        }
    )
    assert all(
        user.startswith("acp_nvim/nvim/") or user == "rplugin/python3/acp_nvim_host.py" for user in users
    ), users


def app_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path, module, part in sources():
        if part != "acp_nvim.app":
            continue
        graph[module] = {
            target
            for _, target in imports(path, module)
            if target.startswith("acp_nvim.app.") and is_module(target) and target != module
        }
    return graph


def test_the_application_modules_import_each_other_in_one_direction() -> None:
    graph = app_graph()
    assert len(graph) >= 8, sorted(graph)
    cycles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            cycles.append(" -> ".join([*trail[trail.index(node) :], node]))
            return
        for target in sorted(graph.get(node, ())):
            visit(target, [*trail, node])

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_the_application_holds_no_back_pointer_and_no_type_checking_import() -> None:
    """A `TYPE_CHECKING` import hides a cycle; `self._c` was the controller reached from below."""
    offenders = []
    for path in sorted((PACKAGE / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name) and node.id == "TYPE_CHECKING":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: TYPE_CHECKING")
            if isinstance(node, ast.Attribute) and node.attr in ("_c", "_controller", "controller"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: .{node.attr}")
    assert offenders == []


def test_jsonrpc_names_no_method_of_acp() -> None:
    # Its cancel notification is ACP's (`$/cancel_request`): the client passes its name in.
    from acp_nvim.protocol.methods import METHODS

    literals = {
        (path.name, node.lineno, node.value)
        for path in sorted((PACKAGE / "jsonrpc").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    named = sorted(
        (name, line, value) for name, line, value in literals if value in METHODS or value.startswith("$/")
    )
    assert named == []


# Generated from the npm package's schema (tools/gen_protocol.py): their length is the protocol's, not ours.
GENERATED = {
    PACKAGE / "protocol" / "schema.py",
    PACKAGE / "protocol" / "methods.py",
    PACKAGE / "protocol" / "unstable.py",
    PACKAGE / "protocol" / "unstable_methods.py",
    PACKAGE / "client" / "surface.py",
}
MAX_MODULE_LINES = 400


def long_modules() -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)}: {lines}"
        for path in PACKAGE.rglob("*.py")
        if path not in GENERATED
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    )


def test_no_hand_written_module_of_the_package_is_over_four_hundred_lines() -> None:
    assert long_modules() == []


# Lua's bound is of non-blank lines (issue 25): its modules carry long LuaCATS headers and stylua's layout.
MAX_LUA_MODULE_LINES = 450


def long_lua_modules() -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)}: {lines}"
        for folder in ("lua", "plugin", "ftplugin")
        for path in (ROOT / folder).rglob("*.lua")
        if (lines := sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip()))
        > MAX_LUA_MODULE_LINES
    )


def test_no_lua_module_is_over_four_hundred_and_fifty_non_blank_lines() -> None:
    assert long_lua_modules() == []


def test_the_line_limit_walks_every_layer_and_skips_only_the_generated_code() -> None:
    walked = {path.relative_to(PACKAGE).parts[0] for path in PACKAGE.rglob("*.py") if path not in GENERATED}
    for layer in ("protocol", "jsonrpc", "client", "app", "nvim", "agents"):
        assert layer in walked
    assert all(path.exists() for path in GENERATED), GENERATED

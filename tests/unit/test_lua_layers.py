"""The Lua layers of CONTRIBUTING.md hold: no module requires one of a layer above it. Every `require` is
read, those inside functions too (most of the plugin's are, to keep start-up cheap), so a require written late
in a function cannot reach up unseen."""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_lua_layout import LUA, REQUIRE, ROOT, code_lines, lua_sources

# Lowest first; a module may require its own layer and the ones before it.
LAYERS = ("util", "core", "editor", "ui", "top")
CORE = {"acp_nvim.config", "acp_nvim.build"}
# init.lua (the actions the commands call) and the wiring of the events sit with the UI.
UI = {"acp_nvim", "acp_nvim.wiring"}


def module_name(path: Path) -> str:
    """The name `require` loads `path` by; plugin/ and ftplugin/ files are named by their path."""
    if path.is_relative_to(LUA):
        parts = list(path.relative_to(LUA).with_suffix("").parts)
        if parts[-1] == "init":
            parts.pop()
        return ".".join(parts)
    return str(path.relative_to(ROOT))


def layer(module: str) -> str:
    """plugin/, ftplugin/, health.lua and the lualine component are above everything."""
    parts = module.split(".")
    if parts[0] != "acp_nvim" or module == "acp_nvim.health":
        return "top"
    if module in UI:
        return "ui"
    if module in CORE or (len(parts) > 1 and parts[1] == "host"):
        return "core"
    if len(parts) > 1 and parts[1] in ("util", "editor", "ui"):
        return parts[1]
    raise AssertionError(f"{module}: no layer; add it to tests/unit/test_lua_layers.py and CONTRIBUTING.md")


def requires() -> dict[str, list[tuple[str, int]]]:
    """Each module's requires of the plugin's modules, with their line numbers."""
    found: dict[str, list[tuple[str, int]]] = {}
    for path in lua_sources():
        found[module_name(path)] = [
            (target, number) for number, code in code_lines(path) for target in REQUIRE.findall(code)
        ]
    return found


def test_no_lua_module_requires_one_of_a_layer_above_it() -> None:
    upward = [
        f"{module}:{number} ({layer(module)}) requires {target} ({layer(target)})"
        for module, targets in requires().items()
        for target, number in targets
        if LAYERS.index(layer(target)) > LAYERS.index(layer(module))
    ]
    assert upward == [], "upward requires (see CONTRIBUTING.md, Lua layers):\n" + "\n".join(upward)


def test_the_outbound_host_api_reaches_neither_the_editor_nor_the_ui() -> None:
    """What `host/api.lua` requires, and what those require in turn, to the end."""
    graph = requires()
    seen, todo = set(), ["acp_nvim.host.api"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += [target for target, _ in graph.get(module, [])]
    assert {"acp_nvim.host.api", "acp_nvim.host", "acp_nvim.config"} <= seen
    assert sorted(m for m in seen if layer(m) in ("editor", "ui", "top")) == []


def test_every_module_has_a_layer() -> None:
    named = {module_name(path) for path in lua_sources()}
    assert {"acp_nvim", "acp_nvim.util.events", "acp_nvim.editor.fs", "acp_nvim.ui.chat"} <= named
    for module in named:
        layer(module)


def test_the_user_is_told_things_through_one_helper() -> None:
    """`util/notify.lua` gives every message the plugin's prefix and title; `build.lua` runs before the plugin
    is installed and says its own."""
    allowed = {LUA / "acp_nvim" / "util" / "notify.lua", LUA / "acp_nvim" / "build.lua"}
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in lua_sources()
        if path not in allowed
        for number, code in code_lines(path)
        if "vim.notify" in code
    ]
    assert offenders == [], "use require('acp_nvim.util.notify'):\n" + "\n".join(offenders)

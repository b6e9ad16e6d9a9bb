"""The Lua layout keeps its promises: every module a `require` names exists, commands are created in one
module and highlight groups defined in one, so a reader finds each where CONTRIBUTING.md says it is."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LUA = ROOT / "lua"
COMMANDS = LUA / "acp_nvim" / "ui" / "commands.lua"
HIGHLIGHTS = LUA / "acp_nvim" / "ui" / "highlights.lua"

# The ways a Lua module is named for loading: require with parentheses or a string argument, through pcall,
# and package.loaded (the last test shows each).
REQUIRE = re.compile(
    r"""(?:require\s*\(?\s*|pcall\(\s*require\s*,\s*|package\.loaded\[\s*)['"](acp_nvim(?:\.\w+)*)['"]"""
)
# `vim.cmd("highlight ...")`, `vim.cmd.hi(...)`, `vim.cmd.highlight(...)`.
HIGHLIGHT_COMMAND = re.compile(r"""\bcmd(?:\s*\(?\s*["']\s*|\.)hi(?:ghlight)?\b""")


def lua_sources() -> list[Path]:
    return sorted(path for folder in ("lua", "plugin", "ftplugin") for path in (ROOT / folder).rglob("*.lua"))


def code_lines(path: Path) -> list[tuple[int, str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [(number, line.split("--", 1)[0]) for number, line in enumerate(lines, 1)]


def module_exists(module: str) -> bool:
    base = LUA / Path(*module.split("."))
    return base.with_suffix(".lua").exists() or (base / "init.lua").exists()


def test_every_required_lua_module_exists() -> None:
    """Also in the Lua chunks the Python side, the tests and the benchmarks send."""
    sources = [*lua_sources(), *(ROOT / "acp_nvim").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    sources += [*(ROOT / "bench").rglob("*.py"), *(ROOT / "bench").rglob("*.lua")]
    missing = []
    named = set()
    for path in sources:
        if "node_modules" in path.parts or path == Path(__file__).resolve():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for module in REQUIRE.findall(line):
                named.add(module)
                if not module_exists(module):
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {module}")
    assert len(named) >= 25, named
    assert missing == [], "required Lua modules that do not exist:\n" + "\n".join(missing)


def test_commands_are_created_in_one_module() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in lua_sources()
        if path != COMMANDS
        for number, code in code_lines(path)
        if "nvim_create_user_command" in code
    ]
    assert offenders == [], "user commands belong in lua/acp_nvim/ui/commands.lua:\n" + "\n".join(offenders)
    created = re.findall(r'command\(\s*"(Acp\w+)"', COMMANDS.read_text(encoding="utf-8"))
    assert len(created) >= 20 and {"AcpStart", "AcpLog", "AcpMode", "AcpReview"} <= set(created), created


def test_highlight_groups_are_defined_in_one_module() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in lua_sources()
        if path != HIGHLIGHTS
        for number, code in code_lines(path)
        if "nvim_set_hl" in code or HIGHLIGHT_COMMAND.search(code)
    ]
    where = "lua/acp_nvim/ui/highlights.lua"
    assert offenders == [], f"highlight groups belong in {where}:\n" + "\n".join(offenders)


def test_the_patterns_see_every_way_of_requiring_and_highlighting() -> None:
    lua = """require("acp_nvim.a") require'acp_nvim.b'
        pcall(require, "acp_nvim.c") package.loaded["acp_nvim.d"]"""
    assert REQUIRE.findall(lua) == ["acp_nvim.a", "acp_nvim.b", "acp_nvim.c", "acp_nvim.d"]
    assert REQUIRE.findall("logging.getLogger('acp_nvim.x')") == []
    assert HIGHLIGHT_COMMAND.search("vim.cmd('highlight default link X Y')")
    assert HIGHLIGHT_COMMAND.search('vim.cmd.hi("X guifg=red")')
    assert not HIGHLIGHT_COMMAND.search('vim.cmd("hide")')

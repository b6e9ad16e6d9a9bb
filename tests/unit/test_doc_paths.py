"""Every path of the project that a comment, a docstring or a page names exists: a file moved or renamed takes
its mentions along (`acp_nvim/app/registry.py` stayed in five comments after it moved)."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT
from tests.unit.test_self_contained import repository_files

SCANNED_SUFFIXES = {".py", ".lua", ".md", ".txt"}
# The project's own folders, as a mention starts: the layer folders are written without their package.
PACKAGE = ("app", "client", "nvim", "jsonrpc", "protocol", "agents")
LUA = ("ui", "editor", "host", "util")
TOP = ("acp_nvim", "lua", "tests", "tools", "bench", "doc", "scripts", "plugin", "ftplugin", "rplugin")
FOLDERS = "|".join((*TOP, *PACKAGE, *LUA))
# `app/runs.py`, `lua/acp_nvim/ui/chat.lua`, `editor/fs/`; not `src/main.py` (a test's data) or a URL.
# (`lua/vim/` is Neovim's runtime.)
MENTION = re.compile(
    rf"(?<![\w./:-])(?!lua/vim/)((?:{FOLDERS})/(?:[\w-]+/)*(?:[\w-]+\.(?:py|lua|json|md|txt)|[\w-]+/))(?![\w/])"
)
# `acp_nvim.app.runs`, `acp_nvim.ui.chat` (a require); an attribute after the module is allowed. Not
# `acp_nvim.agents.NAME`: an option's name.
DOTTED = re.compile(rf"(?<![\w.])acp_nvim\.((?:{'|'.join((*PACKAGE[:-1], *LUA))})(?:\.[a-z_]+)+)")


def _exists(mention: str) -> bool:
    first = mention.split("/", 1)[0]
    bases = [""]
    if first in PACKAGE:
        bases += ["acp_nvim/", "tests/"]  # tests/agents/ too
    if first in LUA:
        bases.append("lua/acp_nvim/")
    return any((ROOT / (base + mention)).exists() for base in bases)


def _module_exists(dotted: str) -> bool:
    parts = dotted.split(".")
    # The longest prefix that is a module or a package; what follows it is an attribute.
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end])
        for base in (ROOT / "acp_nvim", ROOT / "lua" / "acp_nvim"):
            if (base / f"{path}.py").exists() or (base / f"{path}.lua").exists() or (base / path).is_dir():
                return end >= 2 or len(parts) == 1
    return False


def _stale(text: str) -> list[str]:
    found = [m.group(1) for m in MENTION.finditer(text) if not _exists(m.group(1))]
    found += [f"acp_nvim.{m.group(1)}" for m in DOTTED.finditer(text) if not _module_exists(m.group(1))]
    return found


def test_the_check_finds_a_stale_mention() -> None:
    assert _stale("see `app/registry.py` and acp_nvim.app.options.ModeCommands") == [
        "app/registry.py",
        "acp_nvim.app.options",
    ]
    assert _stale("see `app/runs.py`, `ui/chat/init.lua`, acp_nvim.app.runs.Runs and `editor/fs/`") == []


def test_every_path_a_comment_or_a_page_names_exists() -> None:
    offenders = []
    for relative in repository_files():
        if relative.suffix not in SCANNED_SUFFIXES or relative.parts[:2] == ("tests", "fixtures"):
            continue
        if relative == Path(__file__).resolve().relative_to(ROOT):
            continue
        text = (ROOT / relative).read_text("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            offenders += [f"{relative}:{number}: {stale}" for stale in _stale(line)]
    assert not offenders, "paths that no longer exist:\n" + "\n".join(offenders)

"""The status `state` has one owner, Python: Lua writes no state name and no rule of its own. What it shows
before the host answers is what `acp_nvim/app/status_facts.json` declares for the fact it recorded."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from acp_nvim.app.status_facts import FACTS
from acp_nvim.app.views import State

ROOT = Path(__file__).resolve().parents[2]
STATES = "|".join(typing.get_args(State))
# `state = "running"`, `x.state ~= "ready"`, `"error" == state`: a state decided or tested in Lua.
STATE_RULE = re.compile(
    rf"""\bstate\s*(?:==|~=|=)\s*["'](?:{STATES})["']|["'](?:{STATES})["']\s*(?:==|~=)\s*[\w.()]*\bstate\b"""
)
RECORDED = re.compile(r"""\b(?:record|applies)\(\s*["'](\w+)["']""")


def lua_code() -> dict[Path, str]:
    folders = ("lua", "plugin", "ftplugin")
    sources = sorted(path for folder in folders for path in (ROOT / folder).rglob("*.lua"))
    return {
        path: "\n".join(line.split("--", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())
        for path in sources
    }


def test_no_lua_module_writes_or_tests_a_state() -> None:
    # The editor services have a `state` of their own, a job's process group's (`process_groups.job_state`).
    editor = ROOT / "lua" / "acp_nvim" / "editor"
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path, code in lua_code().items()
        if not path.is_relative_to(editor)
        for match in STATE_RULE.finditer(code)
    ]
    assert found == []


def test_the_facts_lua_records_are_the_ones_the_table_declares() -> None:
    code = "\n".join(lua_code().values())
    assert set(RECORDED.findall(code)) <= set(FACTS.facts)
    # Each declared fact is named by the Lua that records it (some through a choice of two names).
    unused = [fact for fact in FACTS.facts if f'"{fact}"' not in code]
    assert unused == []

"""Which session is current has one owner, Python (`acp_nvim/app/runs.py`): the status names it
(`session_id`) and one place in Lua, `ui/status.lua`'s `set`, applies it to the chat module. No other Lua
assigns `current`."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `chat.current = id`, `M.current = nil`, `chats["current"] = ...`: a field named current assigned.
ASSIGNED = re.compile(r"""(?:\.current|\[\s*["']current["']\s*\])\s*=(?!=)""")
# The one place that applies the host's word, and the field's declaration.
ALLOWED = {
    ("lua/acp_nvim/ui/status.lua", "chat.current = new.session_id"),
    ("lua/acp_nvim/ui/chat/state.lua", "M.current = nil"),
}


def assignments() -> list[tuple[str, str]]:
    found = []
    for folder in ("lua", "plugin", "ftplugin"):
        for path in sorted((ROOT / folder).rglob("*.lua")):
            for line in path.read_text(encoding="utf-8").splitlines():
                code = line.split("--", 1)[0]
                if ASSIGNED.search(code):
                    found.append((str(path.relative_to(ROOT)), code.strip()))
    return found


def test_only_the_status_assigns_the_current_session() -> None:
    assert [found for found in assignments() if found not in ALLOWED] == []


def test_the_status_still_applies_the_hosts_word() -> None:
    assert ("lua/acp_nvim/ui/status.lua", "chat.current = new.session_id") in assignments()

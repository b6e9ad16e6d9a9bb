"""Issue 29: the agent's notices and its context compactions, as a user sees them. The client advertises
`session.notices` and `session.compaction`; a notice shows in the chat (a warning or an error also once
through a notification), a compaction as one line with its summary folded under it, and the context figure
of the winbar and the status follows the agent's usage after it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import journal, scripted_agent

DISK = {
    "sessionUpdate": "notice",
    "severity": "warning",
    "title": "Disk almost full",
    "description": "1 GiB left",
}
COMPACTION = "c-1"
TURN: list[dict[str, Any]] = [
    {"text": "Working."},
    {"update": DISK},
    # The same warning again (agents repeat theirs each turn): the chat shows it, the user is told once.
    {"update": DISK},
    {"update": {"sessionUpdate": "notice", "severity": "info", "title": "Model rerouted"}},
    {"update": {"sessionUpdate": "notice", "severity": "error", "title": "Quota exceeded"}},
    {"update": {"sessionUpdate": "usage_update", "used": 90000, "size": 100000}},
    {"update": {"sessionUpdate": "compaction_update", "compactionId": COMPACTION, "status": "in_progress"}},
    {
        "update": {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": COMPACTION,
            "content": {"type": "text", "text": "The user asked for a fix.\n"},
        }
    },
    {
        "update": {
            "sessionUpdate": "compaction_summary_chunk",
            "compactionId": COMPACTION,
            "content": {"type": "text", "text": "The fix is in hello.py."},
        }
    },
    {"update": {"sessionUpdate": "compaction_update", "compactionId": COMPACTION, "status": "completed"}},
    {"update": {"sessionUpdate": "usage_update", "used": 1200, "size": 100000}},
    {"text": "Done after compaction."},
]


def winbar(nvim: Nvim) -> str:
    return str(
        nvim.lua(
            "return vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]].winbar",
            nvim.status()["session_id"],
        )
    )


def test_notices_and_a_compaction_show_in_the_chat_and_the_status(nvim: Nvim, tmp_path: Path) -> None:
    scenario = {"agentInfo": {"name": "scripted", "title": "Scripted", "version": "1"}, "echo": False}
    scenario["turns"] = [TURN]
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    (initialize,) = [entry for entry in journal(tmp_path) if entry.get("method") == "initialize"]
    session = initialize["params"]["clientCapabilities"]["session"]
    assert session["notices"] == {} and session["compaction"] == {}, session

    nvim.lua("require('acp_nvim').prompt('fix it')")
    nvim.wait_chat("Done after compaction.")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    assert text.count("  Disk almost full: 1 GiB left") == 2, text
    assert "  Model rerouted" in text and "  Quota exceeded" in text
    # One line, updated in place: never "compacting" once it completed, the summary under it.
    assert text.count("  ↻ context compacted") == 1, text
    assert "compacting context" not in text
    assert "    The user asked for a fix.\n    The fix is in hello.py." in text

    told = [(note["msg"], note["level"]) for note in nvim.notes() if "s: " in str(note["msg"])]
    assert told == [
        ("acp.nvim: s: Disk almost full: 1 GiB left", 3),
        ("acp.nvim: s: Quota exceeded", 4),
    ], nvim.notes()

    # The summary is folded (closed) under its line, which stays in view.
    chat_win = nvim.lua(
        "return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]",
        nvim.status()["session_id"],
    )
    lines = nvim.chat_lines()
    title = lines.index("  ↻ context compacted") + 1
    summary = lines.index("    The user asked for a fix.") + 1
    folded = nvim.lua(
        "local win, title, summary = ... return vim.api.nvim_win_call(win, function()"
        " return { vim.fn.foldclosed(title), vim.fn.foldclosed(summary) } end)",
        chat_win,
        title,
        summary,
    )
    assert folded == [title, title], folded

    assert "ctx 1.2k/100.0k" in winbar(nvim)
    assert nvim.status()["usage"]["used"] == 1200

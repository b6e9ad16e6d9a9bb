"""Issue 29: `:AcpSessions rename` and `archive` with the scripted agent (official Python SDK) advertising
the unstable `sessionCapabilities.title` and `.archive`, and with one advertising neither: what is sent is
valid against the SDK's unstable schema, what the agent stored is shown, and nothing is offered or sent where
the capability is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SCHEMA_PATH
from tests.nvim.conftest import Nvim, help_tags
from tests.nvim.test_sessions import Agent, selects, setup, stored, wait_journal, wait_note
from tests.schema_check import assert_valid

UNSTABLE_TYPES = {"session/set_title": "SetSessionTitleRequest", "session/archive": "ArchiveSessionRequest"}

TYPE_TITLE = r"""
acp_test.inputs = {}
vim.ui.input = function(opts, on_confirm)
  table.insert(acp_test.inputs, opts)
  on_confirm(acp_test.typed)
end
"""


@pytest.fixture
def unstable_schema() -> dict[str, Any]:
    return json.loads((SCHEMA_PATH.parent / "schema.unstable.json").read_text())


def _completion(nvim: Nvim) -> list[str]:
    return nvim.lua("return vim.fn.getcompletion('AcpSessions ', 'cmdline')")  # type: ignore[no-any-return]


def test_a_stored_session_is_renamed_with_the_title_the_agent_stored_then_archived(
    nvim: Nvim, tmp_path: Path, unstable_schema: dict[str, Any]
) -> None:
    cwd = str(tmp_path)
    agent = Agent(
        tmp_path,
        "s",
        {
            "agentCapabilities": {
                "loadSession": True,
                "sessionCapabilities": {"list": {}, "title": {}, "archive": {}},
            },
            "sessions": [stored("old-1", cwd, "First try", "2025-01-01T10:00:00Z")],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    assert nvim.status()["session_features"] == ["title", "archive"]
    assert _completion(nvim) == ["delete", "rename", "archive", "all"]

    session_id = nvim.status()["session_id"]

    # The open session renamed: its chat and the status show the title the agent stored.
    nvim.lua(TYPE_TITLE)
    nvim.lua("acp_test.answers = { ... } acp_test.typed = '  Second   try '", session_id)
    nvim.api.command("AcpSessions rename")
    wait_note(nvim, "renamed session to Second try")
    assert selects(nvim)[-1]["prompt"] == "Rename a session of s"
    (asked,) = nvim.lua("return acp_test.inputs")
    assert asked["default"] == ""
    (sent,) = agent.sent("session/set_title")
    assert sent["params"] == {"sessionId": session_id, "title": "Second   try"}
    nvim.wait("require('acp_nvim').status().title == 'Second try'")
    winbar = "vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]].winbar"
    assert "Second try" in nvim.lua(f"return {winbar}", session_id)

    # A stored one archived: it is hidden from the list from then on.
    nvim.lua("acp_test.answers = { 'old-1' }")
    nvim.api.command("AcpSessions archive")
    wait_note(nvim, "archived session First try")
    (archived,) = wait_journal(nvim, agent, "session/archive")
    assert archived["params"] == {"sessionId": "old-1"}
    nvim.api.command("AcpSessions")
    nvim.wait("#acp_test.selects == 3")
    assert selects(nvim)[-1]["items"] == [f"Second try  {session_id[:8]}  [open]"], selects(nvim)
    for entry in agent.sent():
        if entry["method"] in UNSTABLE_TYPES:
            assert_valid(unstable_schema, UNSTABLE_TYPES[entry["method"]], entry["params"])
    assert [n for n in nvim.notes() if n["level"] == 4] == []


def test_an_agent_without_titles_or_archive_is_offered_neither_and_sent_neither(
    nvim: Nvim, tmp_path: Path
) -> None:
    cwd = str(tmp_path)
    agent = Agent(
        tmp_path,
        "s",
        {
            "agentCapabilities": {"sessionCapabilities": {"list": {}}},
            "sessions": [stored("old-1", cwd, "First try", "2025-01-01T10:00:00Z")],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    assert nvim.status()["session_features"] == []
    assert _completion(nvim) == ["delete", "all"]
    for command, why in [
        ("AcpSessions rename", "s cannot rename sessions (it does not offer session/set_title)"),
        ("AcpSessions archive", "s cannot archive sessions (it does not offer session/archive)"),
        ("AcpFork", "s cannot fork sessions (it does not offer session/fork)"),
    ]:
        nvim.api.command(command)
        wait_note(nvim, why)
    assert not selects(nvim)
    assert agent.methods() == ["initialize", "session/new"]


def test_help_tags_of_fork_rename_archive_and_usage(nvim: Nvim, tmp_path: Path) -> None:
    tags = help_tags(nvim, tmp_path)
    for tag in [":AcpFork", ":AcpSessions-rename", ":AcpSessions-archive", "acp_nvim-chat-usage"]:
        assert tag in tags, tag

"""A prompt sent from outside a chat (`:AcpPrompt`) while a session the user opened is being opened — a stored
one picked in `:AcpSessions` (session/load, session/resume) or `:AcpFork`'s (session/fork) — in a real Neovim
with the scripted agent (tests/agents/scripted_agent.py), which holds that request until the test's word: the
prompt waits for that session and goes to it once it is open, in order, never to the session in use before
(nor, for a load or a resume, to the new chat's session before the agent has it open); when it does not open,
the prompt comes back to the user. `:AcpNew`'s case is tests/nvim/test_new_session_prompt.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.harness import wait_until
from tests.conftest import SCHEMA_PATH
from tests.nvim.agent_io import start_scenario
from tests.nvim.conftest import Nvim
from tests.nvim.test_new_session_prompt import WAITING, chat_text, handled, prompts, sent, wait_note
from tests.schema_check import assert_valid

ANSWER = [{"text": "answered ${PROMPT}"}]
SENT_TYPES = {
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/fork": "ForkSessionRequest",
    "session/prompt": "PromptRequest",
}


@pytest.fixture
def unstable_schema() -> dict[str, Any]:
    """session/fork is in the SDK's unstable schema (a superset of v1 for the rest)."""
    return json.loads((SCHEMA_PATH.parent / "schema.unstable.json").read_text())  # type: ignore[no-any-return]


def opening_held(nvim: Nvim, tmp_path: Path, method: str, held: dict[str, Any], **opts: Any) -> Path:
    """The agent ready with its first session (sess-1) and a stored one (old-1), then the session opened by
    `method` (`:AcpSessions` picking old-1, or `:AcpFork` of sess-1), which the agent holds until the file
    returned exists; the cursor in a file buffer, no chat's."""
    release = tmp_path / "release"
    history = [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "OLD HISTORY"}}]
    scenario = {
        "echo": False,
        "agentCapabilities": {
            "loadSession": True,
            "sessionCapabilities": {"list": {}, "resume": {}, "fork": {}},
        },
        "sessions": [{"sessionId": "old-1", "cwd": str(tmp_path), "title": "Earlier", "history": history}],
        "held": {method: {"untilFile": str(release), **held}},
        "turns": [ANSWER, ANSWER],
    }
    start_scenario(nvim, tmp_path, scenario, **opts)
    source = tmp_path / "code.py"
    source.write_text("print('hi')\n")
    nvim.api.command(f"edit {source}")
    assert nvim.lua("return require('acp_nvim.ui.session_commands').current()") is None
    if method == "session/fork":
        nvim.api.command("AcpFork")
    else:
        nvim.lua("acp_test.answers = { 'old-1' }")
        nvim.api.command("AcpSessions")
    wait_until(lambda: len(sent(tmp_path, method)) == 1, 15.0, method)
    return release


def assert_valid_sent(tmp_path: Path, schema: dict[str, Any]) -> None:
    for method, definition in SENT_TYPES.items():
        for params in sent(tmp_path, method):
            assert_valid(schema, definition, params)


def sent_two_and_answered(nvim: Nvim, tmp_path: Path, release: Path, opened: str) -> None:
    """Two prompts sent from no chat while the session is held: they wait (the agent has neither, no chat
    shows them); once it opens, both go to it, in order, and its chat shows them after what it came with."""
    nvim.api.command("AcpPrompt one")
    nvim.api.command("AcpPrompt two")
    handled(nvim, tmp_path, 2)
    assert prompts(tmp_path) == []
    assert [n["msg"] for n in nvim.notes()] == ["acp.nvim: " + WAITING] * 2
    assert "one" not in chat_text(nvim, "sess-1")

    release.touch()
    nvim.wait("require('acp_nvim').status().session_id == args[1]", 15.0, opened)
    nvim.wait(
        "table.concat(require('acp_nvim.ui.chat').lines(args[1]), '\\n'):find('answered two', 1, true)",
        15.0,
        opened,
    )
    nvim.wait_state("ready")
    assert prompts(tmp_path) == [(opened, "one"), (opened, "two")]
    text = chat_text(nvim, opened)
    assert text.index("▍ You\none") < text.index("answered one") < text.index("▍ You\ntwo")
    for word in ("one", "two", "answered"):
        assert word not in chat_text(nvim, "sess-1")
    assert nvim.errors() == []


def given_back(nvim: Nvim, tmp_path: Path, release: Path, failure: str) -> None:
    """A prompt sent from no chat while the session is held, which the agent then refuses: never sent, to
    either session; its text back in the prompt of the chat in use (sess-1's), which still works."""
    nvim.api.command("AcpPrompt keep me")
    handled(nvim, tmp_path, 1)
    release.touch()
    wait_note(nvim, failure)
    wait_note(nvim, "not sent")
    assert prompts(tmp_path) == []
    nvim.wait(
        "vim.deep_equal(vim.api.nvim_buf_get_lines(require('acp_nvim.ui.chat').chats['sess-1'].prompt_buf,"
        " 0, -1, false), {'keep me'})"
    )
    nvim.wait_state("ready")
    assert nvim.status()["session_id"] == "sess-1"
    assert not [n for n in nvim.notes() if "Traceback" in n["msg"] or "internal error" in n["msg"]]


def test_prompts_sent_while_a_stored_session_loads_wait_for_it_and_go_to_it_in_order(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    release = opening_held(nvim, tmp_path, "session/load", {})
    sent_two_and_answered(nvim, tmp_path, release, "old-1")
    # Its replayed history first, then the prompts that waited.
    text = chat_text(nvim, "old-1")
    assert text.index("OLD HISTORY") < text.index("▍ You\none")
    assert_valid_sent(tmp_path, schema)


def test_a_prompt_typed_in_the_chat_of_a_stored_session_still_loading_waits_for_the_load(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = opening_held(nvim, tmp_path, "session/load", {})
    # The chat is there before the agent has loaded the session (its replay lands in it).
    nvim.wait("require('acp_nvim.ui.chat').chats['old-1'] ~= nil")
    nvim.lua("vim.api.nvim_set_current_buf(require('acp_nvim.ui.chat').chats['old-1'].prompt_buf)")
    assert nvim.lua("return require('acp_nvim.ui.session_commands').current()") == "old-1"
    nvim.api.command("AcpPrompt mine")
    handled(nvim, tmp_path, 1)
    assert prompts(tmp_path) == []
    release.touch()
    nvim.wait(
        "table.concat(require('acp_nvim.ui.chat').lines('old-1'), '\\n'):find('answered mine', 1, true)"
    )
    nvim.wait_state("ready")
    assert prompts(tmp_path) == [("old-1", "mine")]
    text = chat_text(nvim, "old-1")
    assert text.index("OLD HISTORY") < text.index("▍ You\nmine") < text.index("answered mine")
    assert nvim.errors() == []


def test_prompts_sent_while_a_stored_session_resumes_wait_for_it(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    release = opening_held(nvim, tmp_path, "session/resume", {}, sessions={"prefer_resume": True})
    sent_two_and_answered(nvim, tmp_path, release, "old-1")
    assert not sent(tmp_path, "session/load")
    assert_valid_sent(tmp_path, schema)


def test_a_prompt_waiting_for_a_stored_session_the_agent_cannot_load_comes_back_to_the_user(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = opening_held(nvim, tmp_path, "session/load", {"error": {"code": -32603, "message": "corrupt"}})
    given_back(nvim, tmp_path, release, "could not load the session: corrupt")
    assert "old-1" not in nvim.lua("return vim.tbl_keys(require('acp_nvim.ui.chat').chats)")


def test_prompts_sent_while_a_session_forks_wait_for_the_fork_and_go_to_it_in_order(
    nvim: Nvim, tmp_path: Path, unstable_schema: dict[str, Any]
) -> None:
    release = opening_held(nvim, tmp_path, "session/fork", {})
    (fork,) = sent(tmp_path, "session/fork")
    assert fork["sessionId"] == "sess-1"
    sent_two_and_answered(nvim, tmp_path, release, "fork-2")
    assert "Forked from sess-1" in chat_text(nvim, "fork-2")
    assert_valid_sent(tmp_path, unstable_schema)


def test_a_prompt_waiting_for_a_fork_the_agent_refuses_comes_back_to_the_user(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = opening_held(nvim, tmp_path, "session/fork", {"error": {"code": -32603, "message": "no forks"}})
    given_back(nvim, tmp_path, release, "could not fork the session: no forks")

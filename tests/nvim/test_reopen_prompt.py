"""A prompt sent while the sessions that were open are being reopened — after a terminal login restarted the
agent, or by `:AcpRestart` — in a real Neovim with the scripted agent (tests/agents/scripted_agent.py), which
holds the session/load until the test's word: the prompt waits for its session and goes to it once the agent
has loaded it, after the replayed history, never before the load's answer; when the session does not come
back, the prompt comes back to the user. Prompts sent while a session the user asked for opens:
tests/nvim/test_opening_session_prompt.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.conftest import Nvim
from tests.nvim.test_new_session_prompt import HELD, WAITING, chat_text, wait_note
from tests.nvim.test_restart import start_loading_agent, wait_lines
from tests.nvim.test_sessions import Agent, setup, wait_journal

TERMINAL_LOGIN = {"id": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"]}


def prompts(agent: Agent) -> list[tuple[str, str]]:
    """Each session/prompt the agent got: its session and its text."""
    return [
        (p["sessionId"], " ".join(b.get("text", "") for b in p["prompt"] if b.get("type") == "text"))
        for p in (entry["params"] for entry in agent.sent("session/prompt"))
    ]


def held_load(nvim: Nvim, tmp_path: Path, **scenario: Any) -> tuple[Agent, Path]:
    """The agent ready in session s-1 (stored with its history); its next process holds session/load until
    the file returned exists; the turns answer "answered PROMPT"."""
    release = tmp_path / "release"
    agent = start_loading_agent(
        nvim,
        tmp_path,
        held={"session/load": {"untilFile": str(release)}},
        **{"turns": [[{"text": "answered ${PROMPT}"}]] * 2, **scenario},
    )
    return agent, release


def waited(nvim: Nvim, agent: Agent, count: int) -> None:
    """`count` prompts taken by the host and told to wait; none reached the agent."""
    wait_until(lambda: sum(WAITING in n["msg"] for n in nvim.notes()) >= count, 15.0, f"{count} waiting")
    assert prompts(agent) == []


def test_a_prompt_typed_in_a_chat_reloaded_after_a_terminal_login_waits_for_the_load(
    nvim: Nvim, tmp_path: Path
) -> None:
    agent, release = held_load(
        nvim, tmp_path, authMethods=[TERMINAL_LOGIN], login={"tokenFile": str(tmp_path / "token")}
    )
    nvim.api.command("AcpAuth term")
    wait_journal(nvim, agent, "session/load")
    # The agent is up again (ready) while it loads s-1 into its chat, which the user types in.
    nvim.wait_state("ready")
    nvim.lua("vim.api.nvim_set_current_buf(require('acp_nvim.ui.chat').chats['s-1'].prompt_buf)")
    nvim.api.command("AcpPrompt mine")
    waited(nvim, agent, 1)

    release.touch()
    wait_lines(nvim, "s-1", "answered mine")
    nvim.wait_state("ready")
    assert prompts(agent) == [("s-1", "mine")]
    text = chat_text(nvim, "s-1")
    assert text.index("REPLAYED ANSWER") < text.index("▍ You\nmine") < text.index("answered mine")
    assert nvim.errors() == []


def test_a_prompt_from_no_chat_during_a_restart_waits_for_the_reopened_session(
    nvim: Nvim, tmp_path: Path
) -> None:
    agent, release = held_load(nvim, tmp_path)
    source = tmp_path / "code.py"
    source.write_text("print('hi')\n")
    nvim.api.command(f"edit {source}")
    nvim.api.command("AcpRestart")
    wait_journal(nvim, agent, "session/load")
    assert nvim.status()["state"] == "starting"
    nvim.api.command("AcpPrompt one")
    nvim.api.command("AcpPrompt two")
    waited(nvim, agent, 2)
    assert not [n for n in nvim.notes() if "no agent is ready" in n["msg"]]

    release.touch()
    wait_lines(nvim, "s-1", "answered two")
    nvim.wait_state("ready")
    assert prompts(agent) == [("s-1", "one"), ("s-1", "two")]
    text = chat_text(nvim, "s-1")
    assert text.index("REPLAYED ANSWER") < text.index("▍ You\none") < text.index("▍ You\ntwo")
    assert nvim.errors() == []


def test_the_restart_is_done_while_the_turn_of_a_prompt_that_waited_still_runs(
    nvim: Nvim, tmp_path: Path
) -> None:
    """The turn of the prompt that waited is not part of the restart: the agent is ready (the turn asks its
    permission) rather than "starting" until the turn ends."""
    agent, release = held_load(nvim, tmp_path, turns=[HELD])
    nvim.api.command("AcpRestart")
    wait_journal(nvim, agent, "session/load")
    nvim.api.command("AcpPrompt one")
    waited(nvim, agent, 1)
    nvim.lua("acp_test.answers = { 'hold' }")
    release.touch()
    nvim.wait("acp_test.held ~= nil")
    nvim.wait_state("awaiting_permission")
    nvim.lua("acp_test.held({ id = 'allow' })")
    wait_lines(nvim, "s-1", "answered one")
    nvim.wait_state("ready")
    assert prompts(agent) == [("s-1", "one")]
    assert nvim.errors() == []


def test_a_prompt_waiting_for_a_session_the_restarted_agent_cannot_load_comes_back(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    agent = start_loading_agent(
        nvim,
        tmp_path,
        authMethods=[TERMINAL_LOGIN],
        login={"tokenFile": str(tmp_path / "token")},
        held={"session/load": {"untilFile": str(release), "error": {"code": -32603, "message": "gone"}}},
    )
    nvim.api.command("AcpAuth term")
    wait_journal(nvim, agent, "session/load")
    nvim.lua("vim.api.nvim_set_current_buf(require('acp_nvim.ui.chat').chats['s-1'].prompt_buf)")
    nvim.api.command("AcpPrompt keep me")
    waited(nvim, agent, 1)
    release.touch()
    wait_note(nvim, "not sent")
    wait_lines(nvim, "s-1", "could not load this session after the restart")
    assert prompts(agent) == []
    # Its text back in the prompt of the chat it was typed in (kept: the user's record of the session).
    nvim.wait(
        "vim.deep_equal(vim.api.nvim_buf_get_lines(require('acp_nvim.ui.chat').chats['s-1'].prompt_buf,"
        " 0, -1, false), {'keep me'})"
    )
    assert not [n for n in nvim.notes() if "Traceback" in n["msg"] or "internal error" in n["msg"]]


def test_a_prompt_while_the_agent_starts_its_first_session_is_refused_saying_so(
    nvim: Nvim, tmp_path: Path
) -> None:
    """No session to wait for (the first one is on its way, not one the user asked for): the host, not Lua,
    refuses it, with the truth (not "no agent is ready") and the text given back."""
    release = tmp_path / "release"
    agent = Agent(tmp_path, "s", {"echo": False, "newSessionHeld": {"from": 1, "untilFile": str(release)}})
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    wait_journal(nvim, agent, "session/new")
    assert nvim.status()["state"] == "starting"
    nvim.api.command("AcpPrompt too soon")
    wait_note(nvim, "the agent is starting: the prompt was not sent")
    assert not [n for n in nvim.notes() if "no agent is ready" in n["msg"]]
    release.touch()
    nvim.wait_state("ready")
    assert prompts(agent) == []
    assert nvim.errors() == []

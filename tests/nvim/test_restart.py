""":AcpRestart reopens the sessions that were open, and a dead agent's chats say what happened: a real
headless Neovim and the scripted agent (official Python SDK), which can load, resume, or do neither."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

from tests.nvim.agent_io import without_neovim
from tests.nvim.conftest import Nvim
from tests.nvim.test_sessions import Agent, chat_lines, selects, setup, wait_journal

HISTORY = [
    {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "what happened before"}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "REPLAYED ANSWER"}},
]


def agent_pid(agent: Agent) -> int:
    """The scripted agent's process (its command line names its scenario file)."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(agent.scenario_path).encode() in cmdline and b"--login" not in cmdline:
            return int(name)
    raise AssertionError(f"no process of agent {agent.name}")


def turn_ends(agent: Agent) -> int:
    return sum(1 for entry in agent.journal() if entry["kind"] == "turn_end")


def prompt(nvim: Nvim, agent: Agent, text: str) -> None:
    """Prompts the current session and waits for the agent to end the turn."""
    before = turn_ends(agent)
    assert nvim.lua("return require('acp_nvim').prompt(...)", text), nvim.notes()
    nvim.wait(
        "(function() local n = 0 for line in io.lines(args[1]) do"
        " if line:find('\"turn_end\"', 1, true) then n = n + 1 end end return n > args[2] end)()",
        20,
        str(agent.journal_path),
        before,
    )
    nvim.wait_state("ready")


def chat_buf(nvim: Nvim, session_id: str) -> int:
    return int(nvim.lua("return require('acp_nvim.ui.chat').chats[...].buf", session_id))


def wait_lines(nvim: Nvim, session_id: str, text: str) -> None:
    nvim.wait(
        "table.concat(require('acp_nvim.ui.chat').lines(args[1]), '\\n'):find(args[2], 1, true) ~= nil",
        20,
        session_id,
        text,
    )


def start_loading_agent(nvim: Nvim, tmp_path: Path, **scenario: Any) -> Agent:
    """Starts an agent that can load sessions, in session s-1 (stored with HISTORY; each turn answers
    LIVE ANSWER), and waits until it is ready."""
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "agentCapabilities": {"loadSession": True},
            "session": {"sessionId": "s-1"},
            # What the agent has stored of s-1 (a restarted scripted agent remembers only this).
            "sessions": [{"sessionId": "s-1", "cwd": str(tmp_path), "history": HISTORY}],
            "turns": [[{"text": "LIVE ANSWER"}]],
            **scenario,
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    return agent


def test_restart_reloads_the_session_into_the_same_chat(nvim: Nvim, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    agent = start_loading_agent(nvim, tmp_path)
    prompt(nvim, agent, "hello")
    wait_lines(nvim, "s-1", "LIVE ANSWER")
    buf = chat_buf(nvim, "s-1")

    nvim.api.command("AcpRestart")
    (load,) = wait_journal(nvim, agent, "session/load")
    assert without_neovim(load["params"], [cwd]) == {"sessionId": "s-1", "cwd": cwd, "mcpServers": []}
    nvim.wait_state("ready")
    wait_lines(nvim, "s-1", "REPLAYED ANSWER")
    # The same buffer, emptied and drawn again from the replay: the live turn is gone, the history is there.
    assert chat_buf(nvim, "s-1") == buf
    lines = chat_lines(nvim, "s-1")
    assert "LIVE ANSWER" not in "\n".join(lines)
    assert lines[:2] == ["▍ You", "what happened before"], lines
    assert agent.methods().count("session/new") == 1
    assert nvim.status()["session_id"] == "s-1" and nvim.status()["sessions"] == 1
    # And the reopened session works.
    prompt(nvim, agent, "again")
    wait_lines(nvim, "s-1", "LIVE ANSWER")
    assert agent.sent("session/prompt")[-1]["params"]["sessionId"] == "s-1"


def test_terminal_login_reopens_the_sessions_that_were_open(nvim: Nvim, tmp_path: Path) -> None:
    """:AcpAuth with a terminal method restarts the agent (it reads its credentials at start): the session
    that was open is loaded again into its chat, not left ended."""
    method = {"id": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"]}
    login = {"tokenFile": str(tmp_path / "token")}
    agent = start_loading_agent(nvim, tmp_path, authMethods=[method], login=login)
    buf = chat_buf(nvim, "s-1")

    nvim.api.command("AcpAuth term")
    (load,) = wait_journal(nvim, agent, "session/load")
    assert load["params"]["sessionId"] == "s-1"
    wait_lines(nvim, "s-1", "REPLAYED ANSWER")
    nvim.wait_state("ready")
    assert agent.methods() == ["initialize", "session/new", "initialize", "session/load"]
    assert chat_buf(nvim, "s-1") == buf
    assert nvim.status()["session_id"] == "s-1" and nvim.status()["sessions"] == 1
    prompt(nvim, agent, "still there?")
    wait_lines(nvim, "s-1", "LIVE ANSWER")
    assert agent.sent("session/prompt")[-1]["params"]["sessionId"] == "s-1"


def test_restart_after_a_crash_resumes_and_keeps_the_chat(nvim: Nvim, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "agentCapabilities": {"sessionCapabilities": {"resume": {}}},
            "session": {"sessionId": "s-1"},
            "sessions": [{"sessionId": "s-1", "cwd": cwd}],
            "turns": [
                [{"text": "FIRST ANSWER"}],
                [
                    {
                        "update": {
                            "sessionUpdate": "tool_call",
                            "toolCallId": "w1",
                            "title": "Write the report",
                            "kind": "edit",
                            "status": "in_progress",
                        }
                    },
                    {"text": "working on it"},
                    {"sleep_until_cancel": True},
                ],
            ],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    prompt(nvim, agent, "one")
    nvim.lua("require('acp_nvim').prompt('two')")
    wait_lines(nvim, "s-1", "working on it")
    os.kill(agent_pid(agent), signal.SIGKILL)

    # The chat says what happened, the unfinished tool call is marked, the state says "error".
    nvim.wait_state("error")
    wait_lines(nvim, "s-1", "killed by SIGKILL")
    lines = chat_lines(nvim, "s-1")
    assert any("s stopped: agent" in line and ":AcpRestart" in line for line in lines), lines
    assert "  ⊘ Write the report  edit  cancelled" in lines
    assert any("killed by SIGKILL" in note["msg"] for note in nvim.notes() if note["level"] == 4)

    nvim.api.command("AcpRestart")
    (resume,) = wait_journal(nvim, agent, "session/resume")
    assert without_neovim(resume["params"], [cwd]) == {"sessionId": "s-1", "cwd": cwd, "mcpServers": []}
    nvim.wait_state("ready")
    wait_lines(nvim, "s-1", "Resumed after restart")
    # Resumed: the chat kept everything, the crash included, and goes on below it.
    lines = chat_lines(nvim, "s-1")
    text = "\n".join(lines)
    assert text.index("FIRST ANSWER") < text.index("killed by SIGKILL") < text.index("Resumed after restart")
    assert agent.methods().count("session/new") == 1
    prompt(nvim, agent, "three")
    nvim.wait(
        "select(2, table.concat(require('acp_nvim.ui.chat').lines('s-1'), '\\n')"
        ":gsub('FIRST ANSWER', '')) == 2"
    )


def test_restart_of_an_agent_that_cannot_reopen_opens_a_new_session(nvim: Nvim, tmp_path: Path) -> None:
    first = Agent(tmp_path, "first", {"echo": False, "session": {"sessionId": "old"}})
    setup(nvim, tmp_path, {"s": first.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    # The restarted agent opens its session under another id (a real agent's are unique).
    second = Agent(tmp_path, "second", {"echo": False, "session": {"sessionId": "new"}})
    setup(nvim, tmp_path, {"s": second.config()})
    nvim.api.command("AcpRestart")
    nvim.wait("require('acp_nvim').status().session_id == 'new'")
    nvim.wait_state("ready")
    assert second.methods() == ["initialize", "session/new"]
    wait_lines(nvim, "old", "s restarted; it can neither load nor resume sessions, so this one ended")
    wait_lines(nvim, "new", "it can neither load nor resume sessions: this is a new session")


def test_a_reused_session_id_gets_a_new_chat_and_the_old_one_is_kept(nvim: Nvim, tmp_path: Path) -> None:
    """An agent that counts its sessions from 1 again after a restart (the demo agent does) gives the new
    session the old one's id: the new session gets its own chat, in the old one's window; the old chat stays
    as the record of what was said, and wiping it does not close the new session."""
    agent = Agent(tmp_path, "s", {"echo": False, "session": {"sessionId": "s-1"}})
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    old = chat_buf(nvim, "s-1")
    assert nvim.lua("return #vim.fn.win_findbuf(...)", old) == 1

    nvim.api.command("AcpRestart")
    nvim.wait("require('acp_nvim.ui.chat').chats['s-1'].buf ~= args[1]", 20, old)
    nvim.wait_state("ready")
    new = chat_buf(nvim, "s-1")
    wait_lines(nvim, "s-1", "this is a new session")
    assert nvim.lua("return #vim.fn.win_findbuf(...)", old) == 0
    assert nvim.lua("return #vim.fn.win_findbuf(...)", new) == 1
    old_text = "\n".join(nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", old))
    assert "so this one ended" in old_text
    assert nvim.lua("return vim.api.nvim_buf_get_name(...)", old).endswith(" (ended)")
    assert nvim.lua("return require('acp_nvim.ui.chat').chat_of_buf(...)", old) is None

    nvim.api.command(f"bwipeout! {old}")
    assert nvim.status()["sessions"] == 1 and nvim.status()["session_id"] == "s-1"
    prompt(nvim, agent, "hello")
    assert agent.sent("session/prompt")[-1]["params"]["sessionId"] == "s-1"


def test_restart_reopens_every_session_that_was_open(nvim: Nvim, tmp_path: Path) -> None:
    cwd = str(tmp_path)
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "agentCapabilities": {"sessionCapabilities": {"resume": {}}},
            "sessions": [{"sessionId": "sess-1", "cwd": cwd}, {"sessionId": "sess-2", "cwd": cwd}],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.api.command("AcpNew")
    nvim.wait("require('acp_nvim').status().session_id == 'sess-2'")
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    for session_id in ("sess-1", "sess-2"):
        wait_lines(nvim, session_id, "s was stopped: this session ended")
    nvim.api.command("AcpRestart")
    resumed = wait_journal(nvim, agent, "session/resume", 2)
    assert sorted(entry["params"]["sessionId"] for entry in resumed) == ["sess-1", "sess-2"]
    for session_id in ("sess-1", "sess-2"):
        wait_lines(nvim, session_id, "Resumed after restart")
    nvim.wait_state("ready")
    assert nvim.status()["sessions"] == 2


def test_a_dead_agent_answers_its_open_picker(nvim: Nvim, tmp_path: Path) -> None:
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "turns": [[{"permission": {"toolCall": {"toolCallId": "t1", "title": "Delete everything"}}}]],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait("acp_test.held ~= nil")
    nvim.wait_state("awaiting_permission")
    os.kill(agent_pid(agent), signal.SIGKILL)
    nvim.wait_state("error")
    wait_lines(nvim, "sess-1", "killed by SIGKILL")
    lines = chat_lines(nvim, "sess-1")
    assert any("Delete everything" in line and line.endswith("cancelled") for line in lines), lines
    assert not any("awaiting permission" in line for line in lines), lines
    # The picker's late answer is ignored, quietly.
    errors = len(nvim.errors())
    nvim.lua("acp_test.held({ id = 'allow' })")
    # The dead agent's picker holds up nobody: the restarted agent's request gets a picker, and its answer.
    nvim.lua("acp_test.answers = { 'allow' }")
    nvim.api.command("AcpRestart")
    nvim.wait_state("ready")
    prompt(nvim, agent, "again")
    assert len(selects(nvim)) == 2
    (answer,) = [e for e in agent.journal() if e["kind"] == "result"]
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    assert len(nvim.errors()) == errors, nvim.notes()

"""A prompt sent from outside a chat (`:AcpPrompt`) while the session `:AcpNew` asked for is being opened, in
a real Neovim with the scripted agent (tests/agents/scripted_agent.py), whose second session/new waits for the
test's word: the prompt waits for that session and goes to it once it is open, never to the old one; when it
does not open (the agent refuses, or exits), the prompt comes back to the user."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import read_journal, start_scenario
from tests.nvim.conftest import Nvim
from tests.nvim.test_prompt_queue import QUEUE_LINES

HELD = [{"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit"}}}, {"text": "answered ${PROMPT}"}]


def journal(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "journal.jsonl"
    return read_journal(path) if path.exists() else []


def sent(tmp_path: Path, method: str) -> list[dict[str, Any]]:
    return [e["params"] for e in journal(tmp_path) if e.get("kind") == "request" and e["method"] == method]


def prompts(tmp_path: Path) -> list[tuple[str, str]]:
    """Each session/prompt the agent got: its session and its text."""
    return [
        (p["sessionId"], " ".join(b.get("text", "") for b in p["prompt"] if b.get("type") == "text"))
        for p in sent(tmp_path, "session/prompt")
    ]


def chat_text(nvim: Nvim, session_id: str) -> str:
    return "\n".join(nvim.lua("return require('acp_nvim.ui.chat').lines(...)", session_id))


def new_session_asked(nvim: Nvim, tmp_path: Path, held: dict[str, Any], turns: Any = None) -> Path:
    """The agent ready with its first session (sess-1), then :AcpNew, whose session/new the agent holds until
    the file returned exists; the cursor in a file buffer, no chat's."""
    release = tmp_path / "release"
    scenario = {"echo": False, "newSessionHeld": {"from": 2, "untilFile": str(release), **held}}
    start_scenario(nvim, tmp_path, {**scenario, "turns": turns or []})
    source = tmp_path / "code.py"
    source.write_text("print('hi')\n")
    nvim.api.command(f"edit {source}")
    assert nvim.lua("return require('acp_nvim.ui.session_commands').current()") is None
    nvim.api.command("AcpNew")
    wait_until(lambda: len(sent(tmp_path, "session/new")) == 2, 15.0, "the second session/new")
    return release


WAITING = "the session being opened is not open yet: the prompt goes to it once it is"


def handled(nvim: Nvim, tmp_path: Path, count: int) -> None:
    """Waits until the host has taken `count` prompts sent from no chat: they wait (the user is told so), or
    reached the agent."""

    def waiting() -> int:
        return sum(WAITING in note["msg"] for note in nvim.notes())

    wait_until(lambda: waiting() + len(prompts(tmp_path)) >= count, 15.0, f"{count} prompts taken")


def wait_note(nvim: Nvim, text: str) -> None:
    nvim.wait(
        "vim.iter(acp_test.notes):any(function(n) return n.msg:find(args[1], 1, true) ~= nil end)", 15.0, text
    )


def test_prompts_sent_while_the_new_session_opens_wait_for_it_and_go_to_it_in_order(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = new_session_asked(nvim, tmp_path, {}, turns=[HELD, [{"text": "answered ${PROMPT}"}]])
    nvim.api.command("AcpPrompt one")
    nvim.api.command("AcpPrompt two")
    # The agent got neither (not on the old session), the old chat shows neither; the user is told they wait.
    handled(nvim, tmp_path, 2)
    assert prompts(tmp_path) == []
    assert [n["msg"] for n in nvim.notes()] == ["acp.nvim: " + WAITING] * 2
    assert "one" not in chat_text(nvim, "sess-1") and "two" not in chat_text(nvim, "sess-1")
    assert nvim.status()["session_id"] == "sess-1"

    nvim.lua("acp_test.answers = { 'hold' }")
    release.touch()
    # The new session opens: the first prompt is its first turn, the second waits under its chat.
    nvim.wait("require('acp_nvim').status().session_id == 'sess-2'")
    nvim.wait_state("awaiting_permission")
    nvim.lua(QUEUE_LINES)
    nvim.wait("vim.deep_equal(acp_test_queue(), {'Queued (sent when the turn ends):', '  1. two'})", 15.0)
    assert "▍ You\none" in chat_text(nvim, "sess-2")
    assert prompts(tmp_path) == [("sess-2", "one")]
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait(
        "table.concat(require('acp_nvim.ui.chat').lines('sess-2'), '\\n'):find('answered two', 1, true)"
    )
    nvim.wait_state("ready")
    assert prompts(tmp_path) == [("sess-2", "one"), ("sess-2", "two")]
    text = chat_text(nvim, "sess-2")
    assert text.index("▍ You\none") < text.index("answered one") < text.index("▍ You\ntwo")
    assert "one" not in chat_text(nvim, "sess-1")
    assert nvim.errors() == []


def test_a_prompt_waiting_for_a_session_the_agent_refuses_comes_back_to_the_user(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = new_session_asked(nvim, tmp_path, {"error": {"code": -32603, "message": "no more sessions"}})
    # The whole file attached, as :%AcpPrompt does.
    nvim.api.command("%AcpPrompt explain this")
    handled(nvim, tmp_path, 1)
    assert prompts(tmp_path) == []
    release.touch()
    wait_note(nvim, "refused to create a session: no more sessions")
    wait_note(nvim, "not sent")
    # Never sent, to either session; its text back in the chat's prompt, its attachment back in the list.
    assert prompts(tmp_path) == []
    nvim.wait(
        "vim.deep_equal(vim.api.nvim_buf_get_lines(require('acp_nvim.ui.chat').chats['sess-1'].prompt_buf,"
        " 0, -1, false), {'explain this'})"
    )
    pending = nvim.lua("return require('acp_nvim.ui.prompt').pending()")
    assert [(a["kind"], a["path"]) for a in pending] == [("selection", str(tmp_path / "code.py"))]
    # The old session is still the one in use, and works.
    nvim.wait_state("ready")
    assert nvim.status()["session_id"] == "sess-1"
    assert not [n for n in nvim.notes() if "Traceback" in n["msg"] or "internal error" in n["msg"]]


def test_a_prompt_waiting_for_a_session_when_the_agent_exits_comes_back_to_the_user(
    nvim: Nvim, tmp_path: Path
) -> None:
    release = new_session_asked(nvim, tmp_path, {"exit": 3})
    nvim.api.command("AcpPrompt keep me")
    handled(nvim, tmp_path, 1)
    assert prompts(tmp_path) == []
    release.touch()
    nvim.wait_state("error")
    wait_note(nvim, "not sent")
    assert prompts(tmp_path) == []
    nvim.wait(
        "vim.deep_equal(vim.api.nvim_buf_get_lines(require('acp_nvim.ui.chat').chats['sess-1'].prompt_buf,"
        " 0, -1, false), {'keep me'})"
    )
    assert not [n for n in nvim.notes() if "Traceback" in n["msg"] or "internal error" in n["msg"]]

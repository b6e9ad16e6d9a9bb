"""A request from the agent naming a session this client does not know is answered at once, with an error, and
nothing reaches the user: no picker, no file read or written, no terminal, no line in the chat. Issue 29: a
subagent's request that never reaches the user leaves the agent's turn hanging; a client that does not know
the session must say so, not stay silent. The scripted agent (official Python SDK) sends every client method
under a session id nobody opened, each request verbatim."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim

GHOST = "ghost-session"
# Each answer comes at once: far under the deadline of a turn the user would wait on.
AT_ONCE = 5.0


def ghost_requests(cwd: str) -> list[dict[str, Any]]:
    """Every request the agent calls on the client, naming the ghost session."""
    perm = {"toolCallId": "p1", "title": "rm -rf /", "kind": "execute"}
    allow = [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("session/request_permission", {"toolCall": perm, "options": allow}),
        ("fs/read_text_file", {"path": f"{cwd}/a.txt"}),
        ("fs/write_text_file", {"path": f"{cwd}/b.txt", "content": "ghost\n"}),
        ("terminal/create", {"command": "touch", "args": [f"{cwd}/made.txt"], "cwd": cwd}),
        ("elicitation/create", {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}),
        # The open session's terminal, named under the ghost's id: not the ghost's.
        ("terminal/output", {"terminalId": "${TERMINAL}"}),
        ("terminal/wait_for_exit", {"terminalId": "${TERMINAL}"}),
        ("terminal/kill", {"terminalId": "${TERMINAL}"}),
        ("terminal/release", {"terminalId": "${TERMINAL}"}),
    ]
    return [{"call": method, "params": {"sessionId": GHOST, **params}} for method, params in calls]


def test_every_request_for_an_unknown_session_is_answered_at_once(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    (project / "a.txt").write_text("secret\n")
    cwd = str(project.resolve())
    ghost_plan = {"content": "ghost plan", "priority": "high", "status": "pending"}
    turn: list[dict[str, Any]] = [
        # The open session's own terminal, whose id the ghost then names.
        {"terminal": {"command": "sleep", "args": ["30"], "cwd": cwd, "then": []}},
        *ghost_requests(cwd),
        # Updates for the ghost: dropped, never in the chat.
        {
            "as": GHOST,
            "steps": [{"text": "GHOST TEXT"}, {"update": {"sessionUpdate": "plan", "entries": [ghost_plan]}}],
        },
        {"text": "after the ghost"},
        {"terminal": {"command": "true", "then": ["wait", "release"]}},
    ]
    agent.start([turn], project)
    nvim.lua("acp_test.answers = { 'allow' }")
    started = time.monotonic()
    answers = agent.turn(timeout=30)
    elapsed = time.monotonic() - started
    by_call = {a["call"]: a for a in answers if a["params"].get("sessionId") == GHOST}
    assert set(by_call) == {
        "session/request_permission",
        "fs/read_text_file",
        "fs/write_text_file",
        "terminal/create",
        "elicitation/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    }, answers
    for call, answer in by_call.items():
        assert answer["kind"] == "error", (call, answer)
        assert answer["code"] == -32002, (call, answer)
        assert answer["message"] == f"unknown session: {GHOST}", (call, answer)
        assert answer["data"] == {"sessionId": GHOST}, (call, answer)
    # All of it at once: the whole turn, its own terminal included, took no user and no wait.
    assert elapsed < AT_ONCE, elapsed
    # Nothing reached the user or the project.
    assert nvim.lua("return acp_test.selects") == []
    assert not (project / "b.txt").exists()
    assert not (project / "made.txt").exists()
    nvim.wait_chat("after the ghost")
    chat = nvim.chat_text()
    assert "GHOST" not in chat and "ghost plan" not in chat, chat
    # The session's own terminal went on (the ghost's kill and release were refused), and its later ones run.
    own = [
        a for a in answers if a["call"] == "terminal/wait_for_exit" and a["params"].get("sessionId") != GHOST
    ]
    assert own and own[-1]["kind"] == "result", answers
    # The dropped updates are in the log, said once as the agent's trouble.
    log = (agent.tmp_path / "acp_nvim.log").read_text()
    assert f"sent updates for a session that is not open; they are ignored: session '{GHOST}'" in log

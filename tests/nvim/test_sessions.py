"""Sessions, authentication, modes and configuration options, end to end: a real headless Neovim and the
scripted agent (official Python SDK) advertising each capability in turn, and one advertising none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.agent_io import read_journal, scripted_config, without_neovim
from tests.nvim.conftest import Nvim, help_tags, setup_opts
from tests.schema_check import assert_valid

# What every message the client sends must be, by method.
SENT_TYPES = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "logout": "LogoutRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/list": "ListSessionsRequest",
    "session/delete": "DeleteSessionRequest",
    "session/close": "CloseSessionRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/prompt": "PromptRequest",
    "session/cancel": "CancelNotification",
}


class Agent:
    """One scripted agent: its configuration entry and its journal."""

    def __init__(self, tmp_path: Path, name: str, scenario: dict[str, Any]) -> None:
        self.name = name
        self.scenario_path = tmp_path / f"{name}.json"
        self.scenario_path.write_text(json.dumps(scenario))
        self.journal_path = tmp_path / f"{name}.journal.jsonl"

    def config(self, **extra: Any) -> dict[str, Any]:
        return {**scripted_config(self.scenario_path, self.journal_path), **extra}

    def journal(self) -> list[dict[str, Any]]:
        if not self.journal_path.exists():
            return []
        return read_journal(self.journal_path)

    def sent(self, method: str | None = None) -> list[dict[str, Any]]:
        return [
            entry
            for entry in self.journal()
            if entry["kind"] in ("request", "notification") and (method is None or entry["method"] == method)
        ]

    def methods(self) -> list[str]:
        return [entry["method"] for entry in self.sent()]

    def assert_all_valid(self, schema: dict[str, Any]) -> None:
        for entry in self.sent():
            assert_valid(schema, SENT_TYPES[entry["method"]], entry["params"])


def setup(nvim: Nvim, tmp_path: Path, agents: dict[str, dict[str, Any]], **extra: Any) -> None:
    ok = nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents, **extra))
    assert ok, nvim.notes()


def wait_journal(nvim: Nvim, agent: Agent, method: str, count: int = 1) -> list[dict[str, Any]]:
    nvim.wait(
        "(function() local f = io.open(args[1]) if not f then return false end"
        " local n = 0 for line in f:lines() do if line:find(args[2], 1, true) then n = n + 1 end end"
        " f:close() return n >= args[3] end)()",
        20,
        str(agent.journal_path),
        f'"method":"{method}"',
        count,
    )
    return agent.sent(method)


def notes_text(nvim: Nvim) -> str:
    return "\n".join(note["msg"] for note in nvim.notes())


def wait_note(nvim: Nvim, text: str) -> None:
    nvim.wait(
        "(function() for _, n in ipairs(acp_test.notes) do"
        " if n.msg:find(args[1], 1, true) then return true end end return false end)()",
        20,
        text,
    )


def selects(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def chat_lines(nvim: Nvim, session_id: str) -> list[str]:
    return nvim.lua("return require('acp_nvim.ui.chat').lines(...)", session_id)  # type: ignore[no-any-return]


# ---- authentication ------------------------------------------------------------------------------------


def test_auth_required_then_authenticate_then_retry(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    agent = Agent(
        tmp_path,
        "s",
        {
            "authRequired": True,
            "authMethods": [{"id": "login", "name": "Log in", "description": "with the API key"}],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.lua("acp_test.answers = { 'login' }")
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    (picker,) = selects(nvim)
    assert picker["prompt"] == "s requires authentication: log in with"
    assert picker["items"] == ["Log in — with the API key"]
    assert agent.methods() == ["initialize", "session/new", "authenticate", "session/new"]
    assert agent.sent("authenticate")[0]["params"] == {"methodId": "login"}
    caps = agent.sent("initialize")[0]["params"]["clientCapabilities"]
    assert caps["auth"] == {"terminal": True}
    assert caps["session"]["configOptions"] == {"boolean": {}}
    assert nvim.status()["session_id"] == "sess-1"
    assert nvim.status()["auth_methods"] == ["login"]
    assert nvim.lua("return vim.fn.getcompletion('AcpAuth ', 'cmdline')") == ["login"]
    agent.assert_all_valid(schema)


def test_dismissed_login_then_acpauth(nvim: Nvim, tmp_path: Path) -> None:
    agent = Agent(tmp_path, "s", {"authRequired": True, "authMethods": [{"id": "login", "name": "Log in"}]})
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.lua("acp_test.answers = { 'nothing' }")  # the picker dismissed
    nvim.api.command("AcpStart s")
    nvim.wait_state("error")
    assert "requires authentication: see :AcpAuth" in nvim.status()["error"]
    nvim.api.command("AcpAuth login")
    nvim.wait_state("ready")
    assert nvim.status()["session_id"]
    assert agent.methods() == ["initialize", "session/new", "authenticate", "session/new"]
    assert "logged in to s (Log in)" in notes_text(nvim)


def test_terminal_login_restarts_the_agent(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    token = tmp_path / "token"
    method = {
        "id": "term",
        "name": "Terminal login",
        "type": "terminal",
        "args": ["--login"],
        "env": {"LOGIN_USER": "alice"},
    }
    agent = Agent(
        tmp_path,
        "s",
        {"authRequired": True, "authMethods": [method], "login": {"tokenFile": str(token)}},
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.lua("acp_test.answers = { 'term' }")
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready", 30)
    assert token.read_text() == "token"
    (picker,) = selects(nvim)
    assert picker["items"] == ["Terminal login (in a terminal)"]
    # Refused, logged in through the terminal (no authenticate), restarted and initialized again, retried.
    assert agent.methods() == ["initialize", "session/new", "initialize", "session/new"]
    assert "logged in to s (Terminal login); restarting it" in notes_text(nvim)
    # The login window closed itself on success.
    assert (
        nvim.lua(
            "return #vim.tbl_filter(function(b) return vim.bo[b].buftype == 'terminal' end,"
            " vim.api.nvim_list_bufs())"
        )
        == 0
    )
    agent.assert_all_valid(schema)


def test_terminal_login_failure_and_terminal_auth_off(nvim: Nvim, tmp_path: Path) -> None:
    method = {"id": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"]}
    agent = Agent(tmp_path, "s", {"authRequired": True, "authMethods": [method], "login": {"exitCode": 3}})
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.lua("acp_test.answers = { 'term' }")
    nvim.api.command("AcpStart s")
    nvim.wait_state("error", 30)
    assert "login failed (exit code 3)" in notes_text(nvim)
    # With terminal login turned off it is neither advertised nor offered.
    nvim.api.command("AcpStop")
    nvim.wait_state("stopped")
    setup(nvim, tmp_path, {"s": agent.config()}, auth={"terminal": False})
    nvim.api.command("AcpStart s")
    nvim.wait_state("error")
    assert not agent.sent("initialize")[-1]["params"]["clientCapabilities"]["auth"].get("terminal")
    assert "offers no authentication method" in notes_text(nvim)
    assert len(selects(nvim)) == 1


def test_terminal_login_is_each_agents_own_not_the_one_of_the_agent_started_last(
    nvim: Nvim, tmp_path: Path
) -> None:
    methods = [
        {"id": "key", "name": "API key"},
        {"id": "term", "name": "Terminal login", "type": "terminal", "args": ["--login"]},
    ]
    first = Agent(tmp_path, "a", {"authMethods": methods, "session": {"sessionId": "a-1"}})
    second = Agent(tmp_path, "b", {"authMethods": methods, "session": {"sessionId": "b-1"}})
    setup(nvim, tmp_path, {"a": first.config()})
    nvim.api.command("AcpStart a")
    nvim.wait_state("ready")
    assert nvim.status()["auth_methods"] == ["key", "term"]
    # setup() again with terminal login off: the next agent is offered none; the running one keeps its own.
    setup(nvim, tmp_path, {"a": first.config(), "b": second.config()}, auth={"terminal": False})
    nvim.api.command("AcpStart b")
    nvim.wait(
        "require('acp_nvim').status().session_id == 'b-1' and require('acp_nvim').status().state == 'ready'"
    )
    assert nvim.status()["auth_methods"] == ["key"]
    assert not second.sent("initialize")[-1]["params"]["clientCapabilities"]["auth"].get("terminal")
    nvim.lua("require('acp_nvim.host.api').focus('a-1')")
    nvim.wait("require('acp_nvim').status().session_id == 'a-1'")
    assert nvim.status()["auth_methods"] == ["key", "term"]


def test_logout(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    agent = Agent(tmp_path, "s", {"agentCapabilities": {"auth": {"logout": {}}}})
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.api.command("AcpLogout")
    wait_note(nvim, "logged out of s")
    assert agent.methods()[-1] == "logout"
    agent.assert_all_valid(schema)


# ---- sessions ------------------------------------------------------------------------------------------

# One turn, as updates: played live by a prompt, then replayed as the history of a stored session.
TURN: list[dict[str, Any]] = [
    {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Let me look"}},
    {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": " at the code"}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Here is "}},
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "my plan\n\n"}},
    {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Read the code", "priority": "high", "status": "in_progress"},
            {"content": "Fix it", "priority": "medium", "status": "pending"},
        ],
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "r1",
        "title": "Read hello.py",
        "kind": "read",
        "status": "pending",
        "locations": [{"path": "/p/hello.py", "line": 1}],
    },
    {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "r1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "print('hi')"}}],
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "e1",
        "title": "Edit hello.py",
        "kind": "edit",
        "status": "in_progress",
        "content": [{"type": "diff", "path": "/p/hello.py", "oldText": "a\nb\n", "newText": "a\nc\n"}],
    },
    {"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "failed"},
    {
        "sessionUpdate": "plan",
        "entries": [
            {"content": "Read the code", "priority": "high", "status": "completed"},
            {"content": "Fix it", "priority": "medium", "status": "completed"},
        ],
    },
    {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}},
]


def stored(session_id: str, cwd: str, title: str, updated: str, history: Any = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"sessionId": session_id, "cwd": cwd, "title": title, "updatedAt": updated}
    if history is not None:
        entry["history"] = history
    return entry


def test_list_across_pages_then_load_replays_like_live(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    cwd = str(tmp_path)
    history = [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "fix it"}},
        *TURN,
    ]
    agent = Agent(
        tmp_path,
        "s",
        {
            "agentInfo": {"name": "scripted", "title": "Scripted", "version": "1.0"},
            "echo": False,
            "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
            "listPageSize": 2,
            "sessions": [
                stored("old-1", cwd, "First try", "2025-01-01T10:00:00Z"),
                stored("old-2", cwd, "Fixing hello", "2025-01-02T10:00:00Z", history),
                stored("old-3", cwd, "Third", "2025-01-03T10:00:00Z"),
                stored("far-1", "/elsewhere", "Elsewhere", "2025-01-04T10:00:00Z"),
            ],
            "turns": [[{"update": update} for update in TURN]],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    live_id = nvim.status()["session_id"]
    nvim.lua("require('acp_nvim').prompt('fix it')")
    nvim.wait_chat("Done.")
    nvim.wait_state("ready")
    live = chat_lines(nvim, live_id)

    nvim.lua("acp_test.answers = { 'old-2' }")
    nvim.api.command("AcpSessions")
    nvim.wait("require('acp_nvim').status().session_id == 'old-2'")
    nvim.wait_state("ready")
    # The chat exists before session/load is sent; the replay is drawn within a frame of arriving.
    nvim.wait("vim.deep_equal(require('acp_nvim.ui.chat').lines('old-2'), args[1])", 15.0, live)
    # Every page, this directory's sessions only (the live one included), titles and times shown.
    lists = agent.sent("session/list")
    assert [entry["params"] for entry in lists] == [{"cwd": cwd}, {"cwd": cwd, "cursor": "2"}]
    (picker,) = selects(nvim)
    assert picker["prompt"] == "Open a session of Scripted"
    labels = picker["items"]
    assert len(labels) == 4
    assert labels[1].startswith("Fixing hello  2025-01-0") and labels[1].endswith("old-2")
    assert labels[3].endswith("sess-1  [open]")
    (load,) = agent.sent("session/load")
    assert without_neovim(load["params"], [cwd]) == {"sessionId": "old-2", "cwd": cwd, "mcpServers": []}
    # The replay, in a new chat, is drawn exactly like the live turn.
    loaded = chat_lines(nvim, "old-2")
    assert loaded == live, "\n".join(loaded) + "\n----\n" + "\n".join(live)
    assert "  ✗ Edit hello.py  edit  failed" in loaded
    # Folded alike: the thought and each tool call's details.
    folds = """
      local chat = require('acp_nvim.ui.chat')
      return vim.api.nvim_buf_call(chat.chats[...].buf, function()
        local out = {}
        for lnum = 1, vim.api.nvim_buf_line_count(0) do out[lnum] = chat.foldexpr(lnum) end
        return out
      end)
    """
    loaded_folds = nvim.lua(folds, "old-2")
    assert loaded_folds == nvim.lua(folds, live_id)
    assert loaded_folds.count(">1") == 3
    assert chat_lines(nvim, live_id) == live
    assert nvim.status()["title"] == "Fixing hello"
    assert nvim.status()["sessions"] == 2
    agent.assert_all_valid(schema)


def test_resume_without_replay(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = str(tmp_path)
    history = [{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "OLD HISTORY"}}]
    agent = Agent(
        tmp_path,
        "s",
        {
            # It could load too: sessions.prefer_resume makes it resume.
            "agentCapabilities": {
                "loadSession": True,
                "sessionCapabilities": {"list": {}, "resume": {}, "additionalDirectories": {}},
            },
            "sessions": [stored("old-1", cwd, "Earlier work", "2025-01-01T10:00:00Z", history)],
        },
    )
    extra = tmp_path / "extra"
    extra.mkdir()
    setup(
        nvim,
        tmp_path,
        {"s": agent.config()},
        sessions={"prefer_resume": True},
        additional_directories=[str(extra)],
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua("acp_test.answers = { 'old-1' }")
    nvim.api.command("AcpSessions")
    nvim.wait("require('acp_nvim').status().session_id == 'old-1'")
    nvim.wait_chat("Resumed session Earlier work")
    (resume,) = agent.sent("session/resume")
    assert without_neovim(resume["params"], [cwd, str(extra)]) == {
        "sessionId": "old-1",
        "cwd": cwd,
        "mcpServers": [],
        "additionalDirectories": [str(extra)],
    }
    assert not agent.sent("session/load")
    assert "OLD HISTORY" not in nvim.chat_text()
    # Opening it again only shows its chat.
    nvim.lua("acp_test.answers = { 'old-1' }")
    nvim.api.command("AcpSessions")
    nvim.wait("#acp_test.selects == 2")
    assert len(agent.sent("session/resume")) == 1
    agent.assert_all_valid(schema)


def test_close_and_delete(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    cwd = str(tmp_path)
    agent = Agent(
        tmp_path,
        "s",
        {
            "agentCapabilities": {"sessionCapabilities": {"list": {}, "delete": {}, "close": {}}},
            "sessions": [stored("old-1", cwd, "Throw away", "2025-01-01T10:00:00Z")],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    session_id = nvim.status()["session_id"]
    nvim.lua("acp_test.answers = { 'old-1' }")
    nvim.api.command("AcpSessions delete")
    wait_note(nvim, "deleted session Throw away")
    (delete,) = agent.sent("session/delete")
    assert delete["params"] == {"sessionId": "old-1"}
    assert selects(nvim)[0]["prompt"] == "Delete a session of s"
    # Wiping the chat closes its session.
    nvim.lua(
        "vim.api.nvim_buf_delete(require('acp_nvim.ui.chat').chats[...].buf, { force = true })", session_id
    )
    (close,) = wait_journal(nvim, agent, "session/close")
    assert close["params"] == {"sessionId": session_id}
    nvim.wait("require('acp_nvim').status().session_id == nil")
    assert nvim.status()["sessions"] == 0
    agent.assert_all_valid(schema)


def test_two_sessions_and_two_agents(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    first = Agent(tmp_path, "a", {"echo": False, "turns": [[{"text": "A one"}], [{"text": "A two"}]]})
    second = Agent(
        tmp_path, "b", {"echo": False, "session": {"sessionId": "b-1"}, "turns": [[{"text": "B"}]]}
    )
    setup(nvim, tmp_path, {"a": first.config(), "b": second.config()})
    nvim.api.command("AcpStart a")
    nvim.wait_state("ready")
    nvim.api.command("AcpNew")
    nvim.wait("require('acp_nvim').status().session_id == 'sess-2'")
    assert nvim.status()["sessions"] == 2
    assert [e["params"]["cwd"] for e in first.sent("session/new")] == [str(tmp_path)] * 2
    # A prompt goes to the chat the cursor is in, not to the newest one.
    nvim.lua(
        """
        local chat = require('acp_nvim.ui.chat').chats['sess-1']
        require('acp_nvim.ui.chat').open('sess-1')
        vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
        """
    )
    nvim.wait("require('acp_nvim').status().session_id == 'sess-1'")
    nvim.lua("require('acp_nvim').prompt('to one')")
    nvim.wait("table.concat(require('acp_nvim.ui.chat').lines('sess-1'), '\\n'):find('A one', 1, true)")
    nvim.wait_state("ready")
    assert first.sent("session/prompt")[0]["params"]["sessionId"] == "sess-1"
    assert "A one" not in "\n".join(chat_lines(nvim, "sess-2"))

    # Another agent alongside.
    nvim.api.command("wincmd p")
    nvim.api.command("AcpStart b")
    nvim.wait("require('acp_nvim').status().session_id == 'b-1'")
    nvim.wait_state("ready")
    assert nvim.status()["agent_name"] == "b"
    nvim.lua("require('acp_nvim').prompt('to b')")
    nvim.wait("table.concat(require('acp_nvim.ui.chat').lines('b-1'), '\\n'):find('B', 1, true)")
    nvim.wait_state("ready")
    assert [e["params"]["sessionId"] for e in second.sent("session/prompt")] == ["b-1"]
    assert len(first.sent("session/prompt")) == 1
    assert nvim.status()["sessions"] == 3
    # Stopping b leaves a's sessions running and current.
    nvim.api.command("AcpStop")
    nvim.wait("require('acp_nvim').status().agent_name == 'a'")
    assert nvim.state() == "ready" and nvim.status()["sessions"] == 2
    first.assert_all_valid(schema)
    second.assert_all_valid(schema)


# ---- modes and configuration options ---------------------------------------------------------------------

MODES = {
    "currentModeId": "ask",
    "availableModes": [
        {"id": "ask", "name": "Ask"},
        {"id": "code", "name": "Code", "description": "Writes code"},
        {"id": "architect", "name": "Architect"},
    ],
}
CONFIG = [
    {
        "id": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": "a",
        "options": [
            {"group": "fast", "name": "Fast", "options": [{"value": "a", "name": "Alpha"}]},
            {
                "group": "smart",
                "name": "Smart",
                "options": [{"value": "b", "name": "Beta"}, {"value": "c", "name": "Gamma"}],
            },
        ],
    },
    {"id": "brief", "name": "Brief answers", "type": "boolean", "currentValue": False},
    {"id": "dial", "name": "A dial", "type": "slider", "currentValue": 3},
]


def test_modes_and_config_options(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "session": {"modes": MODES, "configOptions": CONFIG},
            "setMode": {"refuse": ["architect"], "error": {"code": -32602, "message": "not now"}},
            "setConfigOption": {"refuse": [{"configId": "model", "value": "c"}]},
            "turns": [
                [
                    {"update": {"sessionUpdate": "session_info_update", "title": "Work"}},
                    {"update": {"sessionUpdate": "usage_update", "used": 1500, "size": 10000}},
                    {"text": "ok"},
                ]
            ],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config(mode="code", config={"model": "b"})})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    # The configured defaults applied to the new session.
    nvim.wait("require('acp_nvim').status().model == 'b' and require('acp_nvim').status().mode == 'code'")
    assert [e["params"] for e in agent.sent("session/set_mode")] == [
        {"sessionId": "sess-1", "modeId": "code"}
    ]
    assert [e["params"] for e in agent.sent("session/set_config_option")] == [
        {"sessionId": "sess-1", "configId": "model", "value": "b"}
    ]
    # What a person reads: the names of the mode and the model; status() keeps their ids too.
    assert nvim.lua("return require('acp_nvim').statusline()") == "s ready · Code · Beta"
    status = nvim.status()
    assert (status["mode_name"], status["model_name"]) == ("Code", "Beta")
    # Completion: the modes, the options of a known type, an option's values.
    complete = "return vim.fn.getcompletion(..., 'cmdline')"
    assert nvim.lua(complete, "AcpMode ") == ["ask", "code", "architect"]
    assert nvim.lua(complete, "AcpConfig ") == ["model", "brief"]
    assert nvim.lua(complete, "AcpConfig model ") == ["a", "b", "c"]
    assert nvim.lua(complete, "AcpConfig brief t") == ["true", "toggle"]

    # A refused mode: shown at once, rolled back with a message.
    nvim.api.command("AcpMode architect")
    nvim.wait_chat("Mode Architect refused: not now")
    nvim.wait("require('acp_nvim').status().mode == 'code'")
    assert "  Mode: Architect" in nvim.chat_text()
    assert "Mode Architect refused: not now" in nvim.errors()[-1]

    # The mode picker.
    nvim.lua("acp_test.answers = { 'ask' }")
    nvim.api.command("AcpMode")
    nvim.wait("require('acp_nvim').status().mode == 'ask'")
    assert selects(nvim)[-1]["items"] == ["Ask", "Code  (current) — Writes code", "Architect"]
    assert agent.sent("session/set_mode")[-1]["params"]["modeId"] == "ask"

    # A boolean option.
    nvim.api.command("AcpConfig brief on")
    wait_journal(nvim, agent, "session/set_config_option", 2)
    assert agent.sent("session/set_config_option")[-1]["params"] == {
        "sessionId": "sess-1",
        "configId": "brief",
        "type": "boolean",
        "value": True,
    }
    nvim.wait_chat("Brief answers: on")

    # Pickers for the option and its value (grouped choices), then a refused value rolled back.
    nvim.lua("acp_test.answers = { 'model', 'c' }")
    nvim.api.command("AcpConfig")
    nvim.wait_chat("Model = Smart / Gamma refused")
    pickers = selects(nvim)
    assert pickers[-2]["items"] == ["Model: Smart / Beta", "Brief answers: on"]
    assert pickers[-1]["items"] == ["Fast / Alpha", "Smart / Beta  (current)", "Smart / Gamma"]
    nvim.wait("require('acp_nvim').status().model == 'b'")

    # An invalid value is refused here, nothing sent.
    sent = len(agent.sent("session/set_config_option"))
    nvim.api.command("AcpConfig model zzz")
    wait_note(nvim, "invalid value 'zzz' for Model")
    assert len(agent.sent("session/set_config_option")) == sent

    # Title and usage reach the status.
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("ok")
    nvim.wait_state("ready")
    status = nvim.status()
    assert status["title"] == "Work"
    assert status["usage"] == {"used": 1500, "size": 10000}
    agent.assert_all_valid(schema)


def _mode_option(current: str) -> dict[str, Any]:
    return {
        "id": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": current,
        "options": [
            {"value": "ask", "name": "Ask"},
            {"value": "code", "name": "Code", "description": "Writes code"},
            {"value": "architect", "name": "Architect"},
        ],
    }


def test_a_mode_offered_as_a_config_option_is_set_through_it_and_said_once(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    """Issue 29: an agent that offers its mode both as legacy modes and as a config option of category "mode"
    (codex-acp 2.6) gets `session/set_config_option`, never `session/set_mode`; the chat says each change
    once, whether the client made it or the agent reported it both ways."""
    both_ways = [
        {"update": {"sessionUpdate": "current_mode_update", "currentModeId": "ask"}},
        {"update": {"sessionUpdate": "config_option_update", "configOptions": [_mode_option("ask")]}},
        {"text": "ok"},
    ]
    agent = Agent(
        tmp_path,
        "s",
        {
            "echo": False,
            "session": {"modes": MODES, "configOptions": [_mode_option("ask")]},
            "setConfigOption": {"refuse": [{"configId": "mode", "value": "architect"}], "notify": True},
            "turns": [both_ways],
        },
    )
    setup(nvim, tmp_path, {"s": agent.config(mode="code")})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.wait("require('acp_nvim').status().mode == 'code'")
    wait_journal(nvim, agent, "session/set_config_option")
    assert [e["params"] for e in agent.sent("session/set_config_option")] == [
        {"sessionId": "sess-1", "configId": "mode", "value": "code"}
    ]
    assert nvim.status()["mode_name"] == "Code"
    complete = "return vim.fn.getcompletion(..., 'cmdline')"
    assert nvim.lua(complete, "AcpMode ") == ["ask", "code", "architect"]

    # The agent reports a change of its own both ways (the legacy update, then the option): one line.
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("ok")
    nvim.wait_state("ready")
    assert nvim.status()["mode"] == "ask"

    # A refused mode is rolled back with a message (its answer waited for: no change is in flight after).
    nvim.api.command("AcpMode architect")
    nvim.wait_chat("Mode = Architect refused")
    nvim.wait("require('acp_nvim').status().mode == 'ask'")

    # The picker offers the option's choices.
    nvim.lua("acp_test.answers = { 'code' }")
    nvim.api.command("AcpMode")
    wait_journal(nvim, agent, "session/set_config_option", 3)
    nvim.wait("require('acp_nvim').status().mode == 'code'")
    assert selects(nvim)[-1]["items"] == ["Ask  (current)", "Code — Writes code", "Architect"]

    text = nvim.chat_text()
    assert text.count("Mode: Code") == 2 and text.count("Mode: Ask") == 1, text
    assert text.count("Mode: Architect") == 1, text
    assert agent.sent("session/set_mode") == []
    agent.assert_all_valid(schema)


# ---- what an agent that advertises nothing gets ----------------------------------------------------------


def test_nothing_advertised_nothing_sent(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    agent = Agent(tmp_path, "s", {})
    extra = tmp_path / "extra"
    extra.mkdir()
    setup(
        nvim,
        tmp_path,
        {"s": agent.config()},
        additional_directories=[str(extra)],
        mcp_servers=[
            {"name": "local", "command": "/bin/cat", "args": ["-u"], "env": {"K": "v"}},
            {"type": "http", "name": "remote", "url": "https://example.com/mcp", "headers": {"A": "b"}},
        ],
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    (new,) = agent.sent("session/new")
    # stdio always; http left out (and said so); no additionalDirectories.
    assert without_neovim(new["params"], [str(tmp_path)]) == {
        "cwd": str(tmp_path),
        "mcpServers": [
            {"name": "local", "command": "/bin/cat", "args": ["-u"], "env": [{"name": "K", "value": "v"}]}
        ],
    }
    assert "s cannot use these MCP servers: remote (no http MCP support)" in notes_text(nvim)
    for command, why in [
        ("AcpSessions", "s cannot list sessions"),
        ("AcpSessions delete", "s cannot list sessions"),
        ("AcpLogout", "s does not support logout"),
        ("AcpMode code", "s offers no modes for this session"),
        ("AcpConfig model b", "s offers no configuration options for this session"),
        ("AcpAuth", "offers no authentication method"),
        ("AcpAddDir " + str(extra), "s does not support additional directories"),
    ]:
        nvim.api.command(command)
        wait_note(nvim, why)
    assert nvim.lua("return vim.fn.getcompletion('AcpMode ', 'cmdline')") == []
    assert not selects(nvim)
    # Closing the chat sends nothing either.
    session_id = nvim.status()["session_id"]
    nvim.lua(
        "vim.api.nvim_buf_delete(require('acp_nvim.ui.chat').chats[...].buf, { force = true })", session_id
    )
    nvim.wait("require('acp_nvim').status().session_id == nil")
    nvim.lua("require('acp_nvim').prompt('hello')")  # refused: no session
    assert agent.methods() == ["initialize", "session/new"]
    agent.assert_all_valid(schema)


def test_additional_directories_and_mcp_when_advertised(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    agent = Agent(
        tmp_path,
        "s",
        {
            "agentCapabilities": {
                "mcpCapabilities": {"http": True},
                "sessionCapabilities": {"additionalDirectories": {}},
            }
        },
    )
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    setup(
        nvim,
        tmp_path,
        {"s": agent.config()},
        additional_directories=[str(one)],
        mcp_servers=[{"type": "http", "name": "remote", "url": "https://example.com/mcp"}],
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.api.command(f"AcpAddDir {two}")
    wait_note(nvim, f"{two} is added to the sessions opened from now on")
    nvim.api.command("AcpNew")
    nvim.wait("require('acp_nvim').status().session_id == 'sess-2'")
    first, second = agent.sent("session/new")
    assert first["params"]["additionalDirectories"] == [str(one)]
    assert second["params"]["additionalDirectories"] == [str(one), str(two)]
    roots = [str(tmp_path), str(one), str(two)]
    assert without_neovim(second["params"], roots)["mcpServers"] == [
        {"type": "http", "name": "remote", "url": "https://example.com/mcp", "headers": []}
    ]
    agent.assert_all_valid(schema)


def test_acpadddir_before_a_start_is_sent_by_the_host_and_leaves_the_options_alone(
    nvim: Nvim, tmp_path: Path
) -> None:
    agent = Agent(
        tmp_path, "s", {"agentCapabilities": {"sessionCapabilities": {"additionalDirectories": {}}}}
    )
    extra = tmp_path / "extra"
    extra.mkdir()
    setup(nvim, tmp_path, {"s": agent.config()})
    # Before any agent runs: the host keeps the list (the one owner), not the user's options.
    nvim.api.command(f"AcpAddDir {extra}")
    wait_note(nvim, f"{extra} is added to the sessions opened from now on")
    nvim.api.command(f"AcpAddDir {tmp_path / 'missing'}")
    wait_note(nvim, f"not a directory: {tmp_path / 'missing'}")
    # Nothing was written into the user's setup() table.
    assert nvim.lua("return require('acp_nvim.config').raw.additional_directories") is None
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    (new,) = agent.sent("session/new")
    assert new["params"]["additionalDirectories"] == [str(extra)]


@pytest.mark.parametrize("command", ["AcpMode", "AcpConfig", "AcpAuth", "AcpLogout"])
def test_commands_without_an_agent_say_so(nvim: Nvim, command: str) -> None:
    nvim.api.command(command)
    assert "no agent is running" in notes_text(nvim) or "no session" in notes_text(nvim)


def test_help_tags_of_the_session_commands(nvim: Nvim, tmp_path: Path) -> None:
    tags = help_tags(nvim, tmp_path)
    for tag in [":AcpNew", ":AcpSessions", ":AcpMode", ":AcpConfig", ":AcpAuth", ":AcpLogout", ":AcpAddDir"]:
        assert tag in tags, tag
    for tag in ["acp_nvim.mcp_servers", "acp_nvim.additional_directories", "acp_nvim.sessions.prefer_resume"]:
        assert tag in tags, tag
    assert "acp_nvim.auth.terminal" in tags and "acp_nvim.agents.mode" in tags

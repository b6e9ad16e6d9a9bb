"""One owner per decision (issue 13), as an agent sees it through the full stack: the host validates every
fs request and decides every error; Lua is asked only to carry out a valid one and answers with facts."""

from __future__ import annotations

from pathlib import Path

from tests.nvim.agent_io import Scripted, error, result
from tests.nvim.conftest import Nvim

# Counts the calls into fs.read / fs.write and keeps Lua's own answers, as the host received them.
SPY = """
local fs = require('acp_nvim.editor.fs')
_G.acp_fs_calls = {}
for _, name in ipairs({ 'read', 'write' }) do
  local serve = fs[name]
  fs[name] = function(...)
    local answer = serve(...)
    table.insert(_G.acp_fs_calls, { name = name, answer = answer })
    return answer
  end
end
"""


def test_invalid_requests_never_reach_lua(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "a.txt").write_text("alpha\n")
    steps = [
        {"read": {"path": "${CWD}/a.txt", "line": 0}},
        {"write": {"path": "${CWD}/a.txt", "content": "nul \0 byte\n"}},
        {"write": {"path": "${CWD}/a.txt", "content": "fine\n"}},
    ]
    agent.start([steps], project)
    nvim.lua(SPY)
    answers = agent.turn()
    assert error(answers[0])["code"] == -32602 and "line must be an integer >= 1" in answers[0]["message"]
    assert error(answers[1])["code"] == -32602 and "NUL byte" in answers[1]["message"]
    assert result(answers[2]) == {}
    assert (project / "a.txt").read_text() == "fine\n"
    # Only the valid write was handed to Lua.
    calls = nvim.lua("return _G.acp_fs_calls")
    assert [c["name"] for c in calls] == ["write"], calls


def test_lua_reports_facts_and_the_host_picks_the_error(nvim: Nvim, agent: Scripted, project: Path) -> None:
    (project / "dir").mkdir()
    (project / "open.txt").write_text("v1\n")
    steps = [
        {"write": {"path": "${CWD}/dir", "content": "x\n"}},
        {"write": {"path": "${CWD}/open.txt", "content": "agent\n"}},
        {"read": {"path": "${CWD}/open.txt"}},
    ]
    agent.start([steps], project)
    nvim.api.command(f"edit {project / 'open.txt'}")
    (project / "open.txt").write_text("changed elsewhere\n")
    nvim.lua(SPY)
    answers = agent.turn()
    directory, conflict = error(answers[0]), error(answers[1])
    assert directory["code"] == -32602 and directory["message"] == f"{project / 'dir'} is a directory"
    assert conflict["code"] == -32603 and conflict["data"]["reason"] == "changed_on_disk"
    assert "not overwriting it with the agent's write" in conflict["message"]
    assert result(answers[2])["content"] == "v1\n"
    # What Lua said: facts, no JSON-RPC code or message of its own.
    calls = nvim.lua("return _G.acp_fs_calls")
    assert calls[0]["answer"] == {"ok": False, "fact": "not_regular", "kind": "directory"}
    assert calls[1]["answer"]["fact"] == "changed_on_disk" and calls[1]["answer"]["ok"] is False
    assert calls[1]["answer"]["detail"] in conflict["message"]
    assert all("code" not in c["answer"] and "message" not in c["answer"] for c in calls)
    # The user is warned by the host, in the words the agent got.
    assert any("not overwriting" in n["msg"] for n in nvim.notes())

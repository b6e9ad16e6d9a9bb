"""Terminals belong to the session that created them: they are killed when that session ends (its chat closed,
its agent stopped or crashed) and keep running when another session or another agent ends. A real headless
Neovim, scripted agents (official Python SDK) running real commands in Neovim PTY terminals."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Nvim
from tests.nvim.test_restart import agent_pid, prompt
from tests.nvim.test_sessions import Agent, setup

# A command that runs until killed, with a child of its own (the kill must reach the whole group).
LONG = {
    "terminal": {
        "command": "sh",
        "args": ["-c", "sleep 300 & echo started; wait"],
        "then": [{"until_output": "started"}],
    }
}
ALIVE = "vim.uv.kill(-args[1], 0) == 0"
GONE = "select(1, pcall(vim.uv.kill, -args[1], 0)) == false or vim.uv.kill(-args[1], 0) ~= 0"


def scenario(**extra: Any) -> dict[str, Any]:
    return {"echo": False, **extra}


def terminal_pids(nvim: Nvim, agent: Agent) -> list[int]:
    """The process group of each terminal the agent created (its leader's pid)."""
    ids = [e["result"]["terminalId"] for e in agent.journal() if e.get("call") == "terminal/create"]
    pids = [nvim.lua("return require('acp_nvim.editor.terminal').pid(...)", tid) for tid in ids]
    assert all(isinstance(pid, int) for pid in pids), (ids, pids)
    return pids


def alive(nvim: Nvim, pid: int) -> bool:
    return bool(nvim.lua(f"local args = {{...}} return {ALIVE}", pid))


def wait_gone(nvim: Nvim, pid: int) -> None:
    nvim.wait(GONE, 10, pid)


@pytest.mark.parametrize("how", ["stop", "crash"])
def test_ending_one_agent_leaves_the_other_agents_terminals(nvim: Nvim, tmp_path: Path, how: str) -> None:
    a = Agent(tmp_path, "a", scenario(session={"sessionId": "a-1"}, turns=[[LONG]]))
    b = Agent(tmp_path, "b", scenario(session={"sessionId": "b-1"}, turns=[[LONG]]))
    setup(nvim, tmp_path, {"a": a.config(), "b": b.config()})
    nvim.api.command("AcpStart a")
    nvim.wait_state("ready")
    prompt(nvim, a, "run")
    nvim.api.command("AcpStart b")
    nvim.wait("require('acp_nvim').status().session_id == 'b-1'")
    nvim.wait_state("ready")
    prompt(nvim, b, "run")
    (a_pid,) = terminal_pids(nvim, a)
    (b_pid,) = terminal_pids(nvim, b)
    assert alive(nvim, a_pid) and alive(nvim, b_pid)

    if how == "stop":
        nvim.api.command("AcpStop")  # the current agent: b
        nvim.wait("require('acp_nvim').status().agent_name == 'a'")
    else:
        os.kill(agent_pid(b), signal.SIGKILL)
        nvim.wait("vim.tbl_count(require('acp_nvim.editor.agent_groups').groups()) == 1")
    wait_gone(nvim, b_pid)
    # b's terminal is gone; a's still runs, and a still works.
    assert alive(nvim, a_pid)
    nvim.lua("require('acp_nvim.ui.chat').open('a-1')")
    nvim.wait("require('acp_nvim').status().session_id == 'a-1'")
    assert nvim.state() == "ready"
    assert alive(nvim, a_pid)
    # Stopping a too ends its terminal.
    nvim.api.command("AcpStop")
    wait_gone(nvim, a_pid)


def test_closing_a_chat_kills_only_that_sessions_terminals(nvim: Nvim, tmp_path: Path) -> None:
    agent = Agent(tmp_path, "s", scenario(turns=[[LONG], [LONG]]))
    setup(nvim, tmp_path, {"s": agent.config()})
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    prompt(nvim, agent, "run")
    nvim.api.command("AcpNew")
    nvim.wait("require('acp_nvim').status().session_id == 'sess-2'")
    nvim.wait_state("ready")
    prompt(nvim, agent, "run")
    first, second = terminal_pids(nvim, agent)
    creates = [e["params"] for e in agent.sent() if e["method"] == "session/prompt"]
    assert [p["sessionId"] for p in creates] == ["sess-1", "sess-2"]

    nvim.lua("vim.api.nvim_buf_delete(require('acp_nvim.ui.chat').chats['sess-1'].buf, { force = true })")
    wait_gone(nvim, first)
    assert alive(nvim, second)
    assert nvim.state() == "ready" and nvim.status()["session_id"] == "sess-2"

"""The traffic log (:AcpLog): real traffic with a real agent recorded through `agent_log.record_hook`, its
view (one fold per message, header then indented JSON, secrets redacted), the NDJSON export, and the log
buffer in a real headless Neovim. The log level option reaches the host."""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_nvim.app import agent_log
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.process import AgentCommand
from acp_nvim.protocol import schema as s
from tests.conftest import ROOT
from tests.nvim.conftest import Nvim, setup_opts
from tests.process.recording_editor import RecordingEditor

SCRIPTED = ROOT / "tests" / "agents" / "scripted_agent.py"
SECRET = "hunter2-very-secret"
HEADER = r"^\d\d:\d\d:\d\d\.\d\d\d  (>>|<<) "


@pytest.fixture
def traffic(tmp_path: Path) -> Iterator[str]:
    """Real traffic with the scripted agent, recorded under a fresh agent name."""
    name = f"scripted-{tmp_path.name}"
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"turns": [[{"text": "hello from the agent"}]]}))

    async def run() -> None:
        command = AgentCommand(sys.executable, [str(SCRIPTED), str(scenario)])
        hook = agent_log.record_hook(name)
        async with AgentConnection.launch(command, RecordingEditor(), on_messages=hook) as agent:
            mcp = s.McpServerStdio(
                name="tools",
                command="/bin/true",
                args=[],
                env=[s.EnvVariable(name="API_TOKEN", value=SECRET)],
            )
            session = await agent.new_session(str(tmp_path), [mcp])
            await agent.prompt(session.session_id, [s.ContentBlockText(text="hi")])

    anyio.run(run)
    yield name
    agent_log.clear(name)


def test_view_has_one_fold_per_message_with_a_header_and_pretty_json(traffic: str) -> None:
    view = agent_log.view(traffic)
    lines: list[str] = view["lines"]
    folds: list[list[int]] = view["folds"]
    assert view["name"] == traffic and view["count"] == len(folds) >= 6
    headers = [lines[first - 1] for first, _ in folds]
    assert all(re.match(HEADER, h) for h in headers), headers
    assert re.search(r">> initialize \(0\)$", headers[0]) and re.search(r"<< result \(0\)$", headers[1])
    assert any(re.search(r">> session/new \(\d+\)$", h) for h in headers)
    assert any(h.endswith("<< session/update agent_message_chunk") for h in headers)
    # Folds tile the buffer: consecutive, each message's JSON inside its own fold, indented.
    assert folds[0][0] == 1 and folds[-1][1] == len(lines)
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(folds))
    first, last = folds[0]
    body = "\n".join(lines[first:last])
    assert json.loads(body)["method"] == "initialize"
    assert lines[first] == "{" and lines[first + 1].startswith("  ")
    # The secret never reaches the view; the name of the variable does.
    text = "\n".join(lines)
    assert SECRET not in text and "API_TOKEN" in text and "«redacted»" in text


def test_save_writes_redacted_ndjson(traffic: str, tmp_path: Path) -> None:
    target = tmp_path / "bug-report.ndjson"
    result = agent_log.save(traffic, str(target))
    assert result == {"path": str(target), "count": agent_log.view(traffic)["count"], "name": traffic}
    raw = target.read_text()
    records = [json.loads(line) for line in raw.splitlines()]
    assert len(records) == result["count"]
    assert records[0]["direction"] == "out" and records[0]["method"] == "initialize"
    assert SECRET not in raw
    assert "cannot write" in agent_log.save(traffic, str(tmp_path / "no" / "such" / "dir" / "x"))["error"]


def test_log_buffer_in_neovim(nvim: Nvim, traffic: str) -> None:
    view = agent_log.view(traffic)
    buf = nvim.lua("return require('acp_nvim.ui.log').show(...)", view)
    assert nvim.lua("return vim.bo[...].filetype", buf) == "acp_nvim_log"
    assert nvim.lua("return vim.bo[...].buftype", buf) == "nofile"
    assert nvim.lua("return vim.bo[...].modifiable", buf) is False
    assert nvim.api.current.buffer[:] == view["lines"]
    # Every message is one closed fold starting at its header.
    for first, last in view["folds"]:
        assert nvim.lua("return {vim.fn.foldclosed(...), vim.fn.foldclosedend(...)}", first) == [first, last]
    # Shown again (a refresh), the same buffer is reused.
    assert nvim.lua("return require('acp_nvim.ui.log').show(...)", view) == buf


def test_acplog_without_a_host_says_so(nvim: Nvim) -> None:
    nvim.api.command("AcpLog")
    assert any("no agent traffic" in n["msg"] for n in nvim.notes()), nvim.notes()


def test_acplog_command_end_to_end(nvim: Nvim, tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"turns": [[{"text": "hello from the agent"}]]}))
    agents = {"scripted": {"cmd": sys.executable, "args": [str(SCRIPTED), str(scenario)]}}
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents))
    nvim.api.command("AcpStart scripted")
    nvim.wait_state("ready")
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("hello from the agent")
    nvim.api.command("AcpLog")
    assert nvim.lua("return vim.bo.filetype") == "acp_nvim_log"
    text = "\n".join(nvim.api.current.buffer[:])
    assert ">> initialize (0)" in text and "session/prompt" in text
    target = tmp_path / "log.ndjson"
    nvim.api.command(f"AcpLog save {target}")
    assert target.read_text().count("\n") >= 6


def test_log_level_reaches_the_host(nvim: Nvim, tmp_path: Path) -> None:
    log_file = tmp_path / "levels.log"
    opts: dict[str, Any] = setup_opts(tmp_path, log={"file": str(log_file), "level": "warn"})
    assert nvim.lua("return require('acp_nvim').setup(...)", opts), nvim.notes()
    info = nvim.lua("return require('acp_nvim.host').ensure()")
    assert info["log"] == str(log_file) and info["log_level"] == "warn"
    # At warn, the host's "host started" info line is not written.
    assert "host started" not in (log_file.read_text() if log_file.exists() else "")
    assert (
        nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, log={"level": "loud"}))
        is False
    )
    assert any("`log.level` must be one of" in n["msg"] for n in nvim.notes())

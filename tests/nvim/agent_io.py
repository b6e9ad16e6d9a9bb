"""Helpers for the tests that run the scripted Python-SDK agent (tests/agents/scripted_agent.py) in a real
headless Neovim: its configuration entry and its journal; and, for the full-stack fs/terminal tests, a
session (`Scripted`) in which the agent drives the requests, Neovim serves them (agent -> client ->
AgentEditor -> the editor services -> NvimEditorPort -> Lua), and the agent's journal says what it got."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.conftest import ROOT
from tests.nvim.conftest import Nvim, setup_opts
from tests.schema_check import assert_valid

SCRIPTED = ROOT / "tests" / "agents" / "scripted_agent.py"


def scripted_config(scenario: Path, journal: Path | None = None) -> dict[str, Any]:
    """The `opts.agents` entry that runs the scripted agent on the scenario file; with `journal`, the agent
    writes there what it sent and got (one JSON object a line)."""
    config: dict[str, Any] = {"cmd": sys.executable, "args": [str(SCRIPTED), str(scenario)]}
    if journal is not None:
        config["env"] = {"ACP_TEST_JOURNAL": str(journal)}
    return config


def start_scenario(nvim: Nvim, tmp_path: Path, scenario: dict[str, Any], **opts: Any) -> None:
    """Starts the scripted agent `s` on `scenario` (its journal in tmp_path/journal.jsonl), ready."""
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    agents = {"s": scripted_config(path, tmp_path / "journal.jsonl")}
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents, **opts))
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")


def read_journal(journal: Path) -> list[dict[str, Any]]:
    """The journal's entries; a journal that is not there fails the test (the agent never ran)."""
    return [json.loads(line) for line in journal.read_text().splitlines()]


# What the agent got back, by method: the schema definition each answer must satisfy.
RESULT_DEFS = {
    "fs/read_text_file": "ReadTextFileResponse",
    "fs/write_text_file": "WriteTextFileResponse",
    "terminal/create": "CreateTerminalResponse",
    "terminal/output": "TerminalOutputResponse",
    "terminal/wait_for_exit": "WaitForTerminalExitResponse",
    "terminal/kill": "KillTerminalResponse",
    "terminal/release": "ReleaseTerminalResponse",
    "session/request_permission": "RequestPermissionResponse",
}


class Scripted:
    """One scripted agent session in a Neovim; `turn()` runs the next scripted turn to its end."""

    def __init__(self, nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
        self.nvim = nvim
        self.tmp_path = tmp_path
        self.schema = schema
        self.journal_path = tmp_path / "journal.jsonl"
        self.turns_done = 0

    def start(
        self,
        turns: list[list[dict[str, Any]]],
        cwd: Path,
        scenario_keys: dict[str, Any] | None = None,
        **opts: Any,
    ) -> None:
        """`scenario_keys`: more of the scenario (tests/agents/scripted_agent.py) than its turns."""
        scenario = {"turns": turns, "echo": False, **(scenario_keys or {})}
        path = self.tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario))
        agent = scripted_config(path, self.journal_path)
        options = setup_opts(self.tmp_path, agents={"scripted": agent}, default_agent="scripted", **opts)
        assert self.nvim.lua("return require('acp_nvim').setup(...)", options), self.nvim.notes()
        self.nvim.api.command(f"cd {cwd}")
        self.nvim.lua("require('acp_nvim').start()")
        self.nvim.wait_state("ready")

    def turn_ends(self) -> int:
        if not self.journal_path.exists():
            return 0
        with self.journal_path.open("rb") as journal:
            return sum(1 for line in journal if b'"turn_end"' in line)

    def entries(self) -> list[dict[str, Any]]:
        if not self.journal_path.exists():
            return []
        return read_journal(self.journal_path)

    def turn(self, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Prompts, waits for the turn's end, and returns the answers the agent got in it (each checked
        against the schema)."""
        before = len(self.entries())
        assert self.nvim.lua("return require('acp_nvim').prompt('go')"), self.nvim.notes()
        self.turns_done += 1
        # Polled from here, not by a Lua condition inside Neovim: reading a journal that holds a huge request
        # (a 23 MiB write) would hold Neovim itself, and the responsiveness tests would measure the harness.
        wait_until(lambda: self.turn_ends() >= self.turns_done, timeout, f"turn {self.turns_done} to end")
        self.nvim.wait_state("ready")
        answers = [e for e in self.entries()[before:] if e["kind"] in ("result", "error")]
        for entry in answers:
            if entry["kind"] == "result" and entry["call"] in RESULT_DEFS:
                assert_valid(self.schema, RESULT_DEFS[entry["call"]], entry["result"])
        return answers

    def initialize(self) -> dict[str, Any]:
        (init,) = [e for e in self.entries() if e.get("method") == "initialize"]
        assert_valid(self.schema, "InitializeRequest", init["params"])
        return init["params"]  # type: ignore[no-any-return]


def result(entry: dict[str, Any]) -> Any:
    assert entry["kind"] == "result", entry
    return entry["result"]


def error(entry: dict[str, Any]) -> dict[str, Any]:
    assert entry["kind"] == "error", entry
    return entry


def without_neovim(params: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """The params of a session/new, load or resume with the Neovim MCP server left out, once checked: offered
    first, on the session's folders `roots` (`opts.mcp`, issue 28)."""
    servers = params["mcpServers"]
    assert servers and servers[0]["name"] == "neovim", servers
    args = servers[0]["args"]
    assert args[:3] == ["-m", "acp_nvim", "mcp"], args
    assert [args[i + 1] for i, arg in enumerate(args) if arg == "--root"] == roots, args
    return {**params, "mcpServers": servers[1:]}

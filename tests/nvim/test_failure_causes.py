"""A failed request names its cause: the agent's error message, what its `data` says and what the agent wrote
on its stderr meanwhile; that stderr is in the log file at the default level."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import scripted_config
from tests.nvim.conftest import Nvim, setup_opts

WHY = "--dangerously-skip-permissions cannot be used with root/sudo privileges"


def start(nvim: Nvim, tmp_path: Path, scenario: dict[str, Any]) -> None:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps({"echo": False, **scenario}))
    agents = {"s": scripted_config(path, tmp_path / "journal.jsonl")}
    assert nvim.lua("return require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents))
    nvim.api.command("AcpStart s")


def test_a_refused_session_names_the_data_and_the_stderr(nvim: Nvim, tmp_path: Path) -> None:
    refusal = {
        "code": -32603,
        "message": "Internal error",
        "data": {"details": "Query closed before response received"},
        "stderr": WHY,
    }
    start(nvim, tmp_path, {"newSessionError": refusal})
    nvim.wait_state("error")
    error = nvim.status()["error"]
    assert "refused to create a session: Internal error" in error, error
    assert "Query closed before response received" in error, error
    assert WHY in error, error
    assert any(WHY in message for message in nvim.errors()), nvim.notes()
    # The default level ("info"): the agent's stderr is in the log file all the same.
    log_file = tmp_path / "acp_nvim.log"
    wait_until(lambda: log_file.exists() and WHY in log_file.read_text(), 10, "the stderr line in the log")


def test_string_data_is_named_too(nvim: Nvim, tmp_path: Path) -> None:
    refusal = {"code": -32603, "message": "Internal error", "data": "model quota exhausted"}
    start(nvim, tmp_path, {"newSessionError": refusal})
    nvim.wait_state("error")
    error = nvim.status()["error"]
    assert error.endswith("refused to create a session: Internal error: model quota exhausted"), error


def test_a_failed_prompt_names_its_cause_in_the_chat(nvim: Nvim, tmp_path: Path) -> None:
    turn = [
        {
            "error": {
                "code": -32603,
                "message": "Internal error",
                "data": {"details": "upstream 529 overloaded"},
            }
        }
    ]
    start(nvim, tmp_path, {"turns": [turn]})
    nvim.wait_state("ready")
    nvim.lua("require('acp_nvim').prompt('hi')")
    nvim.wait_chat("Error: Internal error: upstream 529 overloaded")
    nvim.wait_state("ready")

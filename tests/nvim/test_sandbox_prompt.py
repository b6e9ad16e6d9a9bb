"""The sandbox through the full stack: inside the session's cwd the agent reads and writes freely; outside,
the user is asked through vim.ui.select (stubbed by the test); escapes through `..` or a symlink are refused
without asking; the options widen or narrow it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.nvim.agent_io import Scripted, error, result
from tests.nvim.conftest import Nvim


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "in.txt").write_text("inside\n")
    (outside / "o.txt").write_text("secret\n")
    (outside / "p.txt").write_text("other\n")
    (project / "esc").symlink_to(outside)
    return project, outside


def answers(nvim: Nvim, *choices: str) -> None:
    nvim.lua("acp_test.answers = {...}", *choices)


def selects(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def test_outside_is_asked(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    o, p = str(outside / "o.txt"), str(outside / "p.txt")
    steps = [
        {"read": {"path": "${CWD}/in.txt"}},
        {"read": {"path": o}},
        {"read": {"path": o}},
        {"read": {"path": p}},
        {"read": {"path": p}},
        {"write": {"path": o, "content": "overwritten\n"}},
        {"terminal": {"command": "pwd", "cwd": str(outside), "then": []}},
    ]
    agent.start([steps], project)
    answers(nvim, "once", "deny", "always", "deny", "deny")
    got = agent.turn()
    assert result(got[0])["content"] == "inside\n"
    assert result(got[1])["content"] == "secret\n"
    denied = error(got[2])
    assert denied["code"] == -32602 and o in denied["message"] and "outside the project" in denied["message"]
    assert result(got[3])["content"] == "other\n"
    # "Always" for p.txt: not asked again.
    assert result(got[4])["content"] == "other\n"
    assert error(got[5])["code"] == -32602
    assert (outside / "o.txt").read_text() == "secret\n"
    assert error(got[6])["code"] == -32602 and str(outside) in got[6]["message"]
    asked = selects(nvim)
    assert len(asked) == 5
    assert o in asked[0]["prompt"] and "read" in asked[0]["prompt"]
    assert asked[0]["items"] == ["Allow once", "Always allow this path", "Deny"]
    assert "write" in asked[3]["prompt"]
    assert "run a command in" in asked[4]["prompt"]


def test_escapes_are_refused_without_asking(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    steps = [
        {"read": {"path": "${CWD}/../outside/o.txt"}},
        {"read": {"path": "${CWD}/esc/o.txt"}},
        {"write": {"path": "${CWD}/esc/new.txt", "content": "x\n"}},
    ]
    agent.start([steps], project)
    got = agent.turn()
    for entry in got:
        assert error(entry)["code"] == -32602
        assert "outside the project" in entry["message"] and "symlink or '..'" in entry["message"]
    assert not (project / "esc" / "new.txt").exists()
    assert selects(nvim) == []


def test_options_widen_and_narrow(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    (project / "private").mkdir()
    (project / "private" / "key").write_text("k\n")
    steps = [
        {"read": {"path": str(outside / "o.txt")}},
        {"read": {"path": str(outside / "p.txt")}},
        {"read": {"path": "${CWD}/private/key"}},
    ]
    sandbox = {"outside": "deny", "allow": [str(outside / "p.txt")], "deny": [str(project / "private")]}
    agent.start([steps], project, sandbox=sandbox)
    got = agent.turn()
    assert "outside the project" in error(got[0])["message"]
    assert result(got[1])["content"] == "other\n"
    assert "sandbox.deny" in error(got[2])["message"]
    assert selects(nvim) == []


def test_headless_without_a_picker_refuses(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    agent.start([[{"read": {"path": str(outside / "o.txt")}}]], project)
    # Neovim's own vim.ui.select and no UI attached: nobody could answer.
    nvim.lua("vim.ui.select = dofile(vim.api.nvim_get_runtime_file('lua/vim/ui.lua', false)[1]).select")
    (got,) = agent.turn()
    assert "no UI to ask" in error(got)["message"]

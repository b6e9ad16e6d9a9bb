"""Issue 15, the sandbox's path decisions, through the whole stack: the scripted SDK agent sends the paths of
each repro, the host judges them, Neovim serves them. Each test asserts what the agent gets (code, message,
data) and what is on disk (the file outside neither read nor created nor changed), while a second client on
Neovim's server socket measures `nvim_eval` round trips; the figures are printed (`-s`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.client.files.disk import ReadRefused, read_text
from tests.nvim.agent_io import Scripted, error, result
from tests.nvim.conftest import Nvim
from tests.nvim.probe import round_trips

# The bound on Neovim's round trips during each case (the maxima seen were 4-16 ms).
MAX_ROUND_TRIP_MS = 50.0


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return project, outside


SECRET = "the text outside the project\n"


def selects(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return acp_test.selects")  # type: ignore[no-any-return]


def test_symlink_then_dotdot_is_the_file_the_kernel_opens(
    nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]
) -> None:
    project, outside = dirs
    (project / "x" / "y").mkdir(parents=True)
    # `l/..` is `x` (the link's target's parent), so `l/../../outside` is `project/outside`, inside.
    (project / "l").symlink_to(project / "x" / "y", target_is_directory=True)
    sneaky = "${CWD}/l/../../outside"
    steps = [
        {"read": {"path": f"{sneaky}/secret.txt"}},
        {"write": {"path": f"{sneaky}/new.txt", "content": "made inside\n"}},
        {"read": {"path": f"{sneaky}/new.txt"}},
    ]
    agent.start([steps], project)
    with round_trips(nvim.api, "symlink then ..") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    missing = error(got[0])
    assert missing["code"] == -32002
    assert missing["data"]["uri"] == (project / "outside" / "secret.txt").as_uri()
    assert "text outside" not in json.dumps(got[0])
    assert result(got[1]) is not None
    assert (project / "outside" / "new.txt").read_text() == "made inside\n"
    assert result(got[2])["content"] == "made inside\n"
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == SECRET
    assert selects(nvim) == []


# Between the host's check and Lua's open (the window a large write queued first keeps open), the folder is
# swapped for a symlink to outside: done here right before fs.read / fs.write run, so the race is certain.
SWAP_BEFORE_OPEN = """
local dir, target = ...
local fs = require('acp_nvim.editor.fs')
for _, name in ipairs({ 'read', 'write' }) do
  local serve = fs[name]
  fs[name] = function(...)
    if not vim.uv.fs_lstat(dir .. '.old') then
      assert(vim.uv.fs_rename(dir, dir .. '.old'))
      assert(vim.uv.fs_symlink(target, dir))
    end
    return serve(...)
  end
end
"""


def test_a_folder_swapped_for_a_symlink_after_the_check(
    nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]
) -> None:
    project, outside = dirs
    (project / "x").mkdir()
    (project / "x" / "secret.txt").write_text("inside\n")
    steps = [
        {"read": {"path": "${CWD}/x/secret.txt"}},
        {"write": {"path": "${CWD}/x/new.txt", "content": "x\n"}},
    ]
    agent.start([steps], project)
    nvim.lua(SWAP_BEFORE_OPEN, str(project / "x"), str(outside))
    with round_trips(nvim.api, "swap after the check") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    assert (project / "x").is_symlink(), "the swap did not happen"
    assert "text outside" not in json.dumps(got)
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == SECRET


def test_dollar_var_in_a_name_is_that_name(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    home = nvim.lua("return vim.env.HOME")
    assert isinstance(home, str) and home.startswith("/")
    literal = project / "notes$HOME.txt"
    literal.write_text("literal name\n")
    # What expanding $HOME would name instead (project/notes/root.txt for HOME=/root).
    decoy = Path(f"{project}/notes{home}.txt")
    decoy.parent.mkdir(parents=True)
    decoy.write_text("decoy\n")
    steps = [
        {"read": {"path": "${CWD}/notes$HOME.txt"}},
        {"write": {"path": "${CWD}/notes$HOME.txt", "content": "rewritten\n"}},
    ]
    agent.start([steps], project)
    with round_trips(nvim.api, "$VAR") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    assert result(got[0])["content"] == "literal name\n"
    assert result(got[1]) is not None
    assert literal.read_text() == "rewritten\n"
    assert decoy.read_text() == "decoy\n"


def test_proc_self_is_refused(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    (project / "secret.txt").write_text("the project's own\n")
    steps = [
        {"read": {"path": "/proc/self/cwd/secret.txt"}},
        {"write": {"path": "/proc/self/cwd/new.txt", "content": "x\n"}},
        {"read": {"path": "/dev/fd/0"}},
        {"terminal": {"command": "pwd", "cwd": "/proc/self/cwd", "then": ["wait", "output"]}},
    ]
    agent.start([steps], project)
    # The user moved on: Neovim's cwd (and its terminals') is now outside, the host's is not.
    nvim.api.command(f"cd {outside}")
    with round_trips(nvim.api, "/proc/self") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    assert len(got) == 4, got
    for entry in got:
        assert error(entry)["code"] == -32602
        assert "relative to a process" in entry["message"]
        assert entry["data"]["reason"] == "process_relative"
    assert not (outside / "new.txt").exists() and not (project / "new.txt").exists()
    assert selects(nvim) == []


def test_always_to_a_read_is_no_yes_to_a_write(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    secret = str(outside / "secret.txt")
    steps = [
        {"read": {"path": secret}},
        {"read": {"path": secret}},
        {"write": {"path": secret, "content": "overwritten\n"}},
        {"read": {"path": "${CWD}/../outside/secret.txt"}},
    ]
    agent.start([steps], project)
    nvim.lua("acp_test.answers = {...}", "always", "deny")
    with round_trips(nvim.api, "always to a read") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    assert result(got[0])["content"] == SECRET
    assert result(got[1])["content"] == SECRET
    refused = error(got[2])
    assert refused["code"] == -32602 and "refused to let the agent write" in refused["message"]
    assert (outside / "secret.txt").read_text() == SECRET
    # `..` written inside the project is an escape, refused without asking although that file is granted.
    escape = error(got[3])
    assert escape["code"] == -32602 and "symlink or '..'" in escape["message"]
    assert escape["data"]["uri"] == (outside / "secret.txt").as_uri()
    asked = selects(nvim)
    assert len(asked) == 2, asked
    assert "read" in asked[0]["prompt"] and "write" in asked[1]["prompt"]


def test_absurd_paths_are_refused_at_once(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    steps = [
        {"read": {"path": "${CWD}" + "/x" * 10_000}},
        {"write": {"path": "${CWD}" + "/x" * 50_000, "content": "x\n"}},
        {"read": {"path": "${CWD}/" + "n" * 256}},
        {"read": {"path": "${CWD}" + "/d" * 300}},
    ]
    agent.start([steps], project)
    with round_trips(nvim.api, "absurd paths") as figures:
        started = time.monotonic()
        got = agent.turn()
        figures["turn_s"] = round(time.monotonic() - started, 2)
    assert len(got) == 4, got
    for entry, why in zip(got, ["PATH_MAX", "PATH_MAX", "NAME_MAX", "components"], strict=True):
        assert error(entry)["code"] == -32602
        assert why in entry["message"] and entry["data"] == {"reason": "path_too_long"}
        assert len(entry["message"]) < 300
    assert list(project.iterdir()) == []
    # Refused in Python before any file system call: Neovim never saw these paths.
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures


def test_a_long_path_given_to_lua_is_linear(nvim: Nvim, tmp_path: Path) -> None:
    # Lua is only ever handed resolved paths, but must not go quadratic on a long one either.
    read = (
        "local t = vim.uv.hrtime() local r = require('acp_nvim.editor.fs').read(...)"
        " return {r, (vim.uv.hrtime() - t) / 1e6}"
    )
    for size in (10_000, 50_000):
        path = str(tmp_path) + "/x" * size
        answer, ms = nvim.lua(read, path, None, None, None)
        print(f"\nLUA-LONG-PATH {size * 2} bytes: {ms:.1f} ms")
        # No buffer holds it: the disk is the host's to read, which refuses it.
        assert answer == {"ok": True, "no_buffer": True}
        with pytest.raises(ReadRefused) as refused:
            read_text(path, 1 << 20)
        assert refused.value.code in (-32002, -32603)
        assert ms < 1000, ms


def test_terminal_cwd_is_checked_and_resolved(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, outside = dirs
    (project / "x" / "y").mkdir(parents=True)
    (project / "l").symlink_to(project / "x" / "y", target_is_directory=True)
    (project / "esc").symlink_to(outside, target_is_directory=True)
    steps = [
        {"terminal": {"command": "pwd", "cwd": "${CWD}/l/..", "then": ["wait", "output"]}},
        {"terminal": {"command": "pwd", "cwd": "${CWD}/esc", "then": ["wait", "output"]}},
    ]
    agent.start([steps], project)
    with round_trips(nvim.api, "terminal cwd") as figures:
        got = agent.turn()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures
    outputs = [e["result"]["output"] for e in got if e["kind"] == "result" and e["call"] == "terminal/output"]
    assert outputs == [f"{(project / 'x').resolve()}\n"], got
    (escape,) = [e for e in got if e["kind"] == "error"]
    assert escape["code"] == -32602 and "symlink or '..'" in escape["message"]
    assert escape["data"]["uri"] == outside.resolve().as_uri()
    assert selects(nvim) == []


def test_a_thousand_buffers_and_a_read(nvim: Nvim, agent: Scripted, dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    many = project / "many"
    many.mkdir()
    for i in range(1000):
        (many / f"f{i}.txt").write_text(f"{i}\n")
    (project / "real.txt").write_text("on disk\n")
    (project / "link.txt").symlink_to(project / "real.txt")
    (project / "plain.txt").write_text("plain\n")
    steps = [{"read": {"path": "${CWD}/plain.txt"}}, {"read": {"path": "${CWD}/real.txt"}}] * 5
    agent.start([steps], project)
    # A session that has been running: the plugin's fs modules were loaded before these buffers.
    nvim.lua("require('acp_nvim.editor.fs')")
    nvim.lua(
        "for _, f in ipairs(...) do"
        " local b = vim.fn.bufadd(f) vim.bo[b].swapfile = false vim.fn.bufload(b) end",
        [str(many / f"f{i}.txt") for i in range(1000)],
    )
    # The user opened the file through the link and edited it: the agent must read that text.
    nvim.api.command(f"edit {project / 'link.txt'}")
    nvim.api.current.buffer[:] = ["unsaved through the link"]
    # Time spent inside fs.read (buffer lookup included), per request.
    nvim.lua(
        "local fs = require('acp_nvim.editor.fs') local read = fs.read _G.acp_read_ms = {}"
        " fs.read = function(...) local t = vim.uv.hrtime() local r = read(...)"
        " table.insert(acp_read_ms, (vim.uv.hrtime() - t) / 1e6) return r end"
    )
    with round_trips(nvim.api, "1000 buffers") as figures:
        got = agent.turn()
    read_ms = nvim.lua("return acp_read_ms")
    figures["read_ms_first"] = round(read_ms[0], 2)
    figures["read_ms_max"] = round(max(read_ms), 2)
    print(f"\nREAD-1000-BUFFERS {json.dumps(figures.figures())}")
    contents = [result(e)["content"] for e in got]
    assert contents == ["plain\n", "unsaved through the link\n"] * 5
    # About 1 ms (the lookup walks the buffer list without a file system call per buffer); the bound is half
    # a frame, with room for a loaded machine.
    assert figures.extra["read_ms_max"] < 8, figures.figures()
    assert figures.max_ms < MAX_ROUND_TRIP_MS, figures

"""Checkpoints (issue 27): every prompt is a restore point of the session's folders, whatever the agent did to
the files. Real git, a real headless Neovim with the plugin, the scripted agent writing through Neovim, on
disk itself and with a terminal's `sed -i`, `rm` and `mkdir`; the project's `.git` checked byte for byte."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.agent_io import Scripted, scripted_config
from tests.nvim.conftest import Nvim, setup_opts

State = dict[str, tuple[str, bytes]]


def state_of(root: Path) -> State:
    """Every file and folder under `root` but `.git`: its kind and mode, and its bytes (a link's target)."""
    found: State = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path).encode())
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", b"")
            else:
                found[rel] = (oct(stat.S_IMODE(info.st_mode)), path.read_bytes())
    return found


def git_bytes(root: Path) -> dict[str, str]:
    """The project's `.git`, every file's hash: no ref, index, hook, config or object may change."""
    found: dict[str, str] = {}
    for folder, _, files in os.walk(root / ".git"):
        for name in files:
            path = Path(folder) / name
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def make_project(root: Path, *, repo: bool = True) -> None:
    (root / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (root / "c.txt").write_text("x marks\nthe spot\n")
    (root / "d.txt").write_text("to be removed\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "data.bin").write_bytes(bytes(range(256)) * 4)
    (root / "link").symlink_to("a.txt")
    (root / "ignored.log").write_text("not ours\n")
    (root / ".gitignore").write_text("*.log\n")
    if repo:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")


def restore(nvim: Nvim, checkpoint: str) -> str:
    before = len(nvim.notes())
    nvim.api.command(f"AcpCheckpoint restore {checkpoint}")
    nvim.wait(
        "#acp_test.notes > args[1] and acp_test.notes[#acp_test.notes].msg:find('restore', 1, true)",
        30,
        before,
    )
    return str(nvim.notes()[-1]["msg"])


def open_buffer(nvim: Nvim, path: Path) -> int:
    nvim.api.command(f"edit {path}")
    return int(nvim.api.current.buffer.number)


def buffer_lines(nvim: Nvim, buf: int) -> list[str]:
    return nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)  # type: ignore[no-any-return]


def three_turns(root: Path) -> list[list[dict[str, Any]]]:
    return [
        # Through Neovim: fs/write_text_file.
        [{"write": {"path": str(root / "a.txt"), "content": "alpha\nBETA\ngamma\n"}}],
        # On disk by the agent itself, a new file in a new folder, the binary file changed, a mode changed.
        [
            {"disk_edit": {"path": str(root / "new" / "deep" / "made.txt"), "content": "made\n"}},
            {"shell": {"command": "printf 'changed' > data.bin && chmod 644 run.sh && ln -sf c.txt link"}},
        ],
        # In a terminal: sed -i, rm, mkdir.
        [
            {
                "terminal": {
                    "command": "sh",
                    "args": [
                        "-c",
                        "sed -i s/x/y/ c.txt && rm d.txt && mkdir -p made/sub && echo n > made/sub/f",
                    ],
                    "cwd": str(root),
                    "then": ["wait", "release"],
                }
            }
        ],
    ]


def run_turns(nvim: Nvim, agent: Scripted, root: Path, count: int) -> list[State]:
    states = []
    for _ in range(count):
        states.append(state_of(root))
        agent.turn()
    states.append(state_of(root))
    return states


@pytest.mark.parametrize("repo", [True, False], ids=["git-project", "plain-folder"])
def test_restore_to_each_checkpoint_in_turn_and_undo_the_restores(
    nvim: Nvim, agent: Scripted, project: Path, repo: bool
) -> None:
    make_project(project, repo=repo)
    dot_git = git_bytes(project) if repo else {}
    agent.start(three_turns(project), project)
    buf = open_buffer(nvim, project / "a.txt")
    states = run_turns(nvim, agent, project, 3)
    # Each turn changed something: the checkpoints differ.
    assert len({repr(sorted(s.items())) for s in states}) == 4
    assert buffer_lines(nvim, buf) == ["alpha", "BETA", "gamma"]

    for turn in (3, 2, 1):
        report = restore(nvim, str(turn))
        assert f"restored to {turn}" in report, report
        assert state_of(project) == states[turn - 1], turn
        assert buffer_lines(nvim, buf) == (project / "a.txt").read_text().splitlines()
        assert nvim.lua("return vim.bo[...].modified", buf) is False
        if repo:
            assert git_bytes(project) == dot_git
    # The ignored file was left alone throughout.
    assert (project / "ignored.log").read_text() == "not ours\n"
    # A restore of a restore: r1 is the state the first restore replaced, the end of turn 3.
    restore(nvim, "r1")
    assert state_of(project) == states[3]
    assert buffer_lines(nvim, buf) == ["alpha", "BETA", "gamma"]
    if repo:
        assert git_bytes(project) == dot_git
        # The user's repository sees the agent's work as its own changes, nothing of ours.
        status = subprocess.run(["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True)
        assert ".acp_nvim" not in status.stdout


def agent_rewrites_line_15(nvim: Nvim, agent: Scripted, project: Path) -> tuple[list[str], int]:
    """f.txt of 20 lines, shown in a buffer; the agent's turn rewrites its line 15 on disk, and the buffer
    follows. The file's first lines, and the buffer."""
    lines = [f"line {n}" for n in range(1, 21)]
    (project / "f.txt").write_text("\n".join(lines) + "\n")
    agent.start(
        [[{"disk_edit": {"path": str(project / "f.txt"), "old": "line 15\n", "new": "AGENT 15\n"}}]], project
    )
    buf = open_buffer(nvim, project / "f.txt")
    agent.turn()
    nvim.wait("vim.api.nvim_buf_get_lines(args[1], 14, 15, false)[1] == 'AGENT 15'", 10, buf)
    return lines, buf


def test_a_restore_merges_into_a_buffer_with_unsaved_edits(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    lines, buf = agent_rewrites_line_15(nvim, agent, project)
    # The user edits line 3 and does not save.
    nvim.lua("vim.api.nvim_buf_set_lines(..., 2, 3, false, {'USER 3'})", buf)
    restore(nvim, "1")
    assert (project / "f.txt").read_text() == "\n".join(lines) + "\n"
    merged = buffer_lines(nvim, buf)
    assert merged[2] == "USER 3"
    assert merged[14] == "line 15"
    assert nvim.lua("return vim.bo[...].modified", buf) is True


def test_a_restores_conflicts_with_unsaved_edits_are_told_once_with_their_file(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    lines, buf = agent_rewrites_line_15(nvim, agent, project)
    # The user rewrites the very line the restore puts back, and does not save.
    nvim.lua("vim.api.nvim_buf_set_lines(..., 14, 15, false, {'USER 15'})", buf)
    before = len(nvim.notes())
    report = restore(nvim, "1")
    told = [n for n in nvim.notes()[before:] if "conflict" in str(n["msg"])]
    assert [n["msg"] for n in told] == [report], told
    assert "1 conflict(s) with unsaved edits in " in report and "f.txt (:AcpConflict)" in report, report
    assert told[0]["level"] == 3
    assert (project / "f.txt").read_text() == "\n".join(lines) + "\n"
    assert "USER 15" in buffer_lines(nvim, buf)


def test_a_restored_file_without_a_final_newline_is_saved_as_it_was(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    (project / "f.txt").write_bytes(b"one\ntwo")
    agent.start([[{"shell": {"command": "printf 'one\\nTWO\\n' > f.txt"}}]], project)
    agent.turn()
    buf = open_buffer(nvim, project / "f.txt")
    assert buffer_lines(nvim, buf) == ["one", "TWO"]
    report = restore(nvim, "1")
    assert "restored to 1" in report, report
    assert buffer_lines(nvim, buf) == ["one", "two"]
    assert nvim.lua("return vim.bo[...].modified", buf) is False
    # Saved as it is shown, the file keeps the bytes the restore gave back: no newline added at its end.
    nvim.api.command(f"{buf}bufdo write")
    assert (project / "f.txt").read_bytes() == b"one\ntwo"


def test_a_clean_buffer_of_a_binary_file_shows_the_restored_bytes(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """A file with NUL bytes is no text to diff: its clean buffer is read again, as Neovim reads it."""
    make_project(project, repo=False)
    agent.start([[{"shell": {"command": "printf 'changed' > data.bin"}}]], project)
    agent.turn()
    buf = open_buffer(nvim, project / "data.bin")
    assert buffer_lines(nvim, buf) == ["changed"]
    report = restore(nvim, "1")
    assert "restored to 1" in report, report
    assert (project / "data.bin").read_bytes() == bytes(range(256)) * 4
    # The bytes 0-255 four times: 10 is a line break, 0 stands in a line as Neovim keeps it (the bytes over
    # 127 are latin1 to Neovim, converted).
    shown = nvim.lua(
        "local lines = vim.api.nvim_buf_get_lines(..., 0, -1, false)"
        " return { #lines, lines[1] == '\\0\\1\\2\\3\\4\\5\\6\\7\\8\\t' }",
        buf,
    )
    assert shown == [5, True], shown
    assert nvim.lua("return vim.bo[...].modified", buf) is False
    assert nvim.errors() == []


def new_neovim(tmp_path: Path) -> Nvim:
    """Another Neovim with the plugin, on the same stdpath folders (the fixture's environment)."""
    import pynvim

    from tests.conftest import NVIM, ROOT
    from tests.nvim.conftest import INSTRUMENT

    argv = [NVIM, "--embed", "--headless", "--clean", "-n", "--cmd", f"set rtp^={ROOT}"]
    session = Nvim(pynvim.attach("child", argv=argv))
    session.lua(INSTRUMENT)
    return session


def test_checkpoints_survive_a_neovim_restart_and_a_session_load(
    nvim: Nvim, agent: Scripted, project: Path, tmp_path: Path
) -> None:
    make_project(project)
    dot_git = git_bytes(project)
    history = [{"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "go"}}]
    scenario: dict[str, Any] = {
        "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
        "session": {"sessionId": "s-keep"},
        "sessions": [{"sessionId": "s-keep", "cwd": str(project), "title": "Kept", "history": history}],
        "echo": False,
        "turns": [[{"shell": {"command": "echo more >> a.txt"}}]],
    }
    path = tmp_path / "restart.json"
    path.write_text(json.dumps(scenario))
    options = setup_opts(tmp_path, agents={"scripted": scripted_config(path)}, default_agent="scripted")
    original = state_of(project)
    assert nvim.lua("return require('acp_nvim').setup(...)", options)
    nvim.api.command(f"cd {project}")
    nvim.lua("require('acp_nvim').start()")
    nvim.wait_state("ready")
    assert nvim.lua("return require('acp_nvim').prompt('go')")
    nvim.wait("vim.fn.readfile(args[1])[4] == 'more'", 20, str(project / "a.txt"))
    nvim.wait_state("ready")
    with contextlib.suppress(Exception):
        nvim.api.command("qa!")

    scenario["session"] = {"sessionId": "s-new"}
    path.write_text(json.dumps(scenario))
    later = new_neovim(tmp_path)
    try:
        assert later.lua("return require('acp_nvim').setup(...)", options)
        later.api.command(f"cd {project}")
        later.lua("require('acp_nvim').start()")
        later.wait_state("ready")
        later.lua("acp_test.answers = { 's-keep' }")
        later.api.command("AcpSessions")
        later.wait("require('acp_nvim').status().session_id == 's-keep'")
        later.wait_chat("go")
        # A checkpoint after the restart: the loaded session's second prompt.
        after_first = state_of(project)
        assert later.lua("return require('acp_nvim').prompt('again')")
        later.wait("#vim.fn.readfile(args[1]) == 5", 20, str(project / "a.txt"))
        later.wait_state("ready")
        # Both are listed for the loaded session; the older one is chosen.
        later.lua("acp_test.answers = { '0' }")
        before = len(later.notes())
        later.api.command("AcpCheckpoint")
        later.wait("#acp_test.notes > args[1]", 30, before)
        (picker,) = [s for s in later.lua("return acp_test.selects") if s["prompt"] == "Restore a checkpoint"]
        assert picker["items"][0].startswith("turn 2 ·") and picker["items"][0].endswith(
            "1 file changed since"
        )
        assert picker["items"][1].startswith("turn 1 ·") and " · go · " in picker["items"][1]
        assert state_of(project) == original, later.notes()
        restore(later, "2")
        assert state_of(project) == after_first
        assert git_bytes(project) == dot_git
    finally:
        with contextlib.suppress(Exception):
            later.api.command("qa!")


def test_the_chat_key_on_a_prompt_offers_its_restore(nvim: Nvim, agent: Scripted, project: Path) -> None:
    make_project(project)
    agent.start(three_turns(project)[:2], project)
    states = run_turns(nvim, agent, project, 2)
    nvim.api.command("AcpChat")
    nvim.api.command("stopinsert")
    nvim.lua(
        "local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]\n"
        "vim.api.nvim_set_current_win(vim.fn.bufwinid(chat.buf))"
    )
    nvim.wait("vim.bo.filetype == 'acp_nvim_chat'", 10)
    headers = [n for n, line in enumerate(nvim.chat_lines(), 1) if line.startswith("▍ You")]
    assert len(headers) == 2
    # The second prompt's header: its checkpoint is the state before turn 2.
    nvim.api.current.window.cursor = (headers[1], 0)
    nvim.lua("acp_test.answers = { 'restore' }")
    before = len(nvim.notes())
    nvim.api.command("normal \\ac")
    nvim.wait("#acp_test.notes > args[1]", 30, before)
    offer = nvim.lua("return acp_test.selects")[-1]
    assert offer["items"] == [
        "Restore the files to before turn 2",
        "Show what a restore would change (quickfix)",
    ]
    assert "restored to 2" in nvim.notes()[-1]["msg"]
    assert state_of(project) == states[1]
    # The restore is said in the chat too.
    nvim.wait_chat("restored to 2")


def test_diff_lists_what_a_restore_would_change_as_a_quickfix_diff(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    make_project(project)
    agent.start(three_turns(project)[2:], project)
    agent.turn()
    nvim.api.command("AcpCheckpoint diff 1")
    nvim.wait("vim.fn.getqflist({title = 0}).title:find('restore to 1', 1, true) ~= nil", 30)
    items = nvim.lua(
        "return vim.tbl_map(function(i) return {vim.fn.bufname(i.bufnr), i.text} end, vim.fn.getqflist())"
    )
    by_name = {Path(name).name: text for name, text in items}
    assert by_name == {
        "c.txt": "changed since: a restore puts it back",
        "d.txt": "deleted since: a restore brings it back",
        "f": "created since: a restore removes it",
    }
    # Nothing was restored by looking.
    assert not (project / "d.txt").exists()
    row = 1 + [Path(name).name for name, _ in items].index("c.txt")
    nvim.api.command("stopinsert")
    nvim.api.command(f"copen | {row}")
    nvim.api.input("<CR>")
    nvim.wait("#vim.tbl_filter(function(w) return vim.wo[w].diff end, vim.api.nvim_list_wins()) == 2")
    shown = nvim.lua(
        "return vim.tbl_map(function(w) return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, 1,"
        " false)[1] end, vim.tbl_filter(function(w) return vim.wo[w].diff end, vim.api.nvim_list_wins()))"
    )
    assert sorted(shown) == ["x marks", "y marks"]


def test_checkhealth_reports_git_and_the_store(nvim: Nvim, agent: Scripted, project: Path) -> None:
    make_project(project)
    agent.start(three_turns(project)[:1], project)
    agent.turn()
    nvim.api.command("checkhealth acp_nvim")
    report = "\n".join(nvim.api.current.buffer[:])
    assert "Checkpoints" in report and "git: " in report, report
    assert "acp_nvim/checkpoints" in report and " MiB" in report, report


def test_without_git_the_feature_says_so_once_and_prompts_still_go(
    nvim: Nvim, agent: Scripted, project: Path, tmp_path: Path
) -> None:
    make_project(project, repo=False)
    # The host finds no git on its PATH: a folder with the agent's interpreter only.
    bare = tmp_path / "bin"
    bare.mkdir()
    nvim.lua("vim.env.PATH = ...", str(bare))
    agent.start([[{"write": {"path": str(project / "a.txt"), "content": "new\n"}}], []], project)
    agent.turn()
    agent.turn()
    assert (project / "a.txt").read_text() == "new\n"
    said = [n["msg"] for n in nvim.notes() if "git is not installed" in n["msg"]]
    assert len(said) == 1, nvim.notes()


def test_the_demo_agents_turns_are_restored_one_by_one(nvim: Nvim, project: Path, tmp_path: Path) -> None:
    make_project(project)
    (project / "hello.py").write_text('print("hi")\n')
    git(project, "add", "-A")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "hello")
    dot_git = git_bytes(project)
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"demo": {"env": {"ACP_DEMO_DELAY_MS": "0"}}}),
    )
    nvim.api.command(f"cd {project}")
    nvim.api.command("AcpStart demo")
    nvim.wait_state("ready")
    buf = open_buffer(nvim, project / "hello.py")
    states = []
    for prompt in ("first", "second"):
        states.append(state_of(project))
        # The tour asks to edit (allowed), writes hello.py through Neovim, runs a command in a terminal.
        nvim.lua("acp_test.answers = { 'allow' }")
        nvim.lua("require('acp_nvim').prompt(...)", prompt)
        nvim.wait_state("running", 10)
        nvim.wait_state("ready", 30)
    states.append(state_of(project))
    assert (project / "hello.py").read_text().count("Edited by the acp.nvim demo agent") == 2
    for turn in (2, 1):
        restore(nvim, str(turn))
        assert state_of(project) == states[turn - 1]
        assert buffer_lines(nvim, buf) == (project / "hello.py").read_text().splitlines()
        assert git_bytes(project) == dot_git


def test_an_ended_chats_checkpoints_still_restore_after_acpstop(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    make_project(project)
    agent.start(three_turns(project)[2:], project)
    before = state_of(project)
    agent.turn()
    session_id = nvim.status()["session_id"]
    nvim.lua("require('acp_nvim').stop()")
    nvim.wait_state("stopped")
    # From the ended chat: its session is gone from the agent, its checkpoints are not.
    nvim.lua("vim.api.nvim_set_current_buf(require('acp_nvim.ui.chat').chats[...].buf)", session_id)
    report = restore(nvim, "1")
    assert "restored to 1" in report, report
    assert state_of(project) == before


def test_a_restore_the_moment_the_turn_ends_finds_its_checkpoint(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    """The checkpoint's commits and record are written while the prompt goes (issue 31): a restore asked the
    moment the agent ends its turn (at once here) waits for them, and restores."""
    (project / "a.txt").write_text("before\n")
    agent.start([[]], project)
    nvim.lua(
        """
        local path = ...
        vim.api.nvim_create_autocmd('User', { pattern = 'AcpNvimTurnEnd', once = true, callback = function()
          local file = io.open(path, 'w'); file:write('after\\n'); file:close()
          vim.cmd('AcpCheckpoint restore 1')
        end })
        """,
        str(project / "a.txt"),
    )
    agent.turn()
    nvim.wait("vim.iter(acp_test.notes):any(function(n) return n.msg:find('restore', 1, true) end)", 30)
    report = next(n["msg"] for n in nvim.notes() if "restore" in n["msg"])
    assert "restored to 1: 1 written" in report, nvim.notes()
    assert (project / "a.txt").read_text() == "before\n"

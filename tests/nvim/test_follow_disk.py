"""Edits the agent makes on disk itself (as codex-acp and claude-agent-acp do), followed into Neovim and put
in the review: the scripted agent on the Python SDK writes the files and reports tool calls, a real headless
Neovim shows the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.harness import wait_until
from tests.nvim.agent_io import Scripted, scripted_config
from tests.nvim.conftest import Nvim, setup_opts

# Tool call completed (or the file changed, for an edit no tool call names) -> buffer updated.
FOLLOW_DEADLINE_S = 0.2

LINES = [f"line {i}" for i in range(1, 61)]
ORIGINAL = "\n".join(LINES) + "\n"

# Records, in Neovim, the wall-clock time of the first change of a buffer (the agent journals its own).
CHANGE_CLOCK = """
local buf = ...
acp_test.changed_at = nil
vim.api.nvim_buf_attach(buf, false, {
  on_lines = function()
    if acp_test.changed_at == nil then
      local sec, usec = vim.uv.gettimeofday()
      acp_test.changed_at = sec + usec / 1e6
    end
  end,
})
"""


def edited(*changes: tuple[int, str]) -> str:
    lines = list(LINES)
    for index, text in changes:
        lines[index] = text
    return "\n".join(lines) + "\n"


def begin_turn(nvim: Nvim, agent: Scripted) -> None:
    """Prompts without waiting for the turn's end (the scenario holds it open until cancelled)."""
    assert nvim.lua("return require('acp_nvim').prompt('go')"), nvim.notes()
    agent.turns_done += 1
    nvim.wait_state("running")


def end_turn(nvim: Nvim, agent: Scripted) -> None:
    nvim.lua("require('acp_nvim').cancel()")
    wait_until(lambda: agent.turn_ends() >= agent.turns_done, 20, "the turn to end")
    nvim.wait_state("ready")


def journaled(agent: Scripted, kind: str) -> dict[str, Any]:
    wait_until(lambda: any(e["kind"] == kind for e in agent.entries()), 20, f"the agent's {kind}")
    return next(e for e in agent.entries() if e["kind"] == kind)


def open_file(nvim: Nvim, path: Path) -> int:
    nvim.api.command(f"edit {path}")
    return int(nvim.api.current.buffer.number)


def lines(nvim: Nvim, buf: int) -> list[str]:
    return nvim.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)  # type: ignore[no-any-return]


def hunks(nvim: Nvim) -> list[dict[str, Any]]:
    return nvim.lua("return require('acp_nvim.editor.review').hunks()")  # type: ignore[no-any-return]


def wait_hunks(nvim: Nvim, count: int) -> None:
    nvim.wait("#require('acp_nvim.editor.review').hunks() == args[1]", 10, count)


def wait_line(nvim: Nvim, buf: int, row: int, text: str) -> None:
    nvim.wait(
        "vim.api.nvim_buf_get_lines(args[1], args[2], args[2] + 1, false)[1] == args[3]", 10, buf, row, text
    )


def users_text_kept(nvim: Nvim, buf: int, ours: tuple[int, str], theirs: tuple[int, str]) -> None:
    """The agent's edit of a buffer with unsaved edits is merged: both sides' changes, which do not overlap,
    are in the buffer, still modified."""
    wait_line(nvim, buf, theirs[0], theirs[1])
    assert lines(nvim, buf) == edited(ours, theirs).splitlines()
    assert nvim.lua("return vim.bo[...].modified", buf) is True


def test_clean_buffer_follows_a_codex_edit_keeping_cursor_view_marks_folds(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f = project / "a.py"
    f.write_text(ORIGINAL)
    new = edited((49, "CHANGED 50"), (55, "CHANGED 56"))
    turn = [{"disk_edit": {"path": str(f), "content": new, "toolCallId": "e1"}}, {"sleep_until_cancel": True}]
    agent.start([turn], project)
    buf = open_file(nvim, f)
    nvim.api.command("setlocal foldmethod=manual")
    nvim.api.command("3,5fold")
    nvim.api.current.window.cursor = (20, 3)
    nvim.lua("vim.api.nvim_buf_set_mark(..., 'a', 30, 2, {})", buf)
    view = nvim.lua("return vim.fn.winsaveview()")
    nvim.lua(CHANGE_CLOCK, buf)

    begin_turn(nvim, agent)
    wait_line(nvim, buf, 49, "CHANGED 50")
    # Followed when the tool call completed: the turn is still running.
    assert nvim.state() == "running"
    done = journaled(agent, "disk_edit")
    assert nvim.lua("return acp_test.changed_at") - done["completedAt"] < FOLLOW_DEADLINE_S

    assert lines(nvim, buf) == new.splitlines()
    assert nvim.lua("return vim.bo[...].modified", buf) is False
    assert nvim.api.current.window.cursor == (20, 3)
    assert nvim.lua("return vim.fn.winsaveview()") == view
    assert nvim.lua("return vim.api.nvim_buf_get_mark(..., 'a')", buf) == [30, 2]
    assert nvim.lua("return vim.fn.foldclosed(3)") == 3
    assert [(h["lnum"], h["tool_call_id"]) for h in hunks(nvim)] == [(50, "e1"), (56, "e1")]

    # One undo step for the tool call; the file stays Neovim's own (no "changed on disk" on :w).
    nvim.api.command("undo")
    assert lines(nvim, buf) == LINES
    nvim.api.command("redo")
    nvim.api.command("write")
    assert f.read_text() == new
    end_turn(nvim, agent)
    assert nvim.errors() == []


def test_reject_restores_disk_and_buffer(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "a.py"
    f.write_text(ORIGINAL)
    step = {"disk_edit": {"path": str(f), "old": "line 7\n", "new": "SEVEN\n", "style": "claude"}}
    agent.start([[step]], project)
    buf = open_file(nvim, f)
    agent.turn()
    wait_line(nvim, buf, 6, "SEVEN")
    (hunk,) = hunks(nvim)
    assert hunk["old"] == ["line 7"]
    nvim.api.command("AcpReview reject")
    assert f.read_text() == ORIGINAL
    assert lines(nvim, buf) == LINES
    assert hunks(nvim) == []


def test_file_not_loaded_is_reviewable(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "b.txt"
    f.write_bytes(b"keep\nold\nno newline")
    agent.start([[{"disk_edit": {"path": str(f), "old": "old", "new": "NEW"}}]], project)
    agent.turn()
    assert f.read_bytes() == b"keep\nNEW\nno newline"
    wait_hunks(nvim, 1)
    (hunk,) = hunks(nvim)
    assert (hunk["path"], hunk["lnum"], hunk["old"]) == (str(f), 2, ["old"])
    # Not shown to the user: a hidden buffer holds the review.
    assert nvim.lua("return vim.bo[...].buflisted", hunk["bufnr"]) is False
    nvim.api.command("AcpReview reject")
    assert f.read_bytes() == b"keep\nold\nno newline"


def test_previous_text_of_a_call_reported_only_after_the_write_comes_from_its_diff(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f = project / "c.txt"
    f.write_text(ORIGINAL)
    agent.start(
        [[{"disk_edit": {"path": str(f), "old": "line 3\n", "new": "THREE\n", "style": "late"}}]], project
    )
    agent.turn()
    wait_hunks(nvim, 1)
    (hunk,) = hunks(nvim)
    assert (hunk["lnum"], hunk["old"]) == (3, ["line 3"])
    nvim.api.command("AcpReview reject")
    assert f.read_text() == ORIGINAL


def test_new_file_is_reviewable_and_reject_removes_it(nvim: Nvim, agent: Scripted, project: Path) -> None:
    made = project / "pkg" / "made.py"
    agent.start(
        [[{"disk_edit": {"path": str(made), "content": "print('hi')\n", "style": "claude"}}]], project
    )
    agent.turn()
    assert made.read_text() == "print('hi')\n"
    wait_hunks(nvim, 1)
    files = nvim.lua("return require('acp_nvim.editor.review').files()")
    assert [(x["path"], x["created"]) for x in files] == [(str(made), True)]
    nvim.api.command("AcpReview reject")
    assert not made.exists()


def test_modified_buffer_keeps_every_unsaved_edit(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "a.py"
    f.write_text(ORIGINAL)
    new = edited((49, "AGENT 50"))
    agent.start([[{"disk_edit": {"path": str(f), "content": new}}]], project)
    buf = open_file(nvim, f)
    nvim.api.current.buffer[1] = "USER 2"
    agent.turn()
    assert f.read_text() == new
    users_text_kept(nvim, buf, (1, "USER 2"), (49, "AGENT 50"))


def test_unnamed_shell_edit_is_caught_by_the_watcher(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "s.txt"
    f.write_text(ORIGINAL)
    turn = [{"shell": {"command": "sed -i 's/^line 12$/SED 12/' s.txt", "toolCallId": "x1"}}]
    agent.start([[*turn, {"sleep_until_cancel": True}]], project)
    buf = open_file(nvim, f)
    nvim.api.current.window.cursor = (40, 0)
    nvim.lua(CHANGE_CLOCK, buf)
    begin_turn(nvim, agent)
    wait_line(nvim, buf, 11, "SED 12")
    assert nvim.state() == "running"
    exited = journaled(agent, "shell")
    assert nvim.lua("return acp_test.changed_at") - exited["exitedAt"] < FOLLOW_DEADLINE_S
    assert lines(nvim, buf) == edited((11, "SED 12")).splitlines()
    assert nvim.api.current.window.cursor == (40, 0)
    (hunk,) = hunks(nvim)
    assert (hunk["lnum"], hunk["old"]) == (12, ["line 12"])
    end_turn(nvim, agent)
    nvim.api.command("AcpReview reject")
    assert f.read_text() == ORIGINAL


def test_previous_text_comes_from_the_snapshot_taken_when_the_call_started(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f = project / "d.txt"
    f.write_text("a\nb\na\n")
    # The diff ("b" -> "a") cannot say where it went: only the snapshot knows the previous text.
    step = {"disk_edit": {"path": str(f), "old": "b", "new": "a", "style": "claude", "permission": True}}
    agent.start([[step]], project)
    nvim.lua("acp_test.answers = {'allow'}")
    agent.turn()
    assert f.read_text() == "a\na\na\n"
    wait_hunks(nvim, 1)
    (hunk,) = hunks(nvim)
    assert (hunk["lnum"], hunk["old"]) == (2, ["b"])
    nvim.api.command("AcpReview reject")
    assert f.read_text() == "a\nb\na\n"


def test_edits_outside_the_session_roots_are_not_followed(
    nvim: Nvim, agent: Scripted, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("x\n")
    agent.start([[{"disk_edit": {"path": str(outside), "content": "y\n"}}, {"text": "done"}]], project)
    agent.turn()
    nvim.wait_chat("done")
    assert outside.read_text() == "y\n"
    assert hunks(nvim) == []


def test_unnamed_edit_of_a_modified_buffer_keeps_the_users_text(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f = project / "m.txt"
    f.write_text(ORIGINAL)
    turn = [{"shell": {"command": "sed -i 's/^line 50$/SED 50/' m.txt"}}, {"sleep_until_cancel": True}]
    agent.start([turn], project)
    buf = open_file(nvim, f)
    nvim.api.current.buffer[1] = "USER 2"
    begin_turn(nvim, agent)
    journaled(agent, "shell")
    # Merged against the disk's text kept when the turn began.
    users_text_kept(nvim, buf, (1, "USER 2"), (49, "SED 50"))
    end_turn(nvim, agent)
    assert f.read_text() == edited((49, "SED 50"))


def test_each_tool_call_is_one_undo_step(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "u.txt"
    f.write_text(ORIGINAL)
    steps = [
        {"disk_edit": {"path": str(f), "old": "line 5\n", "new": "FIVE\n", "toolCallId": "c1"}},
        # As a model takes its time between two calls: each is followed on its own.
        {"sleep": 300},
        {"disk_edit": {"path": str(f), "old": "line 40\n", "new": "FORTY\n", "toolCallId": "c2"}},
    ]
    agent.start([steps], project)
    buf = open_file(nvim, f)
    agent.turn()
    wait_line(nvim, buf, 39, "FORTY")
    assert sorted((h["lnum"], h["tool_call_id"]) for h in hunks(nvim)) == [(5, "c1"), (40, "c2")]
    nvim.api.command("undo")
    assert lines(nvim, buf) == edited((4, "FIVE")).splitlines()
    nvim.api.command("undo")
    assert lines(nvim, buf) == LINES


def test_an_edit_reported_after_the_write_is_merged_with_the_text_kept_at_turn_start(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    # Reported only once written, with a fragment whose new text occurs more than once in the file: the tool
    # call cannot tell what the file held before, so the disk text kept when the turn began is the base.
    f = project / "a.py"
    f.write_text(ORIGINAL)
    late = {"path": str(f), "old": "line 50", "new": "line 1", "style": "late"}
    agent.start([[{"disk_edit": late}], [{"text": "second"}]], project)
    buf = open_file(nvim, f)
    nvim.api.current.buffer[1] = "USER 2"
    agent.turn()
    wait_line(nvim, buf, 49, "line 1")
    agent.turn()
    nvim.wait_chat("second")
    assert lines(nvim, buf) == edited((1, "USER 2"), (49, "line 1")).splitlines()
    assert nvim.lua("return vim.bo[...].modified", buf) is True
    assert [n for n in nvim.notes() if "unsaved" in n["msg"] or "conflict" in n["msg"]] == []


def test_a_follow_queued_before_the_turn_ends_keeps_the_turns_base(nvim: Nvim, project: Path) -> None:
    """The follow of a tool call that completed just before its turn ended runs on a later tick, after the
    turn's end took the watch down: it merges on the base of its turn, not "left as it is" for want of one
    (the late-edit test above lost it 9 runs in 10 once the turn's end carried one Lua call more)."""
    f = project / "b.py"
    f.write_text(ORIGINAL)
    buf = open_file(nvim, f)
    nvim.api.current.buffer[1] = "USER 2"
    nvim.lua(
        "local watch = require('acp_nvim.editor.fs.disk_watch')\n"
        "watch.before_prompt()\n"
        "watch.watch('s1', { select(1, ...) }, os.time() - 1)",
        str(project),
    )
    f.write_text(edited((49, "line 1")))
    # As the host sends them at a turn's end: the completed call's follow, then the watch's end, in one call.
    nvim.lua(
        "require('acp_nvim.editor.fs.follow_disk').apply('s1', 'call-1', { { path = select(1, ...) } })\n"
        "require('acp_nvim.editor.fs.disk_watch').unwatch('s1', true)",
        str(f),
    )
    wait_line(nvim, buf, 49, "line 1")
    assert lines(nvim, buf) == edited((1, "USER 2"), (49, "line 1")).splitlines()
    assert [n for n in nvim.notes() if "unsaved" in n["msg"] or "conflict" in n["msg"]] == []


def test_follow_shows_the_file_the_agent_edited_on_disk(nvim: Nvim, agent: Scripted, project: Path) -> None:
    f = project / "shown.txt"
    f.write_text(ORIGINAL)
    agent.start(
        [[{"disk_edit": {"path": str(f), "old": "line 33\n", "new": "THIRTY-THREE\n"}}]], project, follow=True
    )
    agent.turn()
    nvim.wait(
        "(function() for _, w in ipairs(vim.api.nvim_list_wins()) do"
        " if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) == args[1]"
        " and vim.api.nvim_win_get_cursor(w)[1] == 33 then return true end end end)()",
        10,
        str(f.resolve()),
    )


def opencode_edit(
    agent: Scripted, nvim: Nvim, project: Path, old: str, new: str, hold_ms: int = 0
) -> tuple[Path, int]:
    """A file open in a buffer that the agent, as opencode does, edits on disk itself and then (after
    `hold_ms`) sends `fs/write_text_file` with the same text for; the turn is not sent yet."""
    f = project / "o.txt"
    f.write_text(ORIGINAL)
    step = {
        "path": str(f),
        "old": old,
        "new": new,
        "style": "opencode",
        "toolCallId": "o1",
        "holdMs": hold_ms,
    }
    agent.start([[{"disk_edit": step}]], project)
    return f, open_file(nvim, f)


def fs_write_succeeded(agent: Scripted) -> None:
    (answer,) = [e for e in agent.entries() if e.get("call") == "fs/write_text_file"]
    assert answer["kind"] == "result", answer


def no_warnings(nvim: Nvim) -> None:
    """Nothing is wrong when the agent writes what the disk already holds: no word of it to the user."""
    assert [n["msg"] for n in nvim.notes() if (n["level"] or 0) >= 3] == []


def test_a_write_of_what_the_agent_already_put_on_disk_succeeds_and_the_clean_buffer_follows(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f, buf = opencode_edit(agent, nvim, project, "line 30\n", "THIRTY\n")
    agent.turn()
    fs_write_succeeded(agent)
    wait_line(nvim, buf, 29, "THIRTY")
    assert lines(nvim, buf) == edited((29, "THIRTY")).splitlines()
    assert nvim.lua("return vim.bo[...].modified", buf) is False
    assert f.read_text() == edited((29, "THIRTY"))
    (hunk,) = hunks(nvim)
    assert (hunk["lnum"], hunk["old"]) == (30, ["line 30"])
    no_warnings(nvim)


def test_a_write_of_what_the_agent_already_put_on_disk_is_merged_with_unsaved_edits(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f, buf = opencode_edit(agent, nvim, project, "line 50\n", "FIFTY\n")
    nvim.api.current.buffer[1] = "USER 2"
    agent.turn()
    fs_write_succeeded(agent)
    assert f.read_text() == edited((49, "FIFTY"))
    # Merged against the disk's text from before the agent's own write: the agent's line is not taken for the
    # user's, and the user's is kept.
    users_text_kept(nvim, buf, (1, "USER 2"), (49, "FIFTY"))
    assert [h["lnum"] for h in hunks(nvim)] == [50]
    no_warnings(nvim)


def test_unsaved_edits_made_after_the_agent_wrote_the_disk_are_merged_when_its_tool_call_ends(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    # The buffer gets the user's edit only once the agent's own write is on disk: no text from before that
    # write was kept for it, so the write through Neovim leaves the buffer to the tool call's end, whose
    # snapshot knows the text before.
    f, buf = opencode_edit(agent, nvim, project, "line 50\n", "FIFTY\n", hold_ms=1000)
    begin_turn(nvim, agent)
    wait_until(lambda: f.read_text() == edited((49, "FIFTY")), 20, "the agent's own write")
    nvim.api.buffers[buf][1] = "USER 2"
    journaled(agent, "disk_edit")
    fs_write_succeeded(agent)
    users_text_kept(nvim, buf, (1, "USER 2"), (49, "FIFTY"))
    assert f.read_text() == edited((49, "FIFTY"))
    # Reviewable as the tool call's edit (the write through Neovim names no tool call).
    assert [(h["lnum"], h.get("tool_call_id")) for h in hunks(nvim)] == [(50, "o1")]
    no_warnings(nvim)
    wait_until(lambda: agent.turn_ends() >= agent.turns_done, 20, "the turn to end")


# Logs every host -> Neovim message once `acp_test.counting` is set: each is a Lua chunk (source "<nvim>")
# whose first act is a require (a batch, host/batch.lua, is one message of several calls); the entry points
# called are logged in the message they came in. The test's own chunks require nothing while it counts.
HOST_CALLS = """
acp_test.host_calls, acp_test.counting, acp_test.first_chat = {}, false, nil
local inside = false
local real_require = require
_G.require = function(name)
  local info = debug.getinfo(2, "S")
  if acp_test.counting and info ~= nil and info.source == "<nvim>" then
    table.insert(acp_test.host_calls, {})
  end
  return real_require(name)
end
for module, names in pairs({
  ["acp_nvim.ui.chat"] = { "apply_json" },
  ["acp_nvim.ui.status"] = { "set" },
  ["acp_nvim.editor.fs.disk_watch"] = { "watch", "unwatch" },
}) do
  local m = real_require(module)
  for _, name in ipairs(names) do
    local real = m[name]
    m[name] = function(...)
      -- Only what the host called: watch() itself ends an earlier watch through M.unwatch.
      local message = acp_test.host_calls[#acp_test.host_calls]
      if message ~= nil and not inside then
        table.insert(message, module .. "." .. name)
      end
      local outer = inside
      inside = true
      local ok, result = pcall(real, ...)
      inside = outer
      if not ok then
        error(result, 0)
      end
      if name == "apply_json" and acp_test.first_chat == nil then
        -- What the turn's first chat call showed (drawn within the call: it is small).
        acp_test.first_chat = m.lines((...))
      end
      return result
    end
  end
end
"""


def test_the_prompt_and_the_disk_watch_go_in_the_turns_first_call_its_end_in_the_last(
    nvim: Nvim, agent: Scripted, project: Path
) -> None:
    f = project / "w.txt"
    f.write_text(ORIGINAL)
    agent.start([[{"text": "watched"}]], project)
    open_file(nvim, f)
    nvim.lua(HOST_CALLS)
    nvim.lua("local acp = require('acp_nvim'); acp_test.counting = true; acp.prompt('go')")
    wait_until(lambda: agent.turn_ends() >= 1, 20, "the turn to end")
    watch = "acp_nvim.editor.fs.disk_watch.watch"
    unwatch = "acp_nvim.editor.fs.disk_watch.unwatch"
    chat = "acp_nvim.ui.chat.apply_json"
    status = "acp_nvim.ui.status.set"

    def calls() -> list[list[str]]:
        messages: list[list[str]] = nvim.lua("return acp_test.host_calls")
        return messages

    # Nothing comes after the watch's end: it goes with the turn's last status.
    messages = wait_until(lambda: [m for m in calls() if unwatch in m] and calls(), 10, "the watch's end")
    nvim.lua("acp_test.counting = false")
    # The watch starts in the call that shows the prompt, before it (the prompt used to wait for the watch's
    # own round trip); it ends in the turn's last call, with the status that says the turn ended.
    (first,) = [m for m in messages if watch in m]
    assert messages.index(first) == 0 and first.index(watch) < first.index(chat), messages
    (last,) = [m for m in messages if unwatch in m]
    assert messages.index(last) == len(messages) - 1 and status in last, messages
    # The prompt shown, at most the agent's words alone, and the turn's end.
    assert len(messages) <= 3, messages
    # Shown at once, before it went to the agent: the agent's words cannot be in that call.
    shown: list[str] = nvim.lua("return acp_test.first_chat")
    assert "go" in shown and not any("watched" in line for line in shown), shown
    nvim.wait_state("ready")
    nvim.wait_chat("watched")
    sid = nvim.status()["session_id"]
    assert nvim.lua("return require('acp_nvim.editor.fs.disk_watch').watching(...)", sid) is False


def test_a_loaded_sessions_edits_are_replayed_not_followed(nvim: Nvim, tmp_path: Path, project: Path) -> None:
    """session/load replays the history's tool calls: their edits were made then, not now. None is put in
    the review or brought into a buffer (a file not loaded stays so), not even at the end of the next turn,
    and unsaved edits stay."""
    f, other = project / "a.py", project / "b.txt"
    new = edited((6, "SEVEN"))
    f.write_text(new)
    other.write_text("NEW\n")
    history = [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "edit it"}},
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "old-e1",
            "title": "Edit a.py",
            "kind": "edit",
            "status": "completed",
            "locations": [{"path": str(f)}],
            # The diff's new text is the file now: a live call would be followed with the old text before.
            "content": [{"type": "diff", "path": str(f), "oldText": ORIGINAL, "newText": new}],
        },
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "old-e3",
            "title": "Edit b.txt",
            "kind": "edit",
            "status": "completed",
            "locations": [{"path": str(other)}],
            "content": [{"type": "diff", "path": str(other), "oldText": "old\n", "newText": "NEW\n"}],
        },
        # Interrupted then: never ended.
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "old-e2",
            "title": "Edit a.py again",
            "kind": "edit",
            "status": "in_progress",
            "locations": [{"path": str(f)}],
        },
    ]
    scenario = {
        "echo": False,
        "agentCapabilities": {"loadSession": True, "sessionCapabilities": {"list": {}}},
        "sessions": [
            {
                "sessionId": "old-1",
                "cwd": str(project),
                "title": "Yesterday",
                "updatedAt": "2025-01-01T10:00:00Z",
                "history": history,
            }
        ],
        "turns": [[{"text": "ok"}]],
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    options = setup_opts(tmp_path, agents={"s": scripted_config(path)}, default_agent="s")
    assert nvim.lua("return require('acp_nvim').setup(...)", options), nvim.notes()
    nvim.api.command(f"cd {project}")
    buf = open_file(nvim, f)
    nvim.lua("vim.api.nvim_buf_set_lines(..., 0, 1, true, { 'MINE' })", buf)
    nvim.lua("require('acp_nvim').start()")
    nvim.wait_state("ready")
    nvim.lua("acp_test.answers = { 'old-1' }")
    nvim.api.command("AcpSessions")
    nvim.wait("require('acp_nvim').status().session_id == 'old-1'")
    nvim.wait_state("ready")
    nvim.wait_chat("Edit a.py again")
    assert nvim.lua("return require('acp_nvim').prompt('go')"), nvim.notes()
    nvim.wait_chat("ok")
    nvim.wait_state("ready")
    assert hunks(nvim) == []
    assert lines(nvim, buf) == edited((0, "MINE"), (6, "SEVEN")).splitlines()
    assert nvim.lua("return vim.bo[...].modified", buf) is True
    assert (f.read_text(), other.read_text()) == (new, "NEW\n")
    assert nvim.lua("return vim.fn.bufnr(...)", str(other)) == -1
    assert nvim.errors() == []

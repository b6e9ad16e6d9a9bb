"""Which files an agent's tool calls name, what they held before, and when they are handed to the editor
(acp_nvim/client/files/agent_edits.py), on real files; the editor is a recorder of the calls it gets."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import acp_nvim.client.files.agent_edits as agent_edits_module
from acp_nvim.client.files.agent_edits import (
    AgentEdits,
    FileEdit,
    before_from_diff,
    named_paths,
    read_snapshot,
)
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s


class Recorder:
    def __init__(self) -> None:
        self.follows: list[tuple[str, str | None, list[FileEdit]]] = []
        self.watches: list[tuple[str, list[str]]] = []
        self.unwatches: list[str] = []

    def follow_edits(self, session_id: str, tool_call_id: str | None, files: list[FileEdit]) -> None:
        self.follows.append((session_id, tool_call_id, files))

    def watch_disk(self, session_id: str, roots: list[str], since: float) -> None:
        self.watches.append((session_id, roots))

    def unwatch_disk(self, session_id: str) -> None:
        self.unwatches.append(session_id)

    def show_edited(self, path: str) -> None:
        raise AssertionError("shown without follow = true")


def update(raw: dict[str, Any]) -> s.SessionUpdate:
    message = json.dumps({"sessionId": "s1", "update": raw}).encode()
    return codec.decode_session_update(message).update


def edits(tmp_path: Path) -> tuple[AgentEdits, Recorder]:
    recorder = Recorder()
    roots = {"s1": [str(tmp_path)]}
    return AgentEdits(recorder, roots.get, lambda: 1 << 20), recorder


def test_paths_from_locations_diffs_raw_input_and_patch_text(tmp_path: Path) -> None:
    patch = (
        "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x\n+y\n*** Add File: new.txt\n+hi\n*** End Patch"
    )
    call = update(
        {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "edit",
            "locations": [{"path": f"{tmp_path}/loc.txt"}],
            "content": [{"type": "diff", "path": f"{tmp_path}/diff.txt", "newText": "x"}],
            "rawInput": {
                "file_path": "rel/claude.py",
                "changes": {f"{tmp_path}/codex.rs": {"type": "update"}},
                "input": patch,
            },
        }
    )
    assert isinstance(call, s.SessionUpdateToolCall)
    assert named_paths(call, str(tmp_path)) == [
        f"{tmp_path}/loc.txt",
        f"{tmp_path}/diff.txt",
        f"{tmp_path}/rel/claude.py",
        f"{tmp_path}/codex.rs",
        f"{tmp_path}/src/a.py",
        f"{tmp_path}/new.txt",
    ]


def test_previous_text_from_a_diff_only_when_it_is_certain() -> None:
    # The whole file: its new text is what is on disk.
    assert before_from_diff("a\nb\n", "a\nB\n", b"a\nB\n") is not None
    whole = before_from_diff("a\nb\n", "a\nB\n", b"a\nB\n")
    assert whole is not None and whole.data == b"a\nb\n"
    created = before_from_diff(None, "new\n", b"new\n")
    assert created is not None and created.absent
    # A fragment put in one place only.
    fragment = before_from_diff("old", "NEW", b"keep\nNEW\nkeep\n")
    assert fragment is not None and fragment.data == b"keep\nold\nkeep\n"
    # Ambiguous or unrelated: unknown, never guessed.
    assert before_from_diff("b", "a", b"a\na\na\n") is None
    assert before_from_diff("x", "y", b"nothing like it\n") is None


def test_a_fifo_named_by_the_agent_is_not_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert read_snapshot(str(fifo), 1 << 20) is None
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    assert read_snapshot(str(big), 99) is None
    missing = read_snapshot(str(tmp_path / "missing"), 10)
    assert missing is not None and missing.absent


def test_snapshot_at_start_followed_at_completion(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\n")
    agent_edits, recorder = edits(tmp_path)
    start = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "status": "pending"}
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(f)}]}))
    assert agent_edits.pending("s1") == {str(f)}
    f.write_text("two\n")
    agent_edits.on_update(
        "s1", update({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"})
    )
    assert recorder.follows == [("s1", "t1", [FileEdit(str(f), known=True, before=b"one\n")])]
    assert agent_edits.pending("s1") == set()


def test_reads_files_outside_roots_and_unknown_sessions_are_not_followed(tmp_path: Path) -> None:
    inside, outside = tmp_path / "in.txt", tmp_path.parent / f"{tmp_path.name}-out.txt"
    inside.write_text("same\n")
    outside.write_text("x\n")
    agent_edits, recorder = edits(tmp_path)
    for session in ("s1", "other"):
        locations = [{"path": str(inside)}, {"path": str(outside)}]
        start = {
            "sessionUpdate": "tool_call",
            "toolCallId": "t",
            "title": "R",
            "kind": "read",
            "locations": locations,
        }
        agent_edits.on_update(session, update(start))
    outside.write_text("y\n")
    for session in ("s1", "other"):
        done = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
        agent_edits.on_update(session, update(done))
    assert recorder.follows == []


def test_an_edit_whose_snapshot_came_too_late_is_left_to_the_buffer(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("already written\n")
    agent_edits, recorder = edits(tmp_path)
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "E",
        "kind": "edit",
        "status": "pending",
    }
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(f)}]}))
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
    agent_edits.on_update("s1", update(done))
    # Unknown previous text: only a loaded buffer can tell whether (and what) the agent changed.
    assert recorder.follows == [("s1", "t", [FileEdit(str(f), known=False)])]


def test_calls_that_never_end_are_followed_at_the_end_of_the_turn(tmp_path: Path) -> None:
    f = tmp_path / "new.txt"
    agent_edits, recorder = edits(tmp_path)
    agent_edits.turn_started("s1")
    start = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "W", "status": "in_progress"}
    agent_edits.on_update("s1", update({**start, "rawInput": {"path": str(f)}}))
    f.write_text("made\n")
    agent_edits.turn_ended("s1")
    assert recorder.watches == [("s1", [str(tmp_path)])]
    assert recorder.follows == [("s1", "t", [FileEdit(str(f), known=True, absent=True)])]
    assert recorder.unwatches == ["s1"]


def test_watcher_reports_wait_for_the_tool_call_that_names_the_file(tmp_path: Path) -> None:
    named, other = tmp_path / "named.txt", tmp_path / "other.txt"
    named.write_text("a\n")
    other.write_text("b\n")
    agent_edits, recorder = edits(tmp_path)
    start = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "E", "status": "in_progress"}
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(named)}]}))
    agent_edits.disk_changed("s1", [str(named), str(other), "relative.txt"])
    assert recorder.follows == [("s1", None, [FileEdit(str(other), known=False)])]


def test_snapshots_of_a_session_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_edits_module, "MAX_SNAPSHOT_BYTES", 150)
    files = [tmp_path / f"f{i}.txt" for i in range(3)]
    for f in files:
        f.write_bytes(b"x" * 60)
    agent_edits, recorder = edits(tmp_path)
    start = {"sessionUpdate": "tool_call", "toolCallId": "t", "title": "E", "status": "pending"}
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(f)} for f in files]}))
    for f in files:
        f.write_bytes(b"y" * 60)
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
    agent_edits.on_update("s1", update(done))
    # Two snapshots fit; the third file's previous text is unknown.
    (_, _, followed) = recorder.follows[0]
    assert [f.known for f in followed] == [True, True, False]


def test_a_file_first_named_by_an_update_without_status_is_snapshotted(tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("one\n")
    agent_edits, recorder = edits(tmp_path)
    # As claude-agent-acp: the call starts with no input yet; an update names the file; then it completes.
    agent_edits.on_update(
        "s1", update({"sessionUpdate": "tool_call", "toolCallId": "t", "title": "Edit", "rawInput": {}})
    )
    named = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "rawInput": {"file_path": str(f)}}
    agent_edits.on_update("s1", update(named))
    f.write_text("two\n")
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "completed"}
    agent_edits.on_update("s1", update(done))
    assert recorder.follows == [("s1", "t", [FileEdit(str(f), known=True, before=b"one\n")])]


def test_a_failed_call_that_wrote_is_followed_too(tmp_path: Path) -> None:
    f = tmp_path / "half.txt"
    f.write_text("before\n")
    agent_edits, recorder = edits(tmp_path)
    start = {
        "sessionUpdate": "tool_call",
        "toolCallId": "t",
        "title": "E",
        "kind": "edit",
        "status": "in_progress",
    }
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(f)}]}))
    f.write_text("half written\n")
    failed = {"sessionUpdate": "tool_call_update", "toolCallId": "t", "status": "failed"}
    agent_edits.on_update("s1", update(failed))
    assert recorder.follows == [("s1", "t", [FileEdit(str(f), known=True, before=b"before\n")])]


@pytest.mark.parametrize("made", ["file", "folder"])
def test_a_file_that_became_a_link_out_of_the_roots_during_its_call_is_not_followed(
    tmp_path: Path, made: str
) -> None:
    """Checked in the roots when the call started; made a link out (the file, or its folder) before it
    completed: nothing of the file it leads to is read or handed to the editor."""
    root, outside = tmp_path / "project", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "a.txt").write_text("secret\n")
    f = root / "sub" / "a.txt"
    f.write_text("one\n")
    recorder = Recorder()
    agent_edits = AgentEdits(recorder, {"s1": [str(root)]}.get, lambda: 1 << 20)
    start = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "status": "pending"}
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(f)}]}))
    assert agent_edits.pending("s1") == {str(f)}
    if made == "file":
        f.unlink()
        f.symlink_to(outside / "a.txt")
    else:
        (root / "sub").rename(root / "moved")
        (root / "sub").symlink_to(outside, target_is_directory=True)
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
    agent_edits.on_update("s1", update(done))
    assert recorder.follows == []
    assert read_snapshot(str(f), 100, [str(root)]) is None
    assert read_snapshot(str(f), 100) == agent_edits_module._Snapshot(absent=False, data=b"secret\n")


def test_a_link_inside_the_roots_is_followed_with_its_real_path(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("one\n")
    (tmp_path / "link.txt").symlink_to(real)
    agent_edits, recorder = edits(tmp_path)
    start = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Edit", "status": "pending"}
    agent_edits.on_update("s1", update({**start, "locations": [{"path": str(tmp_path / "link.txt")}]}))
    real.write_text("two\n")
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}
    agent_edits.on_update("s1", update(done))
    edit = FileEdit(str(tmp_path / "link.txt"), known=True, before=b"one\n", real=str(real))
    assert recorder.follows == [("s1", "t1", [edit])]


def followed_edit(tmp_path: Path, at_start: str, at_end: str) -> list[tuple[str, str | None, list[FileEdit]]]:
    """The follow of an edit tool call whose file held `at_start` when the call began and `at_end` when it
    completed, its diff saying "two" became "FIFTY"."""
    f = tmp_path / "o.txt"
    f.write_text(at_start)
    agent_edits, recorder = edits(tmp_path)
    start = {"sessionUpdate": "tool_call", "toolCallId": "o1", "title": "Edit", "status": "pending"}
    agent_edits.on_update("s1", update({**start, "kind": "edit", "locations": [{"path": str(f)}]}))
    f.write_text(at_end)
    diff = {"type": "diff", "path": str(f), "oldText": "two\n", "newText": "FIFTY\n"}
    done = {"sessionUpdate": "tool_call_update", "toolCallId": "o1", "status": "completed", "content": [diff]}
    agent_edits.on_update("s1", update(done))
    return recorder.follows


def test_a_snapshot_caught_mid_write_gives_way_to_the_diff(tmp_path: Path) -> None:
    """An agent writing in place (truncate, then write) can be snapshotted while the file is empty: the
    snapshot lacks the text the call's diff says it replaced, so the text before comes from the diff, not
    from an empty file that would make a merge see every line as changed."""
    follows = followed_edit(tmp_path, "", "one\nFIFTY\nthree\n")
    f = str(tmp_path / "o.txt")
    assert follows == [("s1", "o1", [FileEdit(f, known=True, before=b"one\ntwo\nthree\n")])]


def test_a_snapshot_is_kept_when_it_holds_what_the_diff_replaced(tmp_path: Path) -> None:
    # Two places hold the new text at the end: the diff alone could not say which was the edit.
    follows = followed_edit(tmp_path, "one\ntwo\nthree\n", "one\nFIFTY\nthree\nFIFTY\n")
    f = str(tmp_path / "o.txt")
    assert follows == [("s1", "o1", [FileEdit(f, known=True, before=b"one\ntwo\nthree\n")])]

"""Edits an agent makes on disk itself, known from its tool calls: what each file held before, and when to
follow it into the editor.

Agents such as codex-acp and claude-agent-acp write files themselves and only report tool calls. A tool
call names the files it touches in its `locations`, its `diff` content and its `rawInput` (an Edit's
`file_path`, an apply_patch's `changes` or patch text). When such a call starts (pending or in progress), the
bytes of every file it names are snapshotted (or "absent"), so the text before the agent wrote is known; when
it ends (completed or failed), and at the end of the turn for calls that never ended, the files whose bytes
changed are handed to the editor (`FollowSink.follow_edits`) with that previous text. A call that arrives
already completed has no snapshot: the previous text then comes from its diff (the whole file when the diff's
new text is what is on disk now, or the one place the new text was put), or is unknown (the editor then has
only the buffer, if the file has one).

Edits no tool call names (an agent's `sed -i` in its own shell) are caught by the editor's watcher of the
files loaded under the session roots while a turn runs; it reports them (`disk_changed`) and they are followed
the same way, unless a running tool call names the file: its end follows it, with its snapshot.

Only files under the session's roots are followed, and only regular files up to `max_bytes`: the agent's
tool calls are untrusted input and must not make the client read devices or huge files. The roots are checked
when a call starts and again, on the file opened, when it ends: an agent that turns the file (or a folder on
its path) into a link out of the roots during its call gets nothing of the file it points to read, followed
or reviewed. The editor checks the real path it is given once more right before it reads.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Protocol

import msgspec

from acp_nvim.client.files.snapshot_fit import fits_diff
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.agent_edits")

# A tool call naming more files than this is followed for its first ones only.
MAX_PATHS_PER_CALL = 64

# The most bytes of snapshots one session keeps (its running tool calls' files): an agent naming many large
# files must not make the host hold them all.
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024

# Keys of `rawInput` that agents use for the one file an edit tool touches.
PATH_KEYS = ("path", "file_path", "filePath", "filepath", "file", "target_file", "notebook_path", "abs_path")
# Keys whose value is a list of paths, or a mapping keyed by path (codex-acp's apply_patch `changes`).
PATHS_KEYS = ("paths", "files", "changes")
# apply_patch text: `*** Update File: path` and its kin.
PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)

# Kinds of tool calls that change no file: their files are neither snapshotted nor followed (an agent that
# misreports one is still caught by the editor's watcher).
READ_ONLY_KINDS = ("read", "search", "fetch", "think")

# How much older than the turn a file's modification time may look and still be the agent's: Linux stamps
# files from a clock that lags the one the turn's start is read from by up to a tick (1-10 ms).
MTIME_SLACK_S = 0.02

STARTED = ("pending", "in_progress")
ENDED = ("completed", "failed")


# The updates that can name files: the only ones `AgentEdits.on_update` looks at.
TOOL_CALL_UPDATES = (s.SessionUpdateToolCall, s.SessionUpdateToolCallUpdate)


class FileEdit(msgspec.Struct, frozen=True):
    """One file for the editor to follow. `known`: `before` is the file's previous content (`absent`: there
    was no file); unknown, only a loaded buffer can say what was there. `real`: the real path found inside
    the roots when it is not `path` itself; the editor reads the file only while `path` still resolves to
    it."""

    path: str
    known: bool
    absent: bool = False
    before: bytes = b""
    real: str = ""


class FollowSink(Protocol):
    """What the editor does with the decisions made here."""

    def follow_edits(self, session_id: str, tool_call_id: str | None, files: list[FileEdit]) -> None: ...

    def watch_disk(self, session_id: str, roots: list[str], since: float) -> None: ...

    def unwatch_disk(self, session_id: str) -> None: ...

    def show_edited(self, path: str) -> None: ...


class _Snapshot(msgspec.Struct):
    absent: bool
    data: bytes = b""
    # The real path of the file read, when it was checked against the roots.
    real: str = ""


class _Call(msgspec.Struct):
    kind: str | None = None
    paths: list[str] = msgspec.field(default_factory=list)
    snapshots: dict[str, _Snapshot] = msgspec.field(default_factory=dict)
    # path -> (oldText, newText) of the call's diff content.
    diffs: dict[str, tuple[str | None, str]] = msgspec.field(default_factory=dict)


class _TooLarge(Exception):
    pass


def read_snapshot(path: str, max_bytes: int, roots: Sequence[str] | None = None) -> _Snapshot | None:
    """The file's bytes, "absent", or None when it cannot be snapshotted (not a regular file, too large,
    unreadable, or, given the real `roots`, not inside them). Opened non-blocking: a FIFO named by an agent
    must not hold the client."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        return _Snapshot(absent=True)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        real = ""
        if roots is not None:
            real = _opened_path(fd, path, st)
            if not _under(real, roots):
                log.warning("not reading %s: it is %s, out of the session's folders", path, real)
                return None
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise _TooLarge
            chunks.append(chunk)
        return _Snapshot(absent=False, data=b"".join(chunks), real=real)
    except (OSError, _TooLarge):
        return None
    finally:
        os.close(fd)


def _patch_paths(text: str) -> Iterable[str]:
    for match in PATCH_FILE.finditer(text):
        yield match.group(1) or match.group(2)


def _raw_input_paths(raw: object) -> Iterable[str]:
    if not isinstance(raw, dict):
        return
    for key in PATH_KEYS:
        value = raw.get(key)
        if isinstance(value, str):
            yield value
    for key in PATHS_KEYS:
        value = raw.get(key)
        if isinstance(value, dict):
            yield from (k for k in value if isinstance(k, str))
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, str):
                    yield item
                elif isinstance(item, dict) and isinstance(item.get("path"), str):
                    yield item["path"]
    for key in ("patch", "input"):
        value = raw.get(key)
        if isinstance(value, str) and "*** " in value:
            yield from _patch_paths(value)


def named_paths(call: s.ToolCall | s.ToolCallUpdate, cwd: str) -> list[str]:
    """The absolute, normalized paths a tool call names, in the order named, each once. Relative paths are
    taken from the call's `rawInput.cwd` or the session's cwd."""
    raw = call.raw_input
    base = cwd
    if isinstance(raw, dict) and isinstance(raw.get("cwd"), str) and os.path.isabs(raw["cwd"]):
        base = raw["cwd"]
    names: list[str] = []
    names.extend(loc.path for loc in call.locations or [])
    names.extend(item.path for item in call.content or [] if isinstance(item, s.ToolCallContentDiff))
    names.extend(_raw_input_paths(raw))
    out: list[str] = []
    for name in names:
        if not name or "\0" in name:
            continue
        path = os.path.normpath(
            os.path.join(base, os.path.expanduser(name) if name.startswith("~/") else name)
        )
        if path not in out:
            out.append(path)
        if len(out) >= MAX_PATHS_PER_CALL:
            break
    return out


def before_from_diff(old_text: str | None, new_text: str, now: bytes) -> _Snapshot | None:
    """The file's previous content from a diff: exact when the diff's new text is the whole file now (then
    its old text is the whole file before; none means it was created), or when the new text occurs exactly
    once in the file (then the old text was there). Anything else is unknown, never guessed."""
    try:
        current = now.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if current == new_text or current.replace("\r\n", "\n") == new_text:
        if old_text is None:
            return _Snapshot(absent=True)
        return _Snapshot(absent=False, data=old_text.encode("utf-8"))
    if old_text is None or not new_text or current.count(new_text) != 1:
        return None
    return _Snapshot(absent=False, data=current.replace(new_text, old_text, 1).encode("utf-8"))


def _opened_path(fd: int, path: str, opened: os.stat_result) -> str:
    """The real path of the file open at `fd` (opened as `path`): Linux names it (one readlink, whatever
    links were on the way when it was opened); elsewhere `path` resolved now, "" unless that is still the
    file opened (a link made on its way between the open and the look)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
    real = os.path.realpath(path)
    try:
        now = os.stat(real)
    except OSError:
        return ""
    return real if (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino) else ""


def _same(a: _Snapshot, b: _Snapshot) -> bool:
    return a.absent == b.absent and a.data == b.data


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


@lru_cache(maxsize=64)
def _realpaths(roots: tuple[str, ...]) -> tuple[str, ...]:
    """The roots' real paths, looked up once per set of roots: a `realpath` is a system call per component,
    and every tool call update asked for them (15% of the host's time in a replay of 10,000 updates). A root
    is a session's folder: its path does not turn into another one while the session runs."""
    return tuple(os.path.realpath(root) for root in roots)


class AgentEdits:
    """The tool calls of every session, their snapshots, and when their files are followed."""

    def __init__(
        self,
        sink: FollowSink,
        roots: Callable[[str], list[str] | None],
        max_bytes: Callable[[], int],
        show: Callable[[], bool] = lambda: False,
    ) -> None:
        self._sink = sink
        self._roots = roots
        self._max_bytes = max_bytes
        # `follow = true`: the editor shows the first file of each followed edit.
        self._show = show
        # session id -> tool call id -> call
        self._calls: dict[str, dict[str, _Call]] = {}
        # session id -> the bytes of its calls' snapshots, a running total: summed on every update, 2,000
        # calls running at once were quadratic
        self._kept: dict[str, int] = {}

    def _drop(self, session_id: str, tool_call_id: str) -> None:
        call = self._calls[session_id].pop(tool_call_id)
        self._kept[session_id] = self._kept.get(session_id, 0) - sum(
            len(s.data) for s in call.snapshots.values()
        )

    def _real_roots(self, session_id: str) -> tuple[str, ...] | None:
        roots = self._roots(session_id)
        if roots is None:
            return None
        return _realpaths(tuple(roots))

    def on_update(self, session_id: str, update: s.SessionUpdate) -> None:
        if not isinstance(update, TOOL_CALL_UPDATES):
            return
        roots = self._real_roots(session_id)
        if not roots:
            return
        calls = self._calls.setdefault(session_id, {})
        call = calls.get(update.tool_call_id)
        paths = [p for p in named_paths(update, roots[0]) if _under(os.path.realpath(p), roots)]
        if call is None:
            if not paths:
                return
            call = calls[update.tool_call_id] = _Call()
        call.kind = update.kind or call.kind
        for path in paths:
            if path not in call.paths and len(call.paths) < MAX_PATHS_PER_CALL:
                call.paths.append(path)
        for item in update.content or []:
            if isinstance(item, s.ToolCallContentDiff) and item.path in call.paths:
                call.diffs[item.path] = (item.old_text, item.new_text)
        # No status: a new call is pending, an update keeps the call's (which has not ended, or the call would
        # be gone); claude-agent-acp names the file only in an update after the call began.
        status = update.status
        if call.kind in READ_ONLY_KINDS:
            if status in ENDED:
                self._drop(session_id, update.tool_call_id)
        elif status is None or status in STARTED:
            kept = self._kept.get(session_id, 0)
            for path in call.paths:
                if path not in call.snapshots:
                    snap = read_snapshot(path, min(self._max_bytes(), MAX_SNAPSHOT_BYTES - kept), roots)
                    if snap is not None:
                        call.snapshots[path] = snap
                        kept += len(snap.data)
            self._kept[session_id] = kept
        elif status in ENDED:
            self._drop(session_id, update.tool_call_id)
            self._follow(session_id, update.tool_call_id, call)

    def _follow(self, session_id: str, tool_call_id: str | None, call: _Call) -> None:
        roots = self._real_roots(session_id)
        if call.kind in READ_ONLY_KINDS or not roots:
            return
        limit = self._max_bytes()
        files: list[FileEdit] = []
        for path in call.paths:
            # The roots again, on the file as it is now: the call may have made it a link out of them.
            now = read_snapshot(path, limit, roots)
            if now is None:
                continue
            if now.absent:
                # Deleted by the agent: a buffer keeps its text (the user's to save or drop).
                continue
            before, diff = call.snapshots.get(path), call.diffs.get(path)
            # No snapshot, one taken too late (an agent may write before its tool call reaches us), or one
            # read mid-write (snapshot_fit.py).
            if before is None or _same(before, now) or not fits_diff(before.absent, before.data, diff):
                before = before_from_diff(*diff, now.data) if diff is not None else None
            real = "" if now.real == path else now.real
            if before is not None and not _same(before, now):
                files.append(FileEdit(path, known=True, absent=before.absent, before=before.data, real=real))
            else:
                # Unknown: a loaded buffer still knows (the editor sees whether its file changed).
                files.append(FileEdit(path, known=False, real=real))
        log.debug("tool call %s ended: follow %s", tool_call_id, [(f.path, f.known) for f in files])
        if files:
            self._sink.follow_edits(session_id, tool_call_id, files)
            if self._show():
                self._sink.show_edited(files[0].path)

    def turn_started(self, session_id: str) -> None:
        """Before the prompt goes out: the watch (and the disk text it keeps of modified buffers) is asked
        for without waiting, in the same call to the editor as the turn's first change, which goes before the
        prompt. `since` (now) tells an edit the agent made before the watch began, had it been that quick,
        from one made before the turn: the former is followed, the latter is not the agent's."""
        roots = self._roots(session_id)
        if roots:
            self._sink.watch_disk(session_id, roots, time.time() - MTIME_SLACK_S)

    def turn_ended(self, session_id: str) -> None:
        """Calls that never ended are followed now; the watcher's last look reports what else changed."""
        calls = self._calls.pop(session_id, {})
        self._kept.pop(session_id, None)
        for tool_call_id, call in calls.items():
            self._follow(session_id, tool_call_id, call)
        self._sink.unwatch_disk(session_id)

    def pending(self, session_id: str) -> set[str]:
        """The paths named by the session's tool calls that have not ended."""
        calls = self._calls.get(session_id, {}).values()
        return {path for call in calls if call.kind not in READ_ONLY_KINDS for path in call.paths}

    def disk_changed(self, session_id: str, paths: list[str]) -> None:
        """The watcher saw these loaded files change; a running tool call that names one follows it itself."""
        roots = self._real_roots(session_id)
        if roots is None:
            return
        pending = {os.path.realpath(p) for p in self.pending(session_id)}
        files = [
            FileEdit(path, known=False, real="" if real == path else real)
            for path in dict.fromkeys(p for p in paths if isinstance(p, str) and os.path.isabs(p))
            for real in (os.path.realpath(path),)
            if real not in pending and _under(real, roots)
        ]
        if files:
            self._sink.follow_edits(session_id, None, files)

    def forget(self, session_id: str) -> None:
        self._kept.pop(session_id, None)
        with contextlib.suppress(KeyError):
            del self._calls[session_id]

"""Checkpoints: every prompt is a restore point of the session's folders, whatever the agent does to them.

A checkpoint is the state of the folders *on disk* just before the agent gets the prompt (unsaved buffers are
not in it: a restore merges into them). Its content is fixed by `take` before the prompt leaves (every
folder's tree written), the commits that keep it and its record after, while the agent works (a command
waits for them); `:AcpCheckpoint` lists, restores and diffs them (`command`). The snapshots are a shadow
git repository's (`client/files/shadow_git.py`), the files put back by `client/files/restore_files.py`, the
loaded buffers updated by Lua (`NeovimPort.checkpoint`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence

import anyio
import msgspec

from acp_nvim.app.checkpoints.restore import Snapshots
from acp_nvim.app.checkpoints.store import Checkpoint, SessionRecord, Store, digest
from acp_nvim.app.config.options import CheckpointOptions
from acp_nvim.app.port import ERROR, INFO, WARN, Choice, NeovimPort, Spawn
from acp_nvim.app.runs import ChatSession, Runs
from acp_nvim.client.files.shadow_git import GitError, git_path
from acp_nvim.client.session.transcript import MessageItem

log = logging.getLogger("acp_nvim.checkpoints")

NO_GIT = "checkpoints are off: git is not installed (everything else works; see :checkhealth acp_nvim)"
USAGE = "usage: :AcpCheckpoint [restore {n} | diff {n}] (n: a turn, or r1, r2... for a restore's)"
NONE_YET = "this session has no checkpoints yet: each prompt makes one"


def turn_of(session: ChatSession, item_key: str | None = None) -> tuple[int, str]:
    """A prompt's turn number, its place among the session's prompts (1 = the first, the replayed ones
    included), and its text; without `item_key`, the last prompt's."""
    turn, text = 0, ""
    for item in session.state.items:
        if isinstance(item, MessageItem) and item.role == "user":
            turn, text = turn + 1, item.text
            if item.key == item_key:
                return turn, text
    return (turn, text) if item_key is None else (0, "")


def first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= 60 else line[:59] + "…"


class Checkpoints:
    def __init__(self, runs: Runs, port: NeovimPort) -> None:
        self._runs = runs
        self._port = port
        self.store: Store | None = None
        self._options: Callable[[], CheckpointOptions] = CheckpointOptions
        self._spawn: Spawn | None = None
        self._shadows: Snapshots | None = None
        self._git: str | None = None
        self._looked_for_git = False
        self._told: set[str] = set()
        # The last checkpoint taken, set once it is recorded.
        self._last: anyio.Event | None = None

    def attach(self, root: str, options: Callable[[], CheckpointOptions], spawn: Spawn | None = None) -> None:
        self.store, self._options, self._spawn = Store(root), options, spawn

    # ---- taking ----------------------------------------------------------------------------------------

    def _git_or_tell(self) -> str | None:
        if not self._looked_for_git:
            self._git, self._looked_for_git = git_path(), True
        if self._git is None:
            self._tell_once(NO_GIT)
        return self._git

    def _tell_once(self, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            self._port.notify(message, WARN)

    def folders(self, session: ChatSession) -> list[str]:
        """The session's folders that can be snapshot: never the home folder or the root (a snapshot of
        everything the user has)."""
        home = os.path.realpath(os.path.expanduser("~"))
        found: list[str] = []
        for folder in [session.cwd, *session.directories]:
            real = os.path.realpath(folder)
            if real in found or not os.path.isdir(real):
                continue
            if real in (home, os.path.dirname(real)):
                self._tell_once(f"no checkpoints of {folder}: it is the home folder or the root")
                continue
            found.append(real)
        return found

    def _snapshots(self, git: str) -> Snapshots:
        assert self.store is not None
        if self._shadows is None or self._shadows.git != git:
            self._shadows = Snapshots(self.store, git, self._options, self._spawn)
        return self._shadows

    async def take(self, session: ChatSession) -> None:
        """The checkpoint before the session's last prompt, its content fixed when this returns: every
        folder's tree written. The commits that keep it and its record are made after, in a task of its own,
        while the prompt goes (`settled` waits for them). A failure is said and the prompt goes all the
        same."""
        if not self._options().enabled or self.store is None:
            return
        git = self._git_or_tell()
        if git is None:
            return
        store, (turn, prompt) = self.store, turn_of(session)
        folders, session_id = self.folders(session), session.session_id
        snapshots, written, done = self._snapshots(git), anyio.Event(), anyio.Event()
        # One after the other: each adds to the record the one before saved.
        before, self._last = self._last, done

        async def checkpoint() -> None:
            try:
                if before is not None:
                    await before.wait()
                record = store.load(session_id) or SessionRecord(session_id=session_id, folders=[])
                record.folders = folders
                await snapshots.take(record, str(turn), turn, "prompt", first_line(prompt), written)
            except (GitError, OSError) as err:
                log.warning("checkpoint before turn %d failed: %s", turn, err)
                self._port.notify(f"no checkpoint before turn {turn}: {err}", WARN)
            except Exception as err:
                # A task of its own: what it did not foresee is said, and ends neither the prompt nor the host
                log.exception("checkpoint before turn %d failed", turn)
                self._port.notify(f"no checkpoint before turn {turn}: {err}", WARN)
            finally:
                written.set()
                done.set()

        if self._spawn is None:
            await checkpoint()
        else:
            self._spawn(checkpoint)
            await written.wait()

    async def settled(self) -> None:
        """Every checkpoint taken so far recorded (its commits and record written after the prompt went)."""
        if self._last is not None:
            await self._last.wait()

    # ---- :AcpCheckpoint ----------------------------------------------------------------------------------

    def _record(self, session_id: str | None) -> tuple[SessionRecord | None, ChatSession | None]:
        """The checkpoints a command is for: the chat's session (running, or ended: its record stays)."""
        current = self._runs.current(session_id)
        session = current.session
        wanted = session.session_id if session is not None else session_id
        if self.store is None or not wanted:
            self._port.notify(current.missing or NONE_YET, WARN)
            return None, session
        record = self.store.load(wanted)
        if record is None or not record.checkpoints:
            self._port.notify(NONE_YET, INFO)
            return None, session
        return record, session

    async def command(self, session_id: str | None, args: Sequence[str]) -> None:
        git = self._git_or_tell()
        if git is None:
            return
        # A checkpoint just taken is listed, and a restore waits for its commits.
        await self.settled()
        record, session = self._record(session_id)
        if record is None:
            return
        shadows = self._snapshots(git)
        if not args:
            try:
                chosen = await self._pick(shadows, record)
            except (GitError, OSError) as err:
                # (Another Neovim holding the folder past the deadline, too.)
                self._port.notify(f"no checkpoints listed: {err}", ERROR)
                return
            if chosen is not None:
                await self._restore(shadows, record, chosen, session)
            return
        action, wanted = args[0], (args[1] if len(args) > 1 else "")
        if action == "offer" and session is not None:
            wanted = str(turn_of(session, wanted)[0])
        checkpoint = next((c for c in reversed(record.checkpoints) if c.id == wanted), None)
        if action not in ("restore", "diff", "offer") or not wanted:
            self._port.notify(USAGE, WARN)
        elif checkpoint is None:
            self._port.notify(f"no checkpoint {wanted} in this session (:AcpCheckpoint lists them)", WARN)
        elif action == "restore":
            await self._restore(shadows, record, checkpoint, session)
        elif action == "diff":
            await self._diff(shadows, record, checkpoint)
        else:
            await self._offer(shadows, record, checkpoint, session)

    async def _restore(
        self, shadows: Snapshots, record: SessionRecord, checkpoint: Checkpoint, session: ChatSession | None
    ) -> None:
        if session is not None and session.in_turn:
            self._port.notify("the agent is working: cancel its turn (:AcpCancel) before a restore", WARN)
            return
        try:
            text, level = await shadows.restore(record, checkpoint, self._port)
        except (GitError, OSError) as err:
            log.warning("restore to %s failed: %s", checkpoint.id, err)
            self._port.notify(f"no restore to {checkpoint.id}: {err} (nothing was changed)", ERROR)
            return
        self._port.notify(text, level)
        if session is not None:
            session.state.add_notice(text, "info" if level == INFO else "warning")
            session.chat.flush()

    async def _diff(self, shadows: Snapshots, record: SessionRecord, checkpoint: Checkpoint) -> None:
        try:
            count = await shadows.diff(
                record, checkpoint, self.diff_folder(record.session_id, checkpoint.id), self._port
            )
        except (GitError, OSError) as err:
            self._port.notify(f"no diff to {checkpoint.id}: {err}", ERROR)
            return
        if count == 0:
            self._port.notify(f"nothing changed since {checkpoint.id}: a restore would change no file", INFO)

    async def _pick(self, shadows: Snapshots, record: SessionRecord) -> Checkpoint | None:
        counts = await shadows.changed_counts(record)
        choices = [
            Choice(id=str(n), label=label(checkpoint, counts.get(checkpoint.id)))
            for n, checkpoint in enumerate(record.checkpoints)
        ]
        chosen = await self._port.select("Restore a checkpoint", choices[::-1], "acp_nvim.checkpoints")
        return record.checkpoints[int(chosen)] if chosen is not None and chosen.isdigit() else None

    async def _offer(
        self, shadows: Snapshots, record: SessionRecord, checkpoint: Checkpoint, session: ChatSession | None
    ) -> None:
        choices = [
            Choice(id="restore", label=f"Restore the files to {describe(checkpoint)}"),
            Choice(id="diff", label="Show what a restore would change (quickfix)"),
        ]
        chosen = await self._port.select(label(checkpoint, None), choices, "acp_nvim.checkpoints")
        if chosen == "restore":
            await self._restore(shadows, record, checkpoint, session)
        elif chosen == "diff":
            await self._diff(shadows, record, checkpoint)

    def diff_folder(self, session_id: str, checkpoint_id: str) -> str:
        assert self.store is not None
        return os.path.join(self.store.root, "diff", digest(session_id), checkpoint_id)


def describe(checkpoint: Checkpoint) -> str:
    if checkpoint.kind == "restore":
        return f"as they were before restore {checkpoint.id[1:]}"
    return f"before turn {checkpoint.turn}"


def label(checkpoint: Checkpoint, changed: int | None) -> str:
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(checkpoint.time))
    head = f"turn {checkpoint.turn}" if checkpoint.kind == "prompt" else f"{checkpoint.id} (before a restore)"
    since = "" if changed is None else f" · {changed} file{'s' if changed != 1 else ''} changed since"
    return f"{head} · {when} · {checkpoint.title}{since}"


class CheckpointHealth(msgspec.Struct, frozen=True):
    """:checkhealth's facts of the checkpoints: git (None: not found), its version, the store, its size."""

    git: str | None
    git_version: str | None
    root: str
    bytes: int


def health(root: str) -> CheckpointHealth:
    """:checkhealth's facts: git, and the store's size."""
    from acp_nvim.app.checkpoints.store import size_of

    git = git_path()
    version = None
    if git is not None:
        import subprocess

        try:
            version = subprocess.run(
                [git, "--version"], capture_output=True, text=True, timeout=5
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            version = None
    return CheckpointHealth(git, version, root, size_of(root) if os.path.isdir(root) else 0)

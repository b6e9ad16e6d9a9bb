"""The checkpoints' snapshots, restores and diffs over the session's folders, one shadow repository each
(`client/files/shadow_git.py`), a folder's operations one at a time (a restore and a snapshot never
interleave).

A restore first takes a checkpoint of the state it replaces (so that it can be undone), then puts back every
file that differs (`client/files/restore_files.py`), then has Lua show the restored text in the loaded buffers
(merged into those with unsaved edits). Files a snapshot left out (over the size limit, unreadable) are named
and left as they are, and so are the nested repositories (of now or of the checkpoint): `_restorable` is that
one decision, shared by the restore, its diff and the picker's count of the files it would change.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from collections.abc import Callable

import anyio

from acp_nvim.app.checkpoints.store import Checkpoint, SessionRecord, Store, pruned
from acp_nvim.app.config.options import CheckpointOptions
from acp_nvim.app.port import (
    ERROR,
    INFO,
    WARN,
    CheckpointBuffers,
    CheckpointQuickfix,
    NeovimPort,
    QuickfixItem,
    Spawn,
)
from acp_nvim.client.files import restore_files
from acp_nvim.client.files.shadow_git import (
    EMPTY_TREE,
    GITLINK,
    Change,
    GitError,
    Known,
    ShadowRepo,
    Snapshot,
    is_under,
)

log = logging.getLogger("acp_nvim.checkpoints")

# Files named in a report, at most (the rest counted).
NAMED_MAX = 5
FILE_MODES = ("100644", "100755", "120000")
DELETED = "000000"
GC_EVERY_S = 24 * 60 * 60


class Snapshots:
    def __init__(
        self, store: Store, git: str, options: Callable[[], CheckpointOptions], spawn: Spawn | None
    ) -> None:
        self.store = store
        self.git = git
        self._options = options
        self._spawn = spawn
        self._locks: dict[str, anyio.Lock] = {}
        self._known: dict[str, Known] = {}

    def repo(self, folder: str) -> ShadowRepo:
        known = self._known.setdefault(folder, Known())
        return ShadowRepo(self.git, self.store.git_dir(folder), folder, known)

    def lock(self, folder: str) -> anyio.Lock:
        return self._locks.setdefault(folder, anyio.Lock())

    async def take(
        self,
        record: SessionRecord,
        checkpoint_id: str,
        turn: int,
        kind: str,
        title: str,
        written: anyio.Event | None = None,
    ) -> Checkpoint:
        """A checkpoint of every folder of the record, added to it and saved (pruned). `written` is set once
        every folder's tree is written: the checkpoint's content is then fixed (nothing done to the files
        after it is in it), and what is left, the commits and refs that keep the trees and the record, needs
        not be waited for. The folders' locks are held to the end: a restore, a diff or a pruning of them
        waits for the checkpoint's commits."""
        max_bytes = int(self._options().max_file_bytes)
        commits: dict[str, str] = {}
        skipped: dict[str, list[tuple[str, str]]] = {}
        nested: dict[str, list[str]] = {}
        async with contextlib.AsyncExitStack() as locks:
            trees: dict[str, str] = {}
            for folder in sorted(set(record.folders)):
                await locks.enter_async_context(self.lock(folder))
            for folder in record.folders:
                snapshot = await self.repo(folder).snapshot(max_bytes)
                trees[folder] = snapshot.tree
                if snapshot.skipped:
                    skipped[folder] = snapshot.skipped
                if snapshot.nested:
                    nested[folder] = snapshot.nested
            if written is not None:
                written.set()
                # The prompt goes before the commits' git processes start.
                await anyio.sleep(0)
            ref = self.store.ref(record.session_id, checkpoint_id)
            for folder, tree in trees.items():
                repo = self.repo(folder)
                message = f"{kind} {checkpoint_id}: {title}"
                # Behind the prompt: the agent starts its turn meanwhile.
                commits[folder] = await repo.commit(tree, message, ref, idle=written is not None)
        checkpoint = Checkpoint(
            id=checkpoint_id,
            turn=turn,
            kind=kind,
            time=time.time(),
            title=title,
            commits=commits,
            skipped=skipped,
            nested=nested,
        )
        record.checkpoints = [c for c in record.checkpoints if c.id != checkpoint_id] + [checkpoint]
        self._save_pruned(record)
        return checkpoint

    def _save_pruned(self, record: SessionRecord) -> None:
        options = self._options()
        dropped = pruned(record, time.time(), options.max_age_days * 86400, int(options.max_count))
        record.checkpoints = [c for c in record.checkpoints if c not in dropped]
        self.store.save(record)
        if dropped and self._spawn is not None:
            self._spawn(lambda: self._prune(record.session_id, dropped))

    async def _prune(self, session_id: str, dropped: list[Checkpoint]) -> None:
        folders = {folder for checkpoint in dropped for folder in checkpoint.commits}
        for folder in sorted(folders):
            refs = [self.store.ref(session_id, c.id) for c in dropped if folder in c.commits]
            try:
                async with self.lock(folder):
                    repo = self.repo(folder)
                    await repo.delete_refs(refs)
                    if _gc_due(repo.git_dir, time.time()):
                        await repo.collect_garbage()
            except (GitError, OSError) as err:
                log.warning("pruning the checkpoints of %s failed: %s", folder, err)

    async def _changes(
        self, folder: str, checkpoint: Checkpoint, now: Checkpoint | None = None
    ) -> tuple[list[Change], list[str]]:
        """What differs from the folder now (a snapshot of it, or `now`'s) to the checkpoint (the caller holds
        the folder's lock), and the files the snapshot of now left out."""
        repo = self.repo(folder)
        if now is not None and folder in now.commits:
            skipped, nested = now.skipped.get(folder, []), now.nested.get(folder, [])
            snapshot = Snapshot(tree=now.commits[folder], skipped=skipped, nested=nested)
        else:
            snapshot = await repo.snapshot(int(self._options().max_file_bytes))
        kept = await self._restorable(repo, folder, snapshot, checkpoint)
        return kept, sorted({path for path, _ in snapshot.skipped})

    async def _restorable(
        self, repo: ShadowRepo, folder: str, now: Snapshot, checkpoint: Checkpoint
    ) -> list[Change]:
        """The files a restore of `folder` to `checkpoint` writes or removes, from `now`: not a file either
        snapshot left out (one side does not know its content: a restore would delete or overwrite it),
        nothing in a nested repository of either (its own git keeps it), no gitlink, nothing of the store."""
        changes = await repo.diff(now.tree, checkpoint.commits.get(folder) or EMPTY_TREE)
        left_out = {path for path, _ in now.skipped}
        left_out.update(path for path, _ in checkpoint.skipped.get(folder, []))
        nested = [path.rstrip("/") for path in (*now.nested, *checkpoint.nested.get(folder, []))]
        return [
            c
            for c in changes
            if GITLINK not in (c.old_mode, c.new_mode)
            and (c.new_mode in FILE_MODES or c.new_mode == DELETED)
            and c.path not in left_out
            and not any(is_under(c.path, inside) for inside in nested)
            and not is_under(c.path, repo.store_inside)
        ]

    async def changed_counts(self, record: SessionRecord) -> dict[str, int]:
        """For the picker: how many files a restore to each checkpoint would write or remove."""
        counts: dict[str, int] = {}
        for folder in record.folders:
            async with self.lock(folder):
                repo = self.repo(folder)
                now = await repo.snapshot(int(self._options().max_file_bytes))
                for checkpoint in record.checkpoints:
                    if folder not in checkpoint.commits:
                        continue
                    changed = await self._restorable(repo, folder, now, checkpoint)
                    counts[checkpoint.id] = counts.get(checkpoint.id, 0) + len(changed)
        return counts

    # ---- restore ---------------------------------------------------------------------------------------

    async def restore(
        self, record: SessionRecord, checkpoint: Checkpoint, port: NeovimPort
    ) -> tuple[str, int]:
        """Puts the folders back as `checkpoint` holds them; the report for the user, and its level."""
        undo_id = f"r{sum(1 for c in record.checkpoints if c.kind == 'restore') + 1}"
        undo = await self.take(
            record, undo_id, checkpoint.turn, "restore", f"before the restore to {checkpoint.id}"
        )
        report = Report()
        for folder in record.folders:
            if folder not in checkpoint.commits:
                continue
            async with self.lock(folder):
                await self._restore_folder(folder, checkpoint, undo, port, report)
        for folder, skipped in checkpoint.skipped.items():
            for path, reason in skipped:
                report.failed.append((os.path.join(folder, path), f"not in the checkpoint: {reason}"))
        result = await port.checkpoint("after", CheckpointBuffers(report.touched))
        if isinstance(result, dict):
            report.conflicts = int(result.get("conflicts", 0))
            conflicted = result.get("conflicted")
            if isinstance(conflicted, list):
                report.conflicted = [path for path in conflicted if isinstance(path, str)]
        return report.text(checkpoint, undo_id), report.level

    async def _restore_folder(
        self, folder: str, checkpoint: Checkpoint, undo: Checkpoint, port: NeovimPort, report: Report
    ) -> None:
        repo = self.repo(folder)
        changes, left_out = await self._changes(folder, checkpoint, undo)
        for path in left_out:
            report.failed.append(
                (os.path.join(folder, path), "left as it is: too large or unreadable to undo")
            )
        writes = [c for c in changes if c.new_mode in FILE_MODES]
        removals = [c.path for c in changes if c.new_mode == DELETED]
        if not writes and not removals:
            return
        await port.checkpoint("before", CheckpointBuffers([os.path.join(folder, c.path) for c in changes]))
        blobs = await repo.blobs([c.new_blob for c in writes])
        files = [restore_files.Write(c.path, c.new_mode, blobs.get(c.new_blob, b"")) for c in writes]
        outcome = await anyio.to_thread.run_sync(restore_files.restore, folder, files, removals)
        if outcome.untouched is not None:
            report.untouched.append(f"{folder}: {outcome.untouched}")
            return
        report.written += [os.path.join(folder, path) for path in outcome.written]
        report.removed += [os.path.join(folder, path) for path in outcome.removed]
        report.failed += [(os.path.join(folder, path), why) for path, why in outcome.failed]

    # ---- diff --------------------------------------------------------------------------------------------

    async def diff(
        self, record: SessionRecord, checkpoint: Checkpoint, out_root: str, port: NeovimPort
    ) -> int:
        """The quickfix list of what a restore to `checkpoint` would change; the checkpoint's versions are
        written under `out_root` to be diffed against. The number of files."""
        shutil.rmtree(out_root, ignore_errors=True)
        items: list[QuickfixItem] = []
        for number, folder in enumerate(record.folders):
            if folder not in checkpoint.commits:
                continue
            async with self.lock(folder):
                changes, _ = await self._changes(folder, checkpoint)
                repo = self.repo(folder)
                blobs = await repo.blobs([c.new_blob for c in changes if c.new_mode in FILE_MODES])
            for change in changes:
                items.append(_quickfix_item(folder, os.path.join(out_root, str(number)), change, blobs))
        await port.checkpoint(
            "quickfix", CheckpointQuickfix(f"acp.nvim: a restore to {checkpoint.id}", items)
        )
        return len(items)


def _gc_due(git_dir: str, now: float) -> bool:
    """Whether the repository's objects no checkpoint holds are due to be deleted: at most once a day (a
    `git gc` repacks the whole folder's snapshots and holds its lock, so the next prompt would wait on it)."""
    stamp = os.path.join(git_dir, "acp_nvim-gc")
    try:
        if now - os.stat(stamp).st_mtime < GC_EVERY_S:
            return False
    except FileNotFoundError:
        pass
    with open(stamp, "w", encoding="utf-8"):
        pass
    return True


def _quickfix_item(folder: str, out: str, change: Change, blobs: dict[str, bytes]) -> QuickfixItem:
    path = os.path.join(folder, change.path)
    theirs = None
    if change.new_mode in FILE_MODES:
        theirs = os.path.join(out, change.path)
        os.makedirs(os.path.dirname(theirs), exist_ok=True)
        with open(theirs, "wb") as file:
            file.write(blobs.get(change.new_blob, b""))
    if change.old_mode == DELETED:
        text = "deleted since: a restore brings it back"
        shown = theirs or path
    elif change.new_mode == DELETED:
        text = "created since: a restore removes it"
        shown = path
    else:
        text = "changed since: a restore puts it back"
        shown = path
    return QuickfixItem(filename=shown, lnum=1, text=text, path=path, theirs=theirs)


class Report:
    def __init__(self) -> None:
        self.written: list[str] = []
        self.removed: list[str] = []
        self.failed: list[tuple[str, str]] = []
        self.untouched: list[str] = []
        # Conflicts of the restored text with a buffer's unsaved edits (Lua merged it), and their files.
        self.conflicts = 0
        self.conflicted: list[str] = []

    @property
    def touched(self) -> list[str]:
        return self.written + self.removed

    def text(self, checkpoint: Checkpoint, undo_id: str) -> str:
        head = f"restored to {checkpoint.id}: {len(self.written)} written, {len(self.removed)} removed"
        parts = [head]
        if self.untouched:
            parts.append("nothing changed in " + "; ".join(self.untouched))
        if self.failed:
            named = ", ".join(f"{_shown(p)} ({why})" for p, why in self.failed[:NAMED_MAX])
            more = len(self.failed) - NAMED_MAX
            parts.append("not restored: " + named + (f" and {more} more" if more > 0 else ""))
        if self.conflicts:
            # Said here once for the whole restore, with the files (Lua says nothing per file).
            named = ", ".join(_shown(p) for p in self.conflicted[:NAMED_MAX])
            more = len(self.conflicted) - NAMED_MAX
            files = f" in {named}" + (f" and {more} more" if more > 0 else "") if named else ""
            parts.append(f"{self.conflicts} conflict(s) with unsaved edits{files} (:AcpConflict)")
        parts.append(f":AcpCheckpoint restore {undo_id} undoes it")
        return "; ".join(parts)

    @property
    def level(self) -> int:
        return ERROR if self.untouched else WARN if self.failed or self.conflicts else INFO


def _shown(path: str) -> str:
    home = os.path.expanduser("~")
    return path.replace(home, "~", 1) if path.startswith(home + os.sep) else path

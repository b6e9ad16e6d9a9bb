"""Where checkpoints are kept and what is known of each: one shadow git repository per folder and one record
file per session, under Neovim's stdpath("state")/acp_nvim/checkpoints/; what pruning keeps.

    checkpoints/<hash of the folder>.git     the folder's snapshots (refs/acp/<session hash>/<id>)
    checkpoints/<hash of the folder>.git.index   its private index (the stat cache that keeps a snapshot fast)
    checkpoints/<hash of the folder>.git.index.flock   held while one Neovim uses the index
    checkpoints/sessions/<hash of the id>.json   the session's checkpoints, oldest first
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile

import msgspec

log = logging.getLogger("acp_nvim.checkpoints")


class Checkpoint(msgspec.Struct, kw_only=True):
    # "3" for the checkpoint before turn 3, "r1" for the state the session's first restore replaced.
    id: str
    turn: int
    kind: str  # "prompt" | "restore"
    time: float
    title: str
    # folder -> the commit of its snapshot
    commits: dict[str, str]
    # folder -> files the snapshot left out, with why (over the size limit, unreadable)
    skipped: dict[str, list[tuple[str, str]]] = {}
    # folder -> its folders that were git repositories of their own (`vendor/`): left out, and left alone
    nested: dict[str, list[str]] = {}


class SessionRecord(msgspec.Struct, kw_only=True):
    session_id: str
    folders: list[str]
    checkpoints: list[Checkpoint] = []


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20]


class Store:
    def __init__(self, root: str) -> None:
        self.root = root

    def git_dir(self, folder: str) -> str:
        return os.path.join(self.root, digest(os.path.realpath(folder)) + ".git")

    def ref(self, session_id: str, checkpoint_id: str) -> str:
        return f"refs/acp/{digest(session_id)}/{checkpoint_id}"

    def _record_path(self, session_id: str) -> str:
        return os.path.join(self.root, "sessions", digest(session_id) + ".json")

    def load(self, session_id: str) -> SessionRecord | None:
        try:
            with open(self._record_path(session_id), "rb") as file:
                return msgspec.json.decode(file.read(), type=SessionRecord)
        except FileNotFoundError:
            return None
        except (OSError, msgspec.DecodeError) as err:
            log.warning("checkpoint record of %s unreadable: %s", session_id, err)
            return None

    def save(self, record: SessionRecord) -> None:
        path = self._record_path(record.session_id)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".record-")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(msgspec.json.encode(record))
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise


def pruned(record: SessionRecord, now: float, max_age: float, max_count: int) -> list[Checkpoint]:
    """The checkpoints pruning drops from the record (it keeps the rest): older than `max_age` seconds, and
    the oldest past `max_count`."""
    fresh = [checkpoint for checkpoint in record.checkpoints if now - checkpoint.time <= max_age]
    kept = fresh[-max_count:] if max_count > 0 else []
    kept_ids = {id(checkpoint) for checkpoint in kept}
    return [checkpoint for checkpoint in record.checkpoints if id(checkpoint) not in kept_ids]


def size_of(root: str) -> int:
    """Bytes on disk under the store (for :checkhealth)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total

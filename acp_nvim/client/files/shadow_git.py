"""A shadow git repository of the plugin's own over one folder: the snapshots behind checkpoints.

Its `GIT_DIR` and index are the plugin's (under Neovim's stdpath("state")), the folder is only its work tree:
nothing of the project's own `.git` is read but its `info/exclude`, nothing of it is ever written. Every
command runs with a private environment: no system or global config, no hooks, no inherited `GIT_*`
variable, and the settings that make a snapshot exact (modes, symlinks, no line-ending conversion) given on
the command line, so that no config file can change them, and its own `info/attributes`, so that no
`.gitattributes` can.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import stat
import subprocess
from collections.abc import Sequence

import anyio
import msgspec

from acp_nvim.client.files import shadow_lock

log = logging.getLogger("acp_nvim.checkpoints")

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
GITLINK = "160000"
SYMLINK = "120000"
EXECUTABLE = "100755"
# The most paths a snapshot names to `git add` (matching many costs it more than looking at every file).
PATHS_MAX = 256

# Settings that make a snapshot exact and keep git from doing anything of its own.
SETTINGS = (
    "core.bare=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fileMode=true",
    "core.symlinks=true",
    "core.ignoreCase=false",
    "core.precomposeUnicode=false",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=true",
    "core.quotePath=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    # The folder may be another user's (a root Neovim on a user's project): the repository is ours.
    "safe.directory=*",
    "user.name=acp.nvim",
    "user.email=acp.nvim@localhost",
)


# Every path's bytes as they are on disk: no line-ending conversion, no `$Id$` expansion, no filter, no
# re-encoding, whatever the project's `.gitattributes` say.
KEEP_BYTES = "* -text -ident -filter -working-tree-encoding\n"


# How old an object no ref holds must be before a gc deletes it (git's approxidate).
PRUNE_AFTER = "1.hour.ago"


class GitError(Exception):
    """A git command failed: what its stderr says of why (`_reason`)."""


def _reason(stderr: bytes) -> str | None:
    """The line of git's stderr that says what failed: its first `fatal:` or `error:` line (the index's lock
    is named there, and its last line only says "remove the file manually to continue"), else its last."""
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[-1] if lines else None


class Change(msgspec.Struct, frozen=True):
    """One path that differs between two snapshots (`git diff-tree --raw`): modes and blobs of each side,
    "000000" and an empty blob where the side has no such path."""

    path: str
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str


class Snapshot(msgspec.Struct, frozen=True):
    tree: str
    # Files left out, with why: over the size limit, unreadable.
    skipped: list[tuple[str, str]]
    # Folders that are git repositories of their own: left out, and left alone by a restore.
    nested: list[str]


class Known:
    """What this process knows of a shadow index, true only while the index is as a snapshot of ours left it
    (its checksum, the last 20 bytes git writes, unchanged: another Neovim on the same folder shares it, and
    the checksum is read and trusted only under the lock that keeps the other out, `shadow_lock.py`): that
    the store is not in it, and the tree it holds. A snapshot then needs no `rm` of the store, and, when
    nothing on disk differs from the index, no `add` nor `write-tree`: each is a git process on the prompt's
    way to the agent (~1.5-5 ms)."""

    def __init__(self) -> None:
        self.checksum: bytes | None = None
        self.tree = ""
        # Whether a ref of ours holds the tree (a commit of it): else another Neovim's `git gc` may have
        # deleted it, and only a `write-tree` gives it back.
        self.kept = False

    def valid(self, index: str) -> bool:
        return self.checksum is not None and index_checksum(index) == self.checksum


def index_checksum(index: str) -> bytes | None:
    """The index's trailing checksum (None: no index, or one written without it, `index.skipHash`)."""
    try:
        with open(index, "rb") as file:
            file.seek(-20, os.SEEK_END)
            checksum = file.read(20)
    except OSError:
        return None
    return checksum if len(checksum) == 20 and checksum.strip(b"\0") else None


def git_path() -> str | None:
    return shutil.which("git")


def project_exclude(folder: str) -> str | None:
    """The `info/exclude` of the git repository the folder is in, if any (read, never written)."""
    current = os.path.realpath(folder)
    while True:
        dot_git = os.path.join(current, ".git")
        if os.path.isdir(dot_git):
            exclude = os.path.join(dot_git, "info", "exclude")
            return exclude if os.path.isfile(exclude) else None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class ShadowRepo:
    def __init__(self, git: str, git_dir: str, work_tree: str, known: Known | None = None) -> None:
        self.git = git
        # None: nothing known (every step of a snapshot run).
        self.known = known
        self.git_dir = git_dir
        self.work_tree = work_tree
        self.index = git_dir + ".index"
        exclude = project_exclude(work_tree)
        self._settings = [*SETTINGS, f"core.excludesFile={exclude or os.devnull}"]
        self._env = self._environment()
        # The store of the shadow repositories, where the folder holds it (a project at ~ holds
        # ~/.local/state): never part of a snapshot, or each snapshot would hold the objects of the one before
        # it and grow without end; never touched by a restore.
        self.store_inside = store_inside(os.path.dirname(git_dir), work_tree)

    def _environment(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        home = os.path.dirname(self.git_dir)
        env.update(
            GIT_DIR=self.git_dir,
            GIT_WORK_TREE=self.work_tree,
            GIT_INDEX_FILE=self.index,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_TERMINAL_PROMPT="0",
            GIT_OPTIONAL_LOCKS="0",
            HOME=home,
            XDG_CONFIG_HOME=home,
            LC_ALL="C",
        )
        return env

    async def run(self, *args: str, stdin: bytes | None = None, idle: bool = False) -> bytes:
        argv = [self.git]
        for setting in self._settings:
            argv += ["-c", setting]
        result = await _run([*argv, *args], self._env, self.work_tree, stdin, idle)
        if result.returncode != 0:
            raise GitError(_reason(result.stderr) or f"git {args[0]} failed ({result.returncode})")
        return result.stdout

    async def ensure(self) -> None:
        """Creates the repository when it does not exist yet (empty: no hooks, no samples), with the
        attributes that keep a file's bytes as they are."""
        if not os.path.isfile(os.path.join(self.git_dir, "HEAD")):
            os.makedirs(os.path.dirname(self.git_dir), exist_ok=True)
            env = {key: value for key, value in self._env.items() if key not in ("GIT_DIR", "GIT_WORK_TREE")}
            argv = [self.git, "init", "-q", "--bare", "--template=", self.git_dir]
            result = await _run(argv, env, None, None)
            if result.returncode != 0:
                raise GitError(_reason(result.stderr) or "git init failed")
        self._keep_bytes()

    def _keep_bytes(self) -> None:
        """The project's `.gitattributes` must not change what a snapshot holds: `text=auto` would store a
        CRLF file with LF (and a restore give it back so), `ident` or a filter would rewrite it. The
        repository's own `info/attributes` goes before every `.gitattributes`. A repository made before it
        had them may hold such rewritten blobs behind a clean index: its index goes, so the next snapshot
        reads every file again."""
        attributes = os.path.join(self.git_dir, "info", "attributes")
        if os.path.isfile(attributes):
            return
        os.makedirs(os.path.dirname(attributes), exist_ok=True)
        # (What this process knows of the index is void with it: its checksum is gone.)
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.index)
        with open(attributes + ".tmp", "w", encoding="utf-8") as out:
            out.write(KEEP_BYTES)
        os.replace(attributes + ".tmp", attributes)

    def _drop_stale_index_lock(self) -> None:
        """Git's own lock of the index, left by a git killed while it wrote (Neovim killed mid-checkpoint):
        every later checkpoint of the folder failed on it ("File exists") until the user deleted it by hand.
        Under `shadow_lock`, no git of ours can be writing the index: the file is stale."""
        lock = self.index + ".lock"
        with contextlib.suppress(FileNotFoundError):
            os.remove(lock)
            log.warning("removed %s, left by a git that did not finish", lock)

    async def snapshot(self, max_file_bytes: int) -> Snapshot:
        """The folder as it is on disk, honouring its ignore rules, as a tree of the shadow repository. The
        index is this process's alone meanwhile (another Neovim on the folder shares it: `shadow_lock.py`)."""
        async with shadow_lock.held(shadow_lock.lock_path(self.index), self.work_tree):
            return await self._snapshot(max_file_bytes)

    async def _snapshot(self, max_file_bytes: int) -> Snapshot:
        await self.ensure()
        self._drop_stale_index_lock()
        known = self.known if self.known is not None and self.known.valid(self.index) else None
        store = self.store_inside
        unlisted = [f"--exclude=/{store}/"] if store else []
        # -t tags each path: "?" untracked, else tracked and changed (or deleted).
        listed = await self.run("ls-files", "-z", "-t", "-m", "-o", "--exclude-standard", *unlisted)
        skipped: list[tuple[str, str]] = []
        nested: list[str] = []
        to_add: list[str] = []
        # Whether the index differs from the disk in what a snapshot holds (else an `add` changes nothing),
        # holds a left-out file's older version, or holds the store.
        changed = stale = store_held = False
        for raw in dict.fromkeys(listed.split(b"\0")):
            if not raw:
                continue
            untracked, path = raw[:1] == b"?", os.fsdecode(raw[2:])
            if path.endswith("/"):
                nested.append(path)
                continue
            if is_under(path, store):
                store_held = True
                continue
            reason = _left_out(os.path.join(self.work_tree, path), max_file_bytes)
            if reason is not None:
                skipped.append((path, reason))
                stale = stale or not untracked
            else:
                changed = True
                to_add.append(path)
        if changed or known is None:
            left_out = [path for path, _ in skipped] + nested + ([store] if store else [])
            await self._add(to_add if known is not None else None, left_out)
        if store and (known is None or store_held):
            # Out of the index too, where a snapshot taken before this rule put it (once: no `add` of ours
            # puts it back). Forced: the store's files have changed since, and git keeps what is staged of a
            # changed file.
            await self.run("rm", "-r", "-q", "-f", "--cached", "--ignore-unmatch", "--", f":(literal){store}")
        if skipped and (stale or known is None):
            # A file tracked before that is now left out must not stay in the snapshot as it was.
            paths = b"".join(os.fsencode(path) + b"\0" for path, _ in skipped)
            await self.run("update-index", "--force-remove", "-z", "--stdin", stdin=paths)
        if known is not None and known.kept and not (changed or store_held or stale):
            # The index is as our last `write-tree` left it: the same tree.
            return Snapshot(tree=known.tree, skipped=skipped, nested=nested)
        tree = (await self.run("write-tree")).decode().strip()
        if self.known is not None:
            # After `write-tree`, which writes its cache of trees into the index.
            self.known.checksum, self.known.tree, self.known.kept = index_checksum(self.index), tree, False
        return Snapshot(tree=tree, skipped=skipped, nested=nested)

    async def _add(self, paths: list[str] | None, left_out: list[str]) -> None:
        """`git add -A` of the paths that differ from the index (None: of the whole folder but `left_out`)."""
        if paths is not None and len(paths) <= PATHS_MAX:
            # Only what differs: `git add` looks at nothing else (half of its time on 10,000 files).
            specs = b"".join(os.fsencode(f":(literal){path}") + b"\0" for path in paths)
            try:
                await self.run("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=specs)
                return
            except GitError:
                # A file listed is gone already (a tool's temporary file): the whole folder, as below.
                log.debug("git add of %d paths failed: the whole folder", len(paths))
        specs = b"".join(os.fsencode(f":(exclude,literal){path}") + b"\0" for path in left_out)
        await self.run("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=b".\0" + specs)

    async def commit(self, tree: str, message: str, ref: str, idle: bool = False) -> str:
        commit = (await self.run("commit-tree", tree, "-m", message, idle=idle)).decode().strip()
        await self.run("update-ref", ref, commit, idle=idle)
        if self.known is not None and self.known.tree == tree:
            self.known.kept = True
        return commit

    async def diff(self, old: str, new: str) -> list[Change]:
        """What differs from `old` to `new` (trees or commits), path by path, renames as delete + add."""
        out = await self.run("diff-tree", "-r", "-z", "--no-renames", "--raw", old, new)
        fields = out.split(b"\0")
        changes: list[Change] = []
        for head, raw_path in zip(fields[0::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            old_mode, new_mode, old_blob, new_blob, _ = head[1:].decode().split(" ")
            changes.append(Change(os.fsdecode(raw_path), old_mode, new_mode, old_blob, new_blob))
        return changes

    async def blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """The contents of blobs, in one `cat-file --batch`."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        out = await self.run("cat-file", "--batch", stdin="".join(f"{blob}\n" for blob in wanted).encode())
        found: dict[str, bytes] = {}
        pos = 0
        for blob in wanted:
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            pos = end + 1
            if len(header) < 3:
                continue
            size = int(header[2])
            found[blob] = out[pos : pos + size]
            pos += size + 1
        return found

    async def delete_refs(self, refs: Sequence[str]) -> None:
        if refs:
            if self.known is not None:
                # The refs may have been the tree's last holders.
                self.known.kept = False
            await self.run("update-ref", "--stdin", stdin="".join(f"delete {ref}\n" for ref in refs).encode())

    async def collect_garbage(self) -> None:
        """Objects no checkpoint holds any more are deleted, the rest packed. Not those of the last hour:
        another Neovim on the folder may have written a snapshot's tree whose commit comes after its prompt
        went (its checkpoint would fail on a missing tree); a day's garbage waits for the next day's gc."""
        await self.run("gc", f"--prune={PRUNE_AFTER}", "--quiet")


async def _run(
    argv: list[str], env: dict[str, str], cwd: str | None, stdin: bytes | None, idle: bool = False
) -> subprocess.CompletedProcess[bytes]:
    """A git process run to its end in a worker thread: ~1 ms less per process than an event loop's child
    (`anyio.run_process`: on Python 3.11 asyncio watches each child with a thread of its own), and a
    snapshot's git processes are on the prompt's way to the agent. `idle`: at the lowest CPU priority (what
    runs while the agent starts its turn leaves the CPU to it, Neovim and the host). A cancel leaves it to
    finish."""

    def run() -> subprocess.CompletedProcess[bytes]:
        given = subprocess.PIPE if stdin is not None else subprocess.DEVNULL
        with subprocess.Popen(
            argv, env=env, cwd=cwd, stdin=given, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process:
            if idle:
                with contextlib.suppress(OSError):
                    os.setpriority(os.PRIO_PROCESS, process.pid, 19)
            out, err = process.communicate(stdin)
        return subprocess.CompletedProcess(argv, process.returncode, out, err)

    return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)


def store_inside(store: str, folder: str) -> str | None:
    """The store's path relative to the folder, where the folder holds it (else None)."""
    store, folder = os.path.realpath(store), os.path.realpath(folder)
    if os.path.commonpath([store, folder]) != folder or store == folder:
        return None
    return os.path.relpath(store, folder).replace(os.sep, "/")


def is_under(path: str, folder: str | None) -> bool:
    """Whether the snapshot path `path` is `folder` or inside it."""
    return folder is not None and (path == folder or path.startswith(folder + "/"))


def _left_out(path: str, max_file_bytes: int) -> str | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    if info.st_size > max_file_bytes:
        return "over the size limit"
    if not os.access(path, os.R_OK):
        return "unreadable"
    return None

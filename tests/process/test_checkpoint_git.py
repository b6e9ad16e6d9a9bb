"""The checkpoints' shadow repository and restore on real git and real files (no Neovim): any tree of files,
links, modes and folders changed any way comes back exactly; the project's `.git` is never touched; what a
snapshot leaves out is named; pruning deletes refs; a symlinked folder is never written through."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_nvim.app.checkpoints.restore import Snapshots
from acp_nvim.app.checkpoints.store import SessionRecord, Store
from acp_nvim.app.config.options import CheckpointOptions
from acp_nvim.client.files import restore_files
from acp_nvim.client.files.shadow_git import GitError
from tests.conftest import ROOT
from tests.nvim.test_checkpoints import git, git_bytes, make_project, state_of

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


class NoBuffers:
    """The port a restore tells about buffers: there are none here."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def checkpoint(self, action: str, payload: object) -> object:
        self.calls.append(action)
        return {"conflicts": 0}


def snapshots(store: Path, **options: float) -> Snapshots:
    assert GIT is not None
    chosen = CheckpointOptions(**options)  # type: ignore[arg-type]
    return Snapshots(Store(str(store)), GIT, lambda: chosen, None)


NAMES = st.sampled_from(["a", "b", "c.txt", "d/e", "d/f.bin", "g/h/i", "j"])
CONTENT = st.binary(max_size=64)
MUTATION = st.tuples(st.sampled_from(["write", "remove", "chmod", "link"]), NAMES, CONTENT)


def mutate(root: Path, kind: str, name: str, data: bytes) -> None:
    path = root / name
    if kind == "remove":
        if path.is_symlink() or path.is_file():
            path.unlink()
        return
    if any(parent.is_symlink() or parent.is_file() for parent in list(path.parents)[: len(path.parents) - 1]):
        return
    if path.is_dir() and not path.is_symlink():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        if path.is_symlink() or path.is_file():
            path.unlink()
        path.symlink_to("a")
    elif path.is_symlink():
        path.unlink()
        path.write_bytes(data)
    elif kind == "chmod" and path.is_file():
        path.chmod(0o755 if not os.access(path, os.X_OK) else 0o644)
    else:
        path.write_bytes(data)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.lists(MUTATION, max_size=8), later=st.lists(MUTATION, min_size=1, max_size=10))
def test_any_change_comes_back_exactly_and_the_repository_is_untouched(
    first: list[tuple[str, str, bytes]], later: list[tuple[str, str, bytes]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root, store = Path(tmp) / "project", Path(tmp) / "store"
        root.mkdir()
        make_project(root)
        for change in first:
            mutate(root, *change)
        dot_git = git_bytes(root)
        before = state_of(root)
        shadow = snapshots(store)
        record = SessionRecord(session_id="s", folders=[str(root)])

        async def main() -> None:
            checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
            for change in later:
                mutate(root, *change)
            after = state_of(root)
            text, _ = await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
            assert "restored to 1" in text
            expected = {k: v for k, v in before.items() if v[0] != "dir"}
            assert {k: v for k, v in state_of(root).items() if v[0] != "dir"} == expected
            # Undone: the state the restore replaced comes back.
            undo = next(c for c in record.checkpoints if c.id == "r1")
            await shadow.restore(record, undo, NoBuffers())  # type: ignore[arg-type]
            assert {k: v for k, v in state_of(root).items() if v[0] != "dir"} == {
                k: v for k, v in after.items() if v[0] != "dir"
            }

        anyio.run(main)
        assert git_bytes(root) == dot_git


def test_files_over_the_limit_are_named_and_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.txt").write_text("small\n")
    (root / "big.bin").write_bytes(b"x" * 5000)
    shadow = snapshots(tmp_path / "store", max_file_bytes=1000)
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> str:
        checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
        (root / "small.txt").write_text("changed\n")
        (root / "big.bin").write_bytes(b"y" * 6000)
        text, _ = await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
        return text

    text = anyio.run(main)
    assert (root / "small.txt").read_text() == "small\n"
    assert (root / "big.bin").read_bytes() == b"y" * 6000
    assert "big.bin" in text and "size limit" in text, text


def test_a_nested_repository_and_the_projects_git_are_left_alone(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    make_project(root)
    nested = root / "vendor"
    nested.mkdir()
    (nested / "lib.txt").write_text("lib\n")
    git(nested, "init", "-q")
    dot_git = git_bytes(root)
    shadow = snapshots(tmp_path / "store")
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> None:
        checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
        (nested / "lib.txt").write_text("changed\n")
        (root / "a.txt").write_text("changed\n")
        await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]

    anyio.run(main)
    assert (root / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert (nested / "lib.txt").read_text() == "changed\n"
    assert git_bytes(root) == dot_git


def test_pruning_keeps_the_newest_and_deletes_the_refs(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "f").write_text("0")
    store = tmp_path / "store"
    spawned: list[object] = []
    assert GIT is not None
    options = CheckpointOptions(max_count=2)
    shadow = Snapshots(Store(str(store)), GIT, lambda: options, spawned.append)  # type: ignore[arg-type]
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> None:
        for turn in range(1, 5):
            (root / "f").write_text(str(turn))
            await shadow.take(record, str(turn), turn, "prompt", "go")
        for work in spawned:
            await work()  # type: ignore[operator]

    anyio.run(main)
    assert [c.id for c in record.checkpoints] == ["3", "4"]
    assert [c.id for c in Store(str(store)).load("s").checkpoints] == ["3", "4"]  # type: ignore[union-attr]
    refs = shadow.repo(str(root))

    async def listed() -> bytes:
        return await refs.run("for-each-ref", "--format=%(refname)")

    names = anyio.run(listed).decode().split()
    assert len(names) == 2 and all(name.endswith(("/3", "/4")) for name in names)


def test_a_tree_not_committed_yet_survives_a_garbage_collection(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "f").write_text("mine\n")
    repo = snapshots(tmp_path / "store").repo(str(root))

    async def main() -> bytes:
        # A snapshot's tree, its commit still to come (another Neovim's, after its prompt went); then this
        # one snapshots the folder changed, and its daily gc runs.
        mine = await repo.snapshot(10_000_000)
        (root / "f").write_text("theirs\n")
        await repo.snapshot(10_000_000)
        await repo.collect_garbage()
        return await repo.run("cat-file", "blob", f"{mine.tree}:f")

    assert anyio.run(main) == b"mine\n"


def test_a_folder_that_became_a_link_is_never_written_through(tmp_path: Path) -> None:
    root, outside = tmp_path / "project", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "d").symlink_to(outside)
    outcome = restore_files.restore(str(root), [restore_files.Write("d/x", "100644", b"data")], [])
    assert outcome.failed and outcome.failed[0][0] == "d/x"
    assert list(outside.iterdir()) == []
    assert not any(p.name.startswith(restore_files.STAGING_PREFIX) for p in root.iterdir())


def test_a_file_that_cannot_be_put_back_is_named_and_the_rest_is_restored(tmp_path: Path) -> None:
    """A folder now stands where a file was, holding an ignored file: that file is named, left as it is (no
    half-written file), and every other file is restored."""
    root = tmp_path / "project"
    root.mkdir()
    (root / ".gitignore").write_text("*.o\n")
    (root / "out").write_text("was a file\n")
    (root / "keep.txt").write_text("kept\n")
    shadow = snapshots(tmp_path / "store")
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> str:
        checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
        (root / "out").unlink()
        (root / "out").mkdir()
        (root / "out" / "obj.o").write_text("ignored\n")
        (root / "keep.txt").write_text("changed\n")
        text, _ = await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
        return text

    text = anyio.run(main)
    assert "not restored: " in text and "out (" in text, text
    assert (root / "out" / "obj.o").read_text() == "ignored\n"
    assert (root / "keep.txt").read_text() == "kept\n"
    assert not any(p.name.startswith(restore_files.STAGING_PREFIX) for p in root.iterdir())


# Run without the capabilities that let root read any file, so that a mode-000 file is unreadable as it is for
# every other user (the tests run as root in CI).
UNREADABLE_SCRIPT = """
import json, sys
import anyio
from tests.process.test_checkpoint_git import NoBuffers, snapshots
from acp_nvim.app.checkpoints.store import SessionRecord
from pathlib import Path

root, store = Path(sys.argv[1]), Path(sys.argv[2])
shadow = snapshots(store)
record = SessionRecord(session_id="s", folders=[str(root)])

async def main():
    checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
    (root / "small.txt").write_text("changed\\n")
    text, _ = await shadow.restore(record, checkpoint, NoBuffers())
    return {"skipped": checkpoint.skipped, "report": text}

print(json.dumps(anyio.run(main)))
"""


def test_an_unreadable_file_is_named_and_the_rest_is_restored(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "small.txt").write_text("small\n")
    secret = root / "secret.txt"
    secret.write_text("only its owner's\n")
    secret.chmod(0)
    argv = [sys.executable, "-c", UNREADABLE_SCRIPT, str(root), str(tmp_path / "store")]
    if os.getuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv (util-linux) is needed to drop root's right to read any file")
        argv = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *argv]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["skipped"] == {str(root): [["secret.txt", "unreadable"]]}
    assert "secret.txt" in result["report"] and "unreadable" in result["report"], result["report"]
    assert (root / "small.txt").read_text() == "small\n"
    assert secret.read_text() == "only its owner's\n" and secret.stat().st_mode & 0o777 == 0


def test_a_store_inside_the_folder_is_never_snapshot_nor_restored(tmp_path: Path) -> None:
    """A project at ~ holds the store (stdpath("state") is ~/.local/state): each snapshot held the objects
    of the one before it, and the prompt's wait grew by about 100 ms a turn on a project of three files."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    store = root / ".local" / "state" / "nvim" / "acp_nvim" / "checkpoints"
    shadow = snapshots(store)
    record = SessionRecord(session_id="s", folders=[str(root)])
    repo = shadow.repo(str(root))

    async def files_of(commit: str) -> list[str]:
        return (await repo.run("ls-tree", "-r", "--name-only", commit)).decode().split()

    async def main() -> list[list[str]]:
        trees = []
        for turn in range(1, 4):
            checkpoint = await shadow.take(record, str(turn), turn, "prompt", "go")
            trees.append(await files_of(checkpoint.commits[str(root)]))
        (root / "a.txt").write_text("two\n")
        objects = sorted(p for p in store.rglob("*") if p.is_file())
        sizes = {p: p.stat().st_size for p in objects}
        counts = await shadow.changed_counts(record)
        await shadow.restore(record, record.checkpoints[0], NoBuffers())  # type: ignore[arg-type]
        # The restore put a.txt back and left every file of the store as it was (its own restore point
        # added new ones).
        assert all(p.exists() and p.stat().st_size == sizes[p] for p in objects if "objects" in p.parts)
        assert counts == {"1": 1, "2": 1, "3": 1}, counts
        return trees

    trees = anyio.run(main)
    assert trees == [["a.txt"]] * 3, trees
    assert (root / "a.txt").read_text() == "one\n"


def test_a_store_an_older_snapshot_put_in_the_index_is_taken_out(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    store = root / "state" / "checkpoints"
    shadow = snapshots(store)
    repo = shadow.repo(str(root))

    async def main() -> list[str]:
        await repo.ensure()
        # What a snapshot before the store was left out did: the store's files in the index.
        await repo.run("add", "-A", "--", ".")
        snapshot = await repo.snapshot(10_000_000)
        return (await repo.run("ls-tree", "-r", "--name-only", snapshot.tree)).decode().split()

    assert anyio.run(main) == ["a.txt"]


def test_a_lock_left_by_a_killed_git_does_not_stop_the_next_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    store = tmp_path / "state"
    shadow = snapshots(store)
    repo = shadow.repo(str(root))
    stale = Path(repo.index + ".lock")

    async def main() -> tuple[str, list[str]]:
        await repo.snapshot(10_000_000)
        # What a git killed while it wrote the index leaves: git's own lock. Git itself then refuses, and says
        # which file in the line the user is shown.
        stale.write_bytes(b"")
        with pytest.raises(GitError) as refused:
            await repo.run("add", "-A", "--", ".")
        (root / "a.txt").write_text("two\n")
        (root / "b.txt").write_text("new\n")
        snapshot = await repo.snapshot(10_000_000)
        names = (await repo.run("ls-tree", "-r", "--name-only", snapshot.tree)).decode().split()
        text = (await repo.run("cat-file", "blob", f"{snapshot.tree}:a.txt")).decode()
        return str(refused.value), [*names, text]

    refused, seen = anyio.run(main)
    assert "index.lock" in refused and "File exists" in refused, refused
    assert seen == ["a.txt", "b.txt", "two\n"]
    assert not stale.exists()


CONVERTED = {
    "crlf.txt": b"one\r\ntwo\r\n",
    "id.c": b"/* $Id$ */\nint x;\r\n",
    "mixed.md": b"a\r\nb\nc\r",
}


def _project_with_attributes(root: Path) -> None:
    root.mkdir()
    # What a project may say of its files: normalise line endings, expand $Id$, run a filter no one defined.
    (root / ".gitattributes").write_text("* text=auto eol=lf\n*.c ident\n*.md filter=lfs\n")
    for name, data in CONVERTED.items():
        (root / name).write_bytes(data)


def test_a_restore_gives_back_the_bytes_whatever_the_gitattributes_say(tmp_path: Path) -> None:
    root = tmp_path / "project"
    _project_with_attributes(root)
    shadow = snapshots(tmp_path / "store")
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> None:
        checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
        for name in CONVERTED:
            (root / name).write_bytes(b"the agent's\n")
        await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]

    anyio.run(main)
    assert {name: (root / name).read_bytes() for name in CONVERTED} == CONVERTED


def test_a_repository_made_before_the_attributes_reads_every_file_again(tmp_path: Path) -> None:
    """A shadow repository of an older version normalised CRLF files behind an index that calls them clean:
    its first snapshot now stores their bytes."""
    root, store = tmp_path / "project", tmp_path / "store"
    _project_with_attributes(root)
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def main() -> None:
        await snapshots(store).take(record, "1", 1, "prompt", "go")
        # As an older version left it: no info/attributes, and an index that took the files normalised.
        (attributes,) = store.rglob("info/attributes")
        attributes.unlink()
        (index,) = [path for path in store.rglob("*.index")]
        index.unlink()
        env = {**os.environ, "GIT_DIR": str(attributes.parent.parent), "GIT_WORK_TREE": str(root)}
        env["GIT_INDEX_FILE"] = str(index)
        # Older than the index, as files are: git trusts their stat and never reads them again.
        for name in CONVERTED:
            os.utime(root / name, (1_000_000_000, 1_000_000_000))
        subprocess.run([GIT, "add", "-A"], cwd=root, env=env, check=True)  # type: ignore[list-item]
        checkpoint = await snapshots(store).take(record, "2", 2, "prompt", "go")
        for name in CONVERTED:
            (root / name).write_bytes(b"the agent's\n")
        await snapshots(store).restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]

    anyio.run(main)
    assert {name: (root / name).read_bytes() for name in CONVERTED} == CONVERTED


def nested_repo(folder: Path) -> None:
    git(folder, "init", "-q")
    git(folder, "add", "-A")
    git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "own")


def test_the_pickers_count_is_what_a_restore_changes(tmp_path: Path) -> None:
    """The picker's "N files changed since" counts the files a restore writes or removes: never a file a
    snapshot left out (over the size limit, at the checkpoint or now), never one in a nested repository (of
    now, or of the checkpoint: its files were never recorded), which the restore leaves as they are."""
    root = tmp_path / "project"
    root.mkdir()
    make_project(root)
    vendor = root / "vendor"
    vendor.mkdir()
    (vendor / "lib.txt").write_text("lib\n")
    nested_repo(vendor)
    flattened = root / "flattened"
    flattened.mkdir()
    (flattened / "x.txt").write_text("its own repository at the checkpoint\n")
    nested_repo(flattened)
    (root / "grows.bin").write_bytes(b"g" * 10)
    (root / "shrinks.bin").write_bytes(b"s" * 5000)
    shadow = snapshots(tmp_path / "store", max_file_bytes=1000)
    record = SessionRecord(session_id="s", folders=[str(root)])

    before: dict[str, object] = {}

    async def main() -> tuple[dict[str, int], str]:
        checkpoint = await shadow.take(record, "1", 1, "prompt", "go")
        (root / "a.txt").write_text("changed\n")
        (root / "d.txt").unlink()
        (root / "new.txt").write_text("new\n")
        (vendor / "lib.txt").write_text("changed\n")
        shutil.rmtree(flattened / ".git")
        (root / "grows.bin").write_bytes(b"G" * 5000)
        (root / "shrinks.bin").write_bytes(b"S" * 10)
        counts = await shadow.changed_counts(record)
        before.update(state_of(root))
        text, _ = await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
        return counts, text

    counts, text = anyio.run(main)
    after = state_of(root)
    changed = {path for path in before.keys() | after.keys() if before.get(path) != after.get(path)}
    # a.txt and d.txt written back, new.txt removed: nothing else.
    assert changed == {"a.txt", "d.txt", "new.txt"}, changed
    assert counts["1"] == len(changed), (counts, text)
    assert (root / "grows.bin").read_bytes() == b"G" * 5000
    assert (root / "shrinks.bin").read_bytes() == b"S" * 10
    assert (flattened / "x.txt").read_text() == "its own repository at the checkpoint\n"
    assert (vendor / "lib.txt").read_text() == "changed\n"

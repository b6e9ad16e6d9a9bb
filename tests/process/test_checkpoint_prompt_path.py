"""The checkpoint on the prompt's way to the agent (issue 31), on real git and real files: only the git
processes that fix the snapshot's content run before the prompt may go (three when files changed, one when
nothing did, the store's removal from the index only where it may be there); the commits that record it run
after, and the checkpoint is recorded and restores exactly all the same. The shortcuts give the very tree the
full snapshot gives, whatever changed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_nvim.app.checkpoints.store import SessionRecord, Store
from acp_nvim.client.files import shadow_git
from acp_nvim.client.files.shadow_git import ShadowRepo
from tests.nvim.test_checkpoints import git, state_of
from tests.process.test_checkpoint_git import GIT, MUTATION, NoBuffers, mutate, snapshots

pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")


class Recorded:
    """Every git command run, and whether the checkpoint's content was fixed (`written` set) by then."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[tuple[str, bool]] = []
        self.written: anyio.Event | None = None
        run = shadow_git._run

        async def recorded(
            argv: list[str], env: dict[str, str], cwd: str | None, stdin: bytes | None, idle: bool = False
        ) -> subprocess.CompletedProcess[bytes]:
            command = next(arg for arg in argv[1:] if arg != "-c" and "=" not in arg)
            after = self.written is not None and self.written.is_set()
            # What runs after the prompt went runs at the lowest CPU priority, and only that.
            assert idle == after, (command, idle)
            self.commands.append((command, after))
            return await run(argv, env, cwd, stdin, idle)

        monkeypatch.setattr(shadow_git, "_run", recorded)

    def split(self) -> tuple[list[str], list[str]]:
        """The commands run before the content was fixed, and after; then forgotten."""
        before = [command for command, after in self.commands if not after]
        after = [command for command, after in self.commands if after]
        self.commands = []
        return before, after


def test_the_prompt_waits_only_for_the_git_that_fixes_the_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    # The store inside the folder, as a project at ~ holds it (and the bench's scratch folder).
    store = root / "state" / "checkpoints"
    shadow = snapshots(store)
    record = SessionRecord(session_id="s", folders=[str(root)])
    git_runs = Recorded(monkeypatch)
    states, steps = [], []

    async def main() -> None:
        # What the user changed before each prompt; whether the agent changes a file in its turn.
        turns = [("first", True), ("changed", False), ("nothing", True), ("changed", True)]
        for turn, (change, agent_writes) in enumerate(turns, start=1):
            if change == "changed":
                (root / "a.txt").write_text(f"turn {turn}\n")
                (root / f"new{turn}.txt").write_text("new\n")
            states.append(state_of(root))
            git_runs.written = anyio.Event()
            await shadow.take(record, str(turn), turn, "prompt", "go", git_runs.written)
            steps.append(git_runs.split())
            if agent_writes:
                # The agent's turn: a file changed on disk by its own tools.
                (root / "a.txt").write_text(f"the agent's {turn}\n")
        git_runs.written = None
        for checkpoint, state in zip(record.checkpoints, states, strict=True):
            await shadow.restore(record, checkpoint, NoBuffers())  # type: ignore[arg-type]
            assert {k: v for k, v in state_of(root).items() if not k.startswith("state")} == {
                k: v for k, v in state.items() if not k.startswith("state")
            }

    anyio.run(main)
    commits = ["commit-tree", "update-ref"]
    # The first of this process: the store taken out of an index that may hold it (an older version's).
    assert steps[0] == (["init", "ls-files", "add", "rm", "write-tree"], commits), steps[0]
    assert steps[1] == (["ls-files", "add", "write-tree"], commits), steps[1]
    # Nothing changed on disk since the last snapshot: its tree, from the index as that one left it.
    assert steps[2] == (["ls-files"], commits), steps[2]
    assert steps[3] == (["ls-files", "add", "write-tree"], commits), steps[3]
    # Recorded all the same, each restoring the folder as it was before its prompt (checked above).
    saved = Store(str(store)).load("s")
    assert saved is not None and [c.id for c in saved.checkpoints if c.kind == "prompt"] == [
        "1",
        "2",
        "3",
        "4",
    ]


def test_a_store_another_neovim_put_back_in_the_index_is_taken_out_again(tmp_path: Path) -> None:
    """Another Neovim (an older version) on the same folder shares the index: what it did to it is seen (the
    index's checksum is not the one this process left) and the full snapshot runs."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    store = root / "state" / "checkpoints"
    shadow = snapshots(store)
    record = SessionRecord(session_id="s", folders=[str(root)])

    async def files_of(commit: str) -> list[str]:
        repo = shadow.repo(str(root))
        return (await repo.run("ls-tree", "-r", "--name-only", commit)).decode().split()

    async def main() -> list[list[str]]:
        first = await shadow.take(record, "1", 1, "prompt", "go")
        # What a snapshot before the store was left out did, in another process: the store in the index.
        other = ShadowRepo(shadow.git, shadow.store.git_dir(str(root)), str(root))
        await other.run("add", "-A", "--", ".")
        second = await shadow.take(record, "2", 2, "prompt", "go")
        return [await files_of(first.commits[str(root)]), await files_of(second.commits[str(root)])]

    assert anyio.run(main) == [["a.txt"], ["a.txt"]]


def tree_listing(repo: ShadowRepo, tree: str) -> list[str]:
    out = subprocess.run(
        [repo.git, "ls-tree", "-r", "-z", "--full-tree", tree],
        env={**os.environ, "GIT_DIR": repo.git_dir},
        capture_output=True,
        check=True,
    ).stdout
    return sorted(out.decode("utf-8", "surrogateescape").split("\0"))


BIG = st.tuples(st.just("big"), st.sampled_from(["a", "c.txt", "k.bin"]), st.just(b""))
NESTED = st.tuples(st.just("nested"), st.sampled_from(["n1", "d"]), st.just(b""))
# A file becomes a folder (with a file in it), or a folder a file.
SWAP = st.tuples(st.just("swap"), st.sampled_from(["a", "d", "g", "g/h", "j"]), st.just(b"swapped"))


def change(root: Path, kind: str, name: str, data: bytes) -> None:
    path = root / name
    if kind == "big":
        if (
            not path.is_symlink()
            and not path.is_dir()
            and path.parent.is_dir()
            and not path.parent.is_symlink()
        ):
            path.write_bytes(b"x" * 3000)
    elif kind == "nested":
        if not path.exists() and not path.is_symlink():
            path.mkdir()
            (path / "inner.txt").write_text("inner\n")
            git(path, "init", "-q")
    elif kind == "swap":
        if path.is_symlink() or (path.is_dir() and (path / ".git").exists()):
            return
        if path.is_dir():
            shutil.rmtree(path)
            path.write_bytes(data)
        elif path.is_file():
            path.unlink()
            path.mkdir()
            (path / "inner").write_bytes(data)
    else:
        mutate(root, kind, name, data)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rounds=st.lists(st.lists(st.one_of(MUTATION, BIG, NESTED, SWAP), max_size=4), min_size=1, max_size=5))
def test_the_shortcuts_give_the_tree_a_full_snapshot_gives(
    rounds: list[list[tuple[str, str, bytes]]],
) -> None:
    """After any changes (files, modes, links, a file over the size limit, a nested repository, a file for a
    folder and a folder for a file, nothing),
    the snapshot of a repository that knows its index gives the same tree as a full snapshot in a fresh
    repository."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        root.mkdir()
        (root / "a").write_text("a\n")
        shadow = snapshots(Path(tmp) / "store", max_file_bytes=1000)
        record = SessionRecord(session_id="s", folders=[str(root)])

        async def main() -> None:
            for number, changes in enumerate(rounds, start=1):
                for one in changes:
                    change(root, *one)
                checkpoint = await shadow.take(record, str(number), number, "prompt", "go")
                fresh = ShadowRepo(shadow.git, str(Path(tmp) / f"fresh{number}.git"), str(root))
                full = await fresh.snapshot(1000)
                repo = shadow.repo(str(root))
                tree = (
                    (await repo.run("rev-parse", checkpoint.commits[str(root)] + "^{tree}")).decode().strip()
                )
                assert tree_listing(repo, tree) == tree_listing(fresh, full.tree)
                assert tree == full.tree
                assert sorted(checkpoint.skipped.get(str(root), [])) == sorted(full.skipped)

        anyio.run(main)


def test_a_file_gone_between_the_listing_and_the_add_leaves_no_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git add` of the paths listed fails on one that is gone already (a tool's temporary file): the whole
    folder is added instead, and the checkpoint is taken."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "a.txt").write_text("one\n")
    shadow = snapshots(tmp_path / "store")
    record = SessionRecord(session_id="s", folders=[str(root)])
    run = shadow_git._run
    adds: list[bytes | None] = []

    async def racing(
        argv: list[str], env: dict[str, str], cwd: str | None, stdin: bytes | None, idle: bool = False
    ) -> subprocess.CompletedProcess[bytes]:
        if "add" in argv and (root / "4913").exists():
            # Listed, then removed by its tool before the add.
            (root / "4913").unlink()
        if "add" in argv:
            adds.append(stdin)
        return await run(argv, env, cwd, stdin, idle)

    async def main() -> list[str]:
        await shadow.take(record, "1", 1, "prompt", "go")
        (root / "a.txt").write_text("two\n")
        (root / "4913").write_text("")
        monkeypatch.setattr(shadow_git, "_run", racing)
        checkpoint = await shadow.take(record, "2", 2, "prompt", "go")
        repo = shadow.repo(str(root))
        return (
            (await repo.run("ls-tree", "-r", "--name-only", checkpoint.commits[str(root)])).decode().split()
        )

    assert anyio.run(main) == ["a.txt"]
    # The paths that differ, then the whole folder.
    assert [spec is not None and spec.startswith(b".\0") for spec in adds] == [False, True], adds
    assert (root / "a.txt").read_text() == "two\n"

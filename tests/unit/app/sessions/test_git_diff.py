"""`@diff` over a session's several folders, on real git repositories: each repository once, said which,
limited to the roots inside it, one budget, and the folders that are no repository named."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from acp_nvim.app.sessions import git_diff
from acp_nvim.app.sessions.context_mentions import DiffMention, render

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("git") is None, reason="git not installed"),
]


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=cwd, check=True, env=env, capture_output=True)


def repo(path: Path, files: dict[str, str]) -> Path:
    """A repository at `path` with `files` committed, then each changed (an unstaged change per file)."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", ".")
    git(path, "commit", "-qm", "one")
    for name, text in files.items():
        (path / name).write_text(text + "changed\n")
    return path


def shown_and_body(mention: DiffMention, roots: list[str]) -> tuple[str, str]:
    rendered = render(mention, roots, embedded=True)
    body = rendered.blocks[0].resource.text  # type: ignore[union-attr]
    assert isinstance(body, str)
    return rendered.shown, body


async def test_two_repositories_each_under_its_own_header(tmp_path: Path) -> None:
    one = repo(tmp_path / "one", {"a.txt": "a\n"})
    two = repo(tmp_path / "two", {"b.txt": "b\n", "c.txt": "c\n"})
    roots = [str(one), str(two)]
    taken = await git_diff.unstaged_diffs(roots)
    assert taken.fact == "" and not taken.cut
    text = taken.text
    head_one = f"# git diff of the repository {one} (paths relative to {one}):\n"
    head_two = f"# git diff of the repository {two} (paths relative to {two}):\n"
    assert text.startswith(head_one + "diff --git a/a.txt b/a.txt\n")
    assert head_two + "diff --git a/b.txt b/b.txt\n" in text and "diff --git a/c.txt b/c.txt\n" in text
    assert text.index("a.txt") < text.index(head_two) < text.index("b.txt")
    shown, body = shown_and_body(taken, roots)
    assert shown == "@diff: 3 files"
    assert body == "The unstaged changes (git diff):\n" + text
    # No change in either: said as for one folder.
    git(one, "checkout", "--", ".")
    git(two, "checkout", "--", ".")
    unchanged = await git_diff.unstaged_diffs(roots)
    assert render(unchanged, roots, embedded=True).shown == "@diff: none (no unstaged changes)"


async def test_a_folder_that_is_no_repository_is_named(tmp_path: Path) -> None:
    one = repo(tmp_path / "one", {"a.txt": "a\n"})
    plain = tmp_path / "notes"
    plain.mkdir()
    gone = tmp_path / "gone"
    roots = [str(plain), str(one), str(gone)]
    taken = await git_diff.unstaged_diffs(roots)
    assert taken.text.startswith(f"# {plain}: not a git repository\n# git diff of the repository {one} ")
    assert taken.text.endswith(f"+changed\n# {gone}: not a git repository\n")
    assert shown_and_body(taken, roots)[0] == "@diff: 1 file"
    # None a repository: the one fact, as for a single folder.
    assert await git_diff.unstaged_diffs([str(plain), str(gone)]) == DiffMention(fact="not_a_repository")
    # No change anywhere: each folder's fact, and nothing sent as a diff.
    git(one, "checkout", "--", ".")
    nothing = render(await git_diff.unstaged_diffs(roots), roots, embedded=True)
    assert nothing.shown == (
        f"@diff: none ({plain}: not a git repository; git diff of the repository {one}: no unstaged changes; "
        f"{gone}: not a git repository)"
    )


async def test_two_roots_in_one_repository_give_one_diff_of_those_roots(tmp_path: Path) -> None:
    top = repo(tmp_path / "mono", {"web/w.txt": "w\n", "api/a.txt": "a\n", "out.txt": "o\n"})
    roots = [str(top / "web"), str(top / "api"), str(top / "web")]
    taken = await git_diff.unstaged_diffs(roots)
    assert taken.text.count("# git diff of the repository") == 1
    assert taken.text.startswith(
        f"# git diff of the repository {top}, only web/, api/ (paths relative to {top}):\n"
    )
    assert taken.text.count("diff --git a/web/w.txt b/web/w.txt\n") == 1
    assert "diff --git a/api/a.txt b/api/a.txt\n" in taken.text and "out.txt" not in taken.text
    assert shown_and_body(taken, roots)[0] == "@diff: 2 files"
    # The top among the roots: the whole repository, still once.
    whole = await git_diff.unstaged_diffs([str(top / "api"), str(top)])
    assert whole.text.startswith(f"# git diff of the repository {top} (paths relative to {top}):\n")
    assert whole.text.count("diff --git ") == 3


async def test_one_budget_for_all_and_the_cut_said_once(tmp_path: Path) -> None:
    big_text = "".join(f"line {i} of a long file\n" for i in range(6000))
    big = repo(tmp_path / "big", {"big.txt": big_text})
    (big / "big.txt").write_text(big_text.replace("line", "LINE"))
    small = repo(tmp_path / "small", {"s.txt": "s\n"})
    roots = [str(big), str(small)]
    taken = await git_diff.unstaged_diffs(roots)
    assert taken.cut and len(taken.text.encode()) <= git_diff.MAX_READ_BYTES
    assert taken.text.endswith(f"# git diff of the repository {small}: not sent (over the size limit)\n")
    assert taken.total_bytes > 2 * len(big_text)  # both repositories' whole size
    shown, body = shown_and_body(taken, roots)
    assert shown == "@diff: 1 file (cut)"
    assert body.count("[cut:") == 1
    assert body.endswith(f"[cut: the diff is {taken.total_bytes // 1024} KiB, only the first part is sent]")
    # The small one first: sent whole, the big one cut at a line's end.
    taken = await git_diff.unstaged_diffs([str(small), str(big)])
    assert taken.cut and "diff --git a/s.txt b/s.txt\n" in taken.text and taken.text.endswith("\n")
    assert len(taken.text.encode()) <= git_diff.MAX_READ_BYTES


async def test_one_folder_gives_what_it_always_gave(tmp_path: Path) -> None:
    one = repo(tmp_path / "one", {"a.txt": "a\n"})
    alone = await git_diff.unstaged_diffs([str(one), str(one)])
    assert alone == await git_diff.unstaged_diff(str(one))
    assert alone.text.startswith("diff --git a/a.txt b/a.txt\n")
    raw = await git_diff.with_diffs([{"kind": "diff", "mention": True}], [str(one), str(tmp_path)])
    assert isinstance(raw, list) and raw[0]["text"].startswith(f"# git diff of the repository {one} ")

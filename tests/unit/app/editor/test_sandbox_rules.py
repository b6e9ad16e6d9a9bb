"""The sandbox decides on real paths: real temp folders, real symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_nvim.app.editor.sandbox_rules import PathRefused, Sandbox, Verdict, resolve


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    project = tmp_path / "project"
    extra = tmp_path / "extra"
    outside = tmp_path / "outside"
    for d in (project / "src", extra, outside):
        d.mkdir(parents=True)
    (project / "src" / "main.py").write_text("print(1)\n")
    (outside / "secret.txt").write_text("secret\n")
    return {"root": tmp_path, "project": project, "extra": extra, "outside": outside}


def test_inside_roots_is_allowed_also_for_files_not_yet_there(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"]), str(tree["extra"])])
    assert sb.check(str(tree["project"] / "src" / "main.py")) is Verdict.ALLOW
    assert sb.check(str(tree["project"] / "new" / "deep" / "file.txt")) is Verdict.ALLOW
    assert sb.check(str(tree["extra"] / "notes.md")) is Verdict.ALLOW
    assert sb.check(str(tree["project"])) is Verdict.ALLOW


def test_outside_follows_the_policy(tree: dict[str, Path]) -> None:
    target = str(tree["outside"] / "secret.txt")
    assert Sandbox([str(tree["project"])]).check(target) is Verdict.ASK
    assert Sandbox([str(tree["project"])], outside="deny").check(target) is Verdict.DENY
    assert Sandbox([str(tree["project"])], outside="allow").check(target) is Verdict.ALLOW
    with pytest.raises(ValueError):
        Sandbox([str(tree["project"])], outside="maybe")  # type: ignore[arg-type]


def test_a_sibling_with_a_common_prefix_is_not_inside(tree: dict[str, Path]) -> None:
    sibling = tree["root"] / "project-other"
    sibling.mkdir()
    assert Sandbox([str(tree["project"])]).check(str(sibling / "x")) is Verdict.ASK


def test_relative_and_nul_paths_are_denied(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"])], outside="allow")
    assert sb.check("src/main.py") is Verdict.DENY
    assert sb.check(str(tree["project"]) + "/a\0b") is Verdict.DENY


def test_escape_through_dotdot_is_refused(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"])], outside="allow")
    sneaky = f"{tree['project']}/src/../../outside/secret.txt"
    assert sb.check(sneaky) is Verdict.DENY
    # Written outside from the start is just outside.
    assert sb.check(str(tree["outside"] / "secret.txt")) is Verdict.ALLOW
    # `..` that stays inside is fine.
    assert sb.check(f"{tree['project']}/src/../README.md") is Verdict.ALLOW


def test_escape_through_a_symlink_is_refused(tree: dict[str, Path]) -> None:
    link_dir = tree["project"] / "link"
    link_dir.symlink_to(tree["outside"], target_is_directory=True)
    link_file = tree["project"] / "secret-link.txt"
    link_file.symlink_to(tree["outside"] / "secret.txt")
    dangling = tree["project"] / "dangling"
    dangling.symlink_to(tree["outside"] / "will-be-created.txt")
    sb = Sandbox([str(tree["project"])], outside="allow")
    assert sb.check(str(link_dir / "secret.txt")) is Verdict.DENY
    assert sb.check(str(link_dir / "new-file.txt")) is Verdict.DENY
    assert sb.check(str(link_file)) is Verdict.DENY
    assert sb.check(str(dangling)) is Verdict.DENY


def test_symlink_inside_to_inside_is_allowed(tree: dict[str, Path]) -> None:
    (tree["project"] / "alias").symlink_to(tree["project"] / "src", target_is_directory=True)
    sb = Sandbox([str(tree["project"])], outside="deny")
    assert sb.check(str(tree["project"] / "alias" / "main.py")) is Verdict.ALLOW


def test_root_given_through_a_symlink(tree: dict[str, Path]) -> None:
    alias = tree["root"] / "project-alias"
    alias.symlink_to(tree["project"], target_is_directory=True)
    sb = Sandbox([str(alias)], outside="ask")
    assert sb.roots == [os.path.realpath(tree["project"])]
    assert sb.check(str(tree["project"] / "src" / "main.py")) is Verdict.ALLOW
    assert sb.check(str(alias / "src" / "main.py")) is Verdict.ALLOW
    assert sb.check(f"{alias}/../outside/secret.txt") is Verdict.DENY


def test_remembered_answers_and_allow_lists(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"])], allow=[str(tree["outside"])], outside="ask")
    secret = str(tree["outside"] / "secret.txt")
    assert sb.check(secret) is Verdict.ALLOW
    sb.remember(secret, allow=False)
    assert sb.check(secret) is Verdict.DENY
    assert sb.check(str(tree["outside"] / "other.txt")) is Verdict.ALLOW
    sb.forget(secret)
    assert sb.check(secret) is Verdict.ALLOW

    elsewhere = tree["root"] / "elsewhere"
    elsewhere.mkdir()
    assert sb.check(str(elsewhere / "a.txt")) is Verdict.ASK
    sb.remember(str(elsewhere), allow=True)
    assert sb.check(str(elsewhere / "a.txt")) is Verdict.ALLOW
    # A "never" for a file inside the project wins over the root.
    main = str(tree["project"] / "src" / "main.py")
    sb.remember(main, allow=False)
    assert sb.check(main) is Verdict.DENY


def test_remembered_answer_applies_to_the_real_path(tree: dict[str, Path]) -> None:
    link = tree["root"] / "to-outside"
    link.symlink_to(tree["outside"], target_is_directory=True)
    sb = Sandbox([str(tree["project"])], outside="ask")
    sb.remember(str(link), allow=True)
    assert sb.check(str(tree["outside"] / "secret.txt")) is Verdict.ALLOW
    # Through a link in the project it is an escape: a remembered "always" does not lift that (issue 15),
    # an entry of the configured allow list does.
    (tree["project"] / "out").symlink_to(tree["outside"], target_is_directory=True)
    assert sb.check(str(tree["project"] / "out" / "secret.txt")) is Verdict.DENY
    configured = Sandbox([str(tree["project"])], allow=[str(tree["outside"])], outside="deny")
    assert configured.check(str(tree["project"] / "out" / "secret.txt")) is Verdict.ALLOW


def test_deny_list_beats_roots(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"])], deny=[str(tree["project"] / "src")])
    assert sb.check(str(tree["project"] / "src" / "main.py")) is Verdict.DENY
    assert sb.check(str(tree["project"] / "README.md")) is Verdict.ALLOW


def test_relative_roots_and_rules_are_rejected(tree: dict[str, Path]) -> None:
    with pytest.raises(ValueError):
        Sandbox(["relative"])
    sb = Sandbox([str(tree["project"])])
    with pytest.raises(ValueError):
        sb.remember("relative", allow=True)


# ---- issue 15: the path checked is the path opened ---------------------------------------------------------


def test_symlink_then_dotdot_resolves_as_the_kernel_does(tree: dict[str, Path]) -> None:
    project = tree["project"]
    (project / "x" / "y").mkdir(parents=True)
    (project / "l").symlink_to(project / "x" / "y", target_is_directory=True)
    (project / "outside").mkdir()
    (project / "outside" / "secret.txt").write_text("inside after all\n")
    written = f"{project}/l/../../outside/secret.txt"
    # `..` goes to the parent of the link's target: the file the kernel opens for that spelling.
    assert resolve(written) == os.path.realpath(project / "outside" / "secret.txt")
    assert os.path.samefile(written, resolve(written))
    assert Sandbox([str(project)], outside="deny").check(written) is Verdict.ALLOW
    # Not the file a lexical fold of `..` names.
    assert not os.path.samefile(resolve(written), tree["outside"] / "secret.txt")
    # A file not there yet: resolved the same way, for the write that creates it.
    assert resolve(f"{project}/l/../../outside/new.txt") == f"{os.path.realpath(project)}/outside/new.txt"


def test_nothing_in_a_path_is_expanded(tree: dict[str, Path]) -> None:
    project = os.path.realpath(tree["project"])
    for name in ("notes$HOME.txt", "${HOME}.txt", "~", "~root", "a$PWD"):
        assert resolve(f"{project}/{name}") == f"{project}/{name}"


@pytest.mark.parametrize(
    "path",
    [
        "/proc/self/cwd/secret.txt",
        "/proc/self",
        "/proc/thread-self/root/etc/passwd",
        "/proc/1/root",
        f"/proc/{os.getpid()}/cwd",
        f"/proc/{os.getpid()}/fd/0",
        "/dev/fd/0",
        "/dev/stdin",
        "/proc/net/dev",
    ],
)
def test_process_relative_paths_are_refused(tree: dict[str, Path], path: str) -> None:
    with pytest.raises(PathRefused) as refused:
        resolve(path)
    assert refused.value.reason == "process_relative"
    assert "relative to a process" in refused.value.message
    assert Sandbox([str(tree["project"])], outside="allow").check(path) is Verdict.DENY


def test_proc_files_of_no_process_are_just_outside(tree: dict[str, Path]) -> None:
    assert resolve("/proc/cpuinfo") == "/proc/cpuinfo"
    assert Sandbox([str(tree["project"])]).check("/proc/cpuinfo") is Verdict.ASK


def test_absurd_paths_are_refused_before_any_file_system_call(
    tree: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = os.path.realpath(tree["project"])
    longest = "/" + "/".join(["b" * 255] * 16)
    assert len(longest) == 4096
    fine = [f"{project}/{'a' * 255}", "/a" * 256, longest]
    for path in fine:
        assert resolve(path) == path
    too_long = {
        "/x" * 10_000: "20000 bytes, the limit is 4096 (PATH_MAX)",
        longest + "/x": "4098 bytes",
        f"{project}/{'a' * 256}": "256 bytes, the limit is 255 (NAME_MAX)",
        f"{project}/{'é' * 128}": "256 bytes, the limit is 255 (NAME_MAX)",
        "/a" * 257: "257 components, the limit is 256",
    }

    def no_file_system(*args: object) -> None:
        raise AssertionError(f"file system call for a refused path: {args!r:.80}")

    monkeypatch.setattr(os, "lstat", no_file_system)
    monkeypatch.setattr(os, "readlink", no_file_system)
    for path, why in too_long.items():
        with pytest.raises(PathRefused) as refused:
            resolve(path)
        assert refused.value.reason == "path_too_long"
        assert why in refused.value.message
        # The message never echoes the whole path back.
        assert len(refused.value.message) < 300
    for path, why in {
        "relative/x": "absolute",
        "": "non-empty",
        f"{project}/a\0b": "NUL",
        f"{project}/\udcff": "UTF-8",
    }.items():
        with pytest.raises(PathRefused) as refused:
            resolve(path)
        assert why in refused.value.message


def test_a_symlink_loop_is_refused(tree: dict[str, Path]) -> None:
    project = tree["project"]
    (project / "a").symlink_to(project / "b")
    (project / "b").symlink_to(project / "a")
    with pytest.raises(PathRefused) as refused:
        resolve(str(project / "a" / "x"))
    assert refused.value.reason == "symlink_loop"
    assert Sandbox([str(project)]).check(str(project / "a")) is Verdict.DENY


def test_always_holds_for_the_action_asked_only(tree: dict[str, Path]) -> None:
    sb = Sandbox([str(tree["project"])])
    secret = str(tree["outside"] / "secret.txt")
    sb.remember(secret, True, "read")
    assert sb.check(secret, "read") is Verdict.ALLOW
    assert sb.check(secret, "write") is Verdict.ASK
    assert sb.check(str(tree["outside"] / "other.txt"), "read") is Verdict.ASK
    sb.remember(secret, True, "write")
    assert sb.check(secret, "write") is Verdict.ALLOW


def test_an_escape_is_refused_even_after_a_grant(tree: dict[str, Path]) -> None:
    project, outside = tree["project"], tree["outside"]
    secret = str(outside / "secret.txt")
    sneaky = f"{project}/../outside/secret.txt"
    sb = Sandbox([str(project)])
    sb.remember(secret, True, "read")
    sb.remember(str(outside), True)
    assert sb.check(secret, "read") is Verdict.ALLOW
    assert sb.check(sneaky, "read") is Verdict.DENY
    # Not even the configured allow list opens a `..` escape: the agent can name the real path.
    listed = Sandbox([str(project)], allow=[str(outside)])
    assert listed.check(secret, "read") is Verdict.ALLOW
    assert listed.check(sneaky, "read") is Verdict.DENY

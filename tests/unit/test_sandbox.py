"""The sandbox decides on real paths: real temp folders, real symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_nvim.client.sandbox import Sandbox, Verdict


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

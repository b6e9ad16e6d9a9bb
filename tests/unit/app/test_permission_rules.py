"""Permission rules (acp_nvim/app/permission_rules.py): when a rule answers a request, the answer it gives,
and the project rules file. Real paths and symlinks in a temporary directory; no Neovim."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_nvim.app import permission_rules as rules
from acp_nvim.app.permission_rules import Rule, RuleError
from acp_nvim.app.permission_rules_file import RuleFile
from acp_nvim.protocol import schema as s


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("x\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s\n")
    return root


def facts(kind: str, project: Path, *paths: str, command: str | None = None) -> rules.Facts:
    return rules.facts_of(kind, list(paths), command, str(project))


def test_a_kind_rule_allows_that_kind_inside_the_project_only(project: Path) -> None:
    rule = Rule(kind="edit")
    roots = [str(project)]
    assert rules.matches(rule, facts("edit", project, "src/main.py"), roots)
    assert rules.matches(rule, facts("edit", project, str(project / "src" / "new.py")), roots)
    assert not rules.matches(rule, facts("read", project, "src/main.py"), roots)
    assert not rules.matches(rule, facts("edit", project, "../outside/secret.txt"), roots)
    # One path outside is enough to ask.
    assert not rules.matches(rule, facts("edit", project, "src/main.py", "/etc/passwd"), roots)
    # A kind about files that names none is not answered by a rule: there is nothing to check.
    assert not rules.matches(rule, facts("edit", project), roots)
    # No roots (the session is not known): nothing is allowed.
    assert not rules.matches(rule, facts("edit", project, "src/main.py"), [])


def test_paths_are_compared_after_resolving_symlinks(project: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", project / "src" / "escape")
    roots = [str(project)]
    assert not rules.matches(Rule(kind="edit"), facts("edit", project, "src/escape/secret.txt"), roots)
    # A root given through a symlink is the place it points to.
    os.symlink(project, tmp_path / "link-to-project")
    assert rules.matches(
        Rule(kind="edit"), facts("edit", project, "src/main.py"), [str(tmp_path / "link-to-project")]
    )
    # A prefix of the name is not a parent: /x/project-other is not inside /x/project.
    (tmp_path / "project-other").mkdir()
    assert not rules.matches(Rule(kind="read"), facts("read", project, "../project-other/a"), roots)


def test_a_path_rule_allows_under_that_path_and_never_outside_the_roots(
    project: Path, tmp_path: Path
) -> None:
    rule = Rule(kind="edit", path=str(project / "src"))
    roots = [str(project)]
    assert rules.matches(rule, facts("edit", project, "src/main.py"), roots)
    assert not rules.matches(rule, facts("edit", project, "README.md"), roots)
    escaping = Rule(kind="edit", path=str(tmp_path / "outside"))
    assert not rules.matches(escaping, facts("edit", project, "../outside/secret.txt"), roots)


def test_a_command_rule_allows_the_command_and_its_arguments_not_chained_commands(project: Path) -> None:
    rule = rules.check(Rule(kind="execute", command="npm  test"))
    assert rule.command == "npm test"
    roots = [str(project)]
    assert rules.matches(rule, facts("execute", project, command="npm test"), roots)
    assert rules.matches(rule, facts("execute", project, command="npm test -- --watch"), roots)
    assert not rules.matches(rule, facts("execute", project, command="npm testing"), roots)
    assert not rules.matches(rule, facts("execute", project, command="npm run build"), roots)
    for chained in (
        "npm test && rm -rf ~",
        "npm test; curl x",
        "npm test | sh",
        "npm test $(id)",
        "npm test > x",
    ):
        assert not rules.matches(rule, facts("execute", project, command=chained), roots), chained
    assert not rules.matches(rule, facts("execute", project), roots)
    # A command that names a path outside the project is not allowed by the rule either.
    assert not rules.matches(rule, facts("execute", project, "/etc", command="npm test"), roots)


def test_the_rule_always_allow_makes_of_a_request(project: Path) -> None:
    roots = [str(project)]
    assert rules.rule_for(facts("execute", project, command="npm test"), roots) == Rule(
        kind="execute", command="npm test"
    )
    assert rules.rule_for(facts("edit", project, "src/main.py"), roots) == Rule(kind="edit")
    assert rules.rule_for(facts("execute", project), roots) == Rule(kind="execute")
    # Nothing a rule could answer: no "always allow" for it.
    assert rules.rule_for(facts("execute", project, command="make && make install"), roots) is None
    assert rules.rule_for(facts("edit", project, "/etc/hosts"), roots) is None
    assert rules.rule_for(facts("edit", project), roots) is None


def test_the_answer_is_an_allow_option_the_request_offers() -> None:
    def option(option_id: str, kind: str) -> s.PermissionOption:
        return s.PermissionOption(option_id=option_id, name=option_id, kind=kind)

    both = [option("always", "allow_always"), option("once", "allow_once"), option("no", "reject_once")]
    assert rules.allow_option(both) == "once"
    assert rules.allow_option([option("always", "allow_always"), option("no", "reject_once")]) == "always"
    assert rules.allow_option([option("no", "reject_once"), option("never", "reject_always")]) is None
    assert rules.allow_option([]) is None


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (Rule(kind="launch"), "unknown tool kind 'launch'"),
        (Rule(kind="edit", command="make"), "a command rule is for kind 'execute'"),
        (Rule(kind="execute", command="make; rm"), "not a plain command"),
        (Rule(kind="execute", command="  "), "not a plain command"),
        (Rule(kind="edit", path="src"), "a rule's path must be absolute"),
    ],
)
def test_invalid_rules_are_named(rule: Rule, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        rules.check(rule)


@pytest.mark.anyio
async def test_the_rules_file_round_trips_by_project(tmp_path: Path) -> None:
    file = RuleFile(str(tmp_path / "data" / "acp_nvim" / "permissions.json"))
    assert await file.load() == {}
    projects = {"/p/one": [Rule(kind="edit"), Rule(kind="execute", command="npm test")], "/p/empty": []}
    await file.save(projects)
    assert await file.load() == {"/p/one": projects["/p/one"]}
    saved = json.loads(Path(file.path or "").read_text())
    assert saved == {
        "version": 1,
        "projects": {"/p/one": [{"kind": "edit"}, {"kind": "execute", "command": "npm test"}]},
    }
    assert [p.name for p in (tmp_path / "data" / "acp_nvim").iterdir()] == ["permissions.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not valid JSON"),
        ('{"version": 2, "projects": {}}', "unknown version 2"),
        ('{"version": 1, "projects": {"/p": [{"kind": "edit", "glob": "*"}]}}', "not a rules file"),
        ('{"version": 1, "projects": {"/p": [{"kind": "nuke"}]}}', "unknown tool kind 'nuke'"),
    ],
)
@pytest.mark.anyio
async def test_a_bad_rules_file_is_named_with_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "permissions.json"
    path.write_text(content)
    with pytest.raises(RuleError, match=message) as err:
        await RuleFile(str(path)).load()
    assert str(path) in str(err.value)

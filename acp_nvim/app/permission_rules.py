"""Permission rules the user made ("always allow edits in this project", "always allow `npm test`"): what a
rule is, when it answers a request, and the file the project rules are kept in. Neovim-free, no I/O but the
one file (`RuleFile`).

A rule names a tool kind and, optionally, a command prefix (for `execute`) or a path (a file or directory
inside the project). It matches a request of its kind when
- every path the tool call names (its locations and diffs, resolved: symlinks followed, relative to the
  session's cwd) is inside the session's sandbox roots, whatever the rule says: a rule never allows
  anything outside them; a kind that reads or changes files must name at least one path;
- with a path, every one of those paths is inside it;
- with a command, the tool call's command is that command or starts with it and a space, and contains no
  shell operator (`;`, `&`, `|`, `` ` ``, `$(`, `>`, `<`, a newline) that could chain another command to it.

A request a rule matches is answered with an allow option the request offers (`allow_once` first: the agent
keeps asking, so a revoked rule stops answering at once; else `allow_always`), never one invented; with no
allow option it is asked as usual.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Literal

import msgspec

from acp_nvim.protocol import schema as s

Scope = Literal["session", "project"]

KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")
# Kinds about files: a rule answers them only for named paths it can check.
FILE_KINDS = frozenset({"read", "edit", "delete", "move"})
ALLOW_KINDS = ("allow_once", "allow_always")
SHELL_OPERATORS = re.compile(r"[;&|`<>\n]|\$\(")
FILE_VERSION = 1


class Rule(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    kind: str
    command: str | None = None
    path: str | None = None

    def describe(self) -> str:
        if self.command is not None:
            return f"`{self.command}`"
        if self.path is not None:
            return f"{self.kind} in {self.path}"
        return self.kind


class RuleError(ValueError):
    """A rule or rules file that is not valid; str() names what is wrong."""


def check(rule: Rule) -> Rule:
    if rule.kind not in KINDS:
        raise RuleError(f"unknown tool kind {rule.kind!r} (one of {', '.join(KINDS)})")
    if rule.command is not None:
        if rule.kind != "execute":
            raise RuleError(f"a command rule is for kind 'execute', not {rule.kind!r}")
        command = " ".join(rule.command.split())
        if not command or SHELL_OPERATORS.search(command):
            raise RuleError(f"not a plain command: {rule.command!r}")
        rule = Rule(kind=rule.kind, command=command)
    if rule.path is not None and not os.path.isabs(rule.path):
        raise RuleError(f"a rule's path must be absolute: {rule.path!r}")
    return rule


class Facts(msgspec.Struct, frozen=True):
    """What a rule is matched against: the tool call's kind, its paths (resolved) and its command."""

    kind: str
    paths: tuple[str, ...]
    command: str | None


def resolve(path: str, cwd: str) -> str:
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def facts_of(kind: str, paths: Sequence[str], command: str | None, cwd: str) -> Facts:
    normalized = " ".join(command.split()) if command else None
    return Facts(kind=kind, paths=tuple(resolve(path, cwd) for path in paths), command=normalized or None)


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _in_roots(paths: Sequence[str], roots: Sequence[str]) -> bool:
    resolved = [os.path.realpath(root) for root in roots]
    return all(any(_inside(path, root) for root in resolved) for path in paths)


def matches(rule: Rule, facts: Facts, roots: Sequence[str]) -> bool:
    if rule.kind != facts.kind or not roots:
        return False
    if not _in_roots(facts.paths, roots):
        return False
    if facts.kind in FILE_KINDS and not facts.paths:
        return False
    if rule.path is not None:
        base = os.path.realpath(rule.path)
        if not facts.paths or not _in_roots([base], roots):
            return False
        if not all(_inside(path, base) for path in facts.paths):
            return False
    if rule.command is not None:
        command = facts.command
        if command is None or SHELL_OPERATORS.search(command):
            return False
        if command != rule.command and not command.startswith(rule.command + " "):
            return False
    return True


def rule_for(facts: Facts, roots: Sequence[str]) -> Rule | None:
    """The rule "always allow this" makes of a request: its command for a command, else its kind; None
    when no rule could match it (a path outside the roots, a file kind without paths, a chained command)."""
    if facts.kind not in KINDS:
        return None
    if facts.kind == "execute" and facts.command is not None:
        if SHELL_OPERATORS.search(facts.command):
            return None
        rule = Rule(kind="execute", command=facts.command)
    else:
        rule = Rule(kind=facts.kind)
    return rule if matches(rule, facts, roots) else None


def parse_allow(args: Sequence[str], cwd: str, roots: Sequence[str]) -> tuple[Scope, Rule]:
    """`[session|project] KIND [PATH | COMMAND...]` (`:AcpPermissions allow ...`): a path is relative to the
    session's cwd and must be inside its roots; the rest of the line after `execute` is a command prefix."""
    words = list(args)
    scope: Scope = "session"
    if words and words[0] in ("session", "project"):
        scope = "project" if words.pop(0) == "project" else "session"
    if not words:
        raise RuleError("name a tool kind to allow")
    kind, rest = words[0], words[1:]
    if kind == "execute" and rest:
        return scope, check(Rule(kind=kind, command=" ".join(rest)))
    if len(rest) > 1:
        raise RuleError(f"one path, not {len(rest)}: {' '.join(rest)}")
    if not rest:
        return scope, check(Rule(kind=kind))
    path = resolve(rest[0], cwd)
    if not _in_roots([path], roots):
        raise RuleError(f"{path} is outside the session's directories ({', '.join(roots)})")
    return scope, check(Rule(kind=kind, path=path))


def allow_option(options: Sequence[s.PermissionOption]) -> str | None:
    """The option id a rule answers with; None when the request offers no allow option."""
    for kind in ALLOW_KINDS:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


# ---- the project rules file ----------------------------------------------------------------------------


class _File(msgspec.Struct, forbid_unknown_fields=True):
    version: int
    # Project root (resolved) -> its rules.
    projects: dict[str, list[Rule]] = {}


_decoder = msgspec.json.Decoder(_File)


def decode(data: bytes) -> dict[str, list[Rule]]:
    try:
        parsed = _decoder.decode(data)
    except msgspec.ValidationError as err:
        raise RuleError(f"not a rules file: {err}") from None
    except msgspec.DecodeError as err:
        raise RuleError(f"not valid JSON: {err}") from None
    if parsed.version != FILE_VERSION:
        raise RuleError(f"unknown version {parsed.version} (expected {FILE_VERSION})")
    return {root: [check(rule) for rule in rules] for root, rules in parsed.projects.items()}


def encode(projects: dict[str, list[Rule]]) -> bytes:
    kept = {root: rules for root, rules in sorted(projects.items()) if rules}
    return msgspec.json.format(msgspec.json.encode(_File(version=FILE_VERSION, projects=kept)), indent=2)


class RuleFile:
    """The project rules, by project root, in one JSON file (under Neovim's stdpath("data")). Read afresh
    before each use: another Neovim may have changed it; written through a temporary file and a rename."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path

    def load(self) -> dict[str, list[Rule]]:
        if self.path is None or not os.path.exists(self.path):
            return {}
        try:
            with open(self.path, "rb") as file:
                return decode(file.read())
        except OSError as err:
            raise RuleError(f"cannot read {self.path}: {err.strerror}") from None
        except RuleError as err:
            raise RuleError(f"{self.path}: {err}") from None

    def save(self, projects: dict[str, list[Rule]]) -> None:
        if self.path is None:
            raise RuleError("no place to keep project rules (the host was not told Neovim's data directory)")
        temp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            with open(temp, "wb") as file:
                file.write(encode(projects))
            os.replace(temp, self.path)
        except OSError as err:
            raise RuleError(f"cannot write {self.path}: {err.strerror}") from None

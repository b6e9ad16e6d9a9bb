"""Permission rules the user made ("always allow edits in this project", "always allow `npm test`"): what a
rule is and when it answers a request. Neovim-free, no I/O but resolving paths (the rules file is
`permission_rules_file.py`).

A rule names a tool kind and, optionally, a command or a path (a file or directory inside the project); an
`execute` rule must name a command. It matches a request of its kind when
- every path the request names (`Facts.paths`: its locations, its diffs, the paths of its `rawInput` as
  `request_paths.py` reads them and a command's words that look like paths; resolved: symlinks followed,
  relative to the session's cwd) is inside the session's sandbox roots, whatever the rule says: a rule never
  allows anything outside them; a request whose paths cannot all be read (`Facts.unseen`) is never matched;
  a kind that reads or changes files must name at least one path;
- a request whose `rawInput` runs a command is matched only by an `execute` rule, whatever its kind says;
- with a path, every one of those paths is inside it;
- with a command (always, for `execute`: a request that states no command in its `rawInput`, gemini-cli's
  `run_shell_command` among them, is never allowed by a rule; its title is display text, not what runs), the
  request's command is exactly one simple command (`shell_words.py`: no newline,
  comment, operator, substitution, redirection, glob, assignment; `sh -c` looked through) whose words
  begin with the rule's words, and its `rawInput` says nothing else of how it runs
  (`request_paths.command_trouble`).

A request a rule matches is answered with an allow option the request offers (`allow_once` first: the agent
keeps asking, so a revoked rule stops answering at once; else `allow_always`), never one invented; with no
allow option it is asked as usual.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

import msgspec

from acp_nvim.app.permissions import request_paths, shell_words
from acp_nvim.client.session.tool_calls import TOOL_KINDS
from acp_nvim.protocol import schema as s

Scope = Literal["session", "project"]

KINDS = TOOL_KINDS
# Kinds about files: a rule answers them only for named paths it can check.
FILE_KINDS = frozenset({"read", "edit", "delete", "move"})
ALLOW_KINDS = ("allow_once", "allow_always")
# A longer command is asked about, never read by the shell-word reader (8 MB took it 4 s).
MAX_JUDGED_COMMAND_CHARS = 64 * 1024


class Rule(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    kind: str
    command: str | None = None
    path: str | None = None

    @property
    def allows_nothing(self) -> bool:
        """An `execute` rule without a command (made by versions that offered one): it would allow any
        command, so it is kept where it is, listed (to be revoked) and never applied."""
        return self.kind == "execute" and self.command is None

    def describe(self) -> str:
        if self.allows_nothing:
            where = f" in {self.path}" if self.path is not None else ""
            return f"{self.kind}{where} (names no command: allows nothing)"
        if self.command is not None:
            return f"`{self.command}`"
        if self.path is not None:
            return f"{self.kind} in {self.path}"
        return self.kind


class RuleError(ValueError):
    """A rule or rules file that is not valid; str() names what is wrong."""


NO_COMMAND = "an execute rule names the command it allows (`execute npm test`), never any command"


def check(rule: Rule, stored: bool = False) -> Rule:
    """`rule` made canonical, or RuleError; `stored`: read from a rules file, where an `execute` rule without
    a command is kept (it never applies: `Rule.allows_nothing`) rather than making the whole file unusable."""
    if rule.kind not in KINDS:
        raise RuleError(f"unknown tool kind {rule.kind!r} (one of {', '.join(KINDS)})")
    if rule.allows_nothing and not stored:
        raise RuleError(NO_COMMAND)
    if rule.command is not None:
        if rule.kind != "execute":
            raise RuleError(f"a command rule is for kind 'execute', not {rule.kind!r}")
        words = shell_words.command_words(rule.command)
        if words is None:
            raise RuleError(f"not a plain command: {rule.command!r}")
        if shell_words.starts_with_runner(words):
            raise RuleError(f"a rule for `{words[0]}` would allow any command it runs: {rule.command!r}")
        rule = Rule(kind=rule.kind, command=shell_words.join(words))
    if rule.path is not None and not os.path.isabs(rule.path):
        raise RuleError(f"a rule's path must be absolute: {rule.path!r}")
    return rule


class Facts(msgspec.Struct, frozen=True):
    """What a rule is matched against: the request's kind, every path it names (resolved), its command as
    written (None: it runs none), the words of that command when a rule may judge it (one simple command,
    nothing else in `rawInput` changing how it runs), and why some of its paths cannot be seen (None: all
    were read)."""

    kind: str
    paths: tuple[str, ...]
    command: str | None
    words: tuple[str, ...] | None = None
    unseen: str | None = None


def resolve(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd`, symlinks and `..` resolved; ValueError for a NUL in it."""
    path = path.removeprefix("file://")
    return os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))


def _path_words(words: Sequence[str]) -> list[str]:
    """A command's arguments that name paths a rule must check: absolute ones, `~`, `..` (also after `=`)."""
    named: list[str] = []
    for word in words[1:]:
        for part in (word, word.partition("=")[2]):
            if part.startswith(("/", "~")) or part == ".." or part.startswith("../") or "/../" in part:
                named.append(part)
    return named


def facts_of(
    kind: str,
    paths: Sequence[str],
    command: str | None,
    cwd: str,
    unseen: str | None = None,
    trouble: str | None = None,
) -> Facts:
    """`trouble`: why the command's `rawInput` says more than its command line (no command rule judges it)."""
    command = command if command and command.strip() else None
    if command is not None and len(command) > MAX_JUDGED_COMMAND_CHARS:
        # Read word by word it would hold the host for seconds; no command a rule allows is this long.
        trouble = trouble or "a command too long to judge"
    words = shell_words.command_words(command) if command is not None and trouble is None else None
    named = [*paths, *_path_words(words)] if words is not None else list(paths)
    if len(named) > request_paths.MAX_PATHS:
        unseen = unseen or f"more than {request_paths.MAX_PATHS} paths"
        named = []
    try:
        resolved = tuple(resolve(path, cwd) for path in named)
    except ValueError:
        resolved, unseen = (), unseen or "a path with a NUL byte"
    return Facts(
        kind=kind,
        paths=resolved,
        command=command,
        words=tuple(words) if words is not None else None,
        unseen=unseen,
    )


def _inside(path: str, base: str) -> bool:
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def _in_roots(paths: Sequence[str], roots: Sequence[str]) -> bool:
    resolved = [os.path.realpath(root) for root in roots]
    return all(any(_inside(path, root) for root in resolved) for path in paths)


def matches(rule: Rule, facts: Facts, roots: Sequence[str]) -> bool:
    if rule.kind != facts.kind or not roots or facts.unseen is not None or rule.allows_nothing:
        return False
    if facts.command is not None and facts.kind != "execute":
        # An "edit" (or "read", …) that runs a command: only a rule about commands may allow that.
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
        wanted = shell_words.simple_command(rule.command)
        if wanted is None or facts.words is None or list(facts.words[: len(wanted)]) != wanted:
            return False
    return True


def rule_for(facts: Facts, roots: Sequence[str]) -> Rule | None:
    """The rule "always allow this" makes of a request: its command for a command, else its kind; None
    when no rule could match it (a path outside the roots or unseen, a file kind without paths, an execute
    request that states no command, a command a rule cannot judge or one that runs whatever it is given)."""
    if facts.kind not in KINDS or (facts.kind == "execute" and facts.command is None):
        return None
    if facts.command is not None:
        if (
            facts.kind != "execute"
            or facts.words is None
            or shell_words.starts_with_runner(list(facts.words))
        ):
            return None
        rule = Rule(kind="execute", command=shell_words.join(list(facts.words)))
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
    try:
        path = resolve(rest[0], cwd)
    except ValueError:
        raise RuleError(f"not a path: {rest[0]!r}") from None
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

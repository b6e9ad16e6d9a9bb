"""The permission rules in use (`permission_rules.py` has what a rule is): a session's own, kept with the
session (a resumed session keeps them), and its project's, kept in the rules file; the answer they give a
request; the "always allow" choices added to a permission question; `:AcpPermissions` (list, revoke,
allow)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence

from acp_nvim.app.permissions import request_paths, rules
from acp_nvim.app.permissions.rules import Facts, Rule, RuleError, Scope
from acp_nvim.app.permissions.rules_file import RuleFile
from acp_nvim.app.port import ERROR, INFO, WARN, Choice, NeovimPort
from acp_nvim.app.runs import ChatSession, Runs
from acp_nvim.app.views import PermissionChoice
from acp_nvim.client.session.transcript import ToolCallItem
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.permissions")

# The ids of the choices added to a question; no agent's option id can be mistaken for them (the answer is
# checked against the request's own options first).
REMEMBER: dict[str, Scope] = {"acp_nvim:always:session": "session", "acp_nvim:always:project": "project"}
REMEMBER_KIND = "remember"
USAGE = "usage: :AcpPermissions [revoke N | allow [session|project] {kind} [{path} | {command}]]"

# Of a command or title, the picker's question shows at most this much.
MAX_SHOWN_COMMAND_CHARS = 1000

# A change of one project's rules.
_Change = Callable[[list[Rule]], list[Rule]]


def request_facts(cwd: str, item: ToolCallItem, tool_call: s.ToolCallUpdate) -> Facts:
    """What a permission request is about: its tool call's fields as the request states them, merged over
    the tool call's state as a ToolCallUpdate is (a field the request leaves out keeps its value), read from
    the request itself (not the chat's copy, which may be folded or cut)."""
    kind = tool_call.kind or item.kind
    locations = tool_call.locations if tool_call.locations is not None else item.locations
    content = tool_call.content if tool_call.content is not None else item.content
    raw = tool_call.raw_input if tool_call.raw_input is not None else item.raw_input
    paths = [location.path for location in locations]
    paths += [block.path for block in content if isinstance(block, s.ToolCallContentDiff)]
    named = request_paths.named_paths(raw)
    command = request_paths.command_line(raw)
    unseen = named.unseen
    if command is None and request_paths.names_command(raw):
        unseen = unseen or "a command of an unknown shape"
    trouble = request_paths.command_trouble(raw) if command is not None else None
    return rules.facts_of(kind, [*paths, *named.paths], command, cwd, unseen=unseen, trouble=trouble)


def one_line(command: str | None) -> str | None:
    """`command` (or a title) on one line, every character that is not plainly visible written as an escape,
    so that the question shows all that the shell would run and a title cannot pass for a command."""
    if command is None:
        return None
    shown = "".join(
        char
        if char == " " or (char.isprintable() and not char.isspace())
        else char.encode("unicode_escape").decode()
        for char in command[:MAX_SHOWN_COMMAND_CHARS]
    )
    if len(command) > MAX_SHOWN_COMMAND_CHARS:
        shown += f" … ({len(command) - MAX_SHOWN_COMMAND_CHARS} more characters)"
    return shown


class Permissions:
    def __init__(self, runs: Runs, port: NeovimPort) -> None:
        self._runs = runs
        self._port = port
        self.file = RuleFile()
        # The last trouble with the rules file the user was told about: said once, not on every request.
        self._reported: str | None = None
        # The rules allowing nothing (an execute rule without a command) the user was told about, by project.
        self._told_unused: set[tuple[str, Rule]] = set()

    # ---- a request --------------------------------------------------------------------------------

    @staticmethod
    def _roots(session: ChatSession) -> list[str]:
        return [session.cwd, *session.directories]

    @staticmethod
    def _project(session: ChatSession) -> str:
        return os.path.realpath(session.cwd)

    def facts(self, session: ChatSession, item: ToolCallItem, tool_call: s.ToolCallUpdate) -> Facts:
        return request_facts(session.cwd, item, tool_call)

    async def _project_rules(self, session: ChatSession) -> list[Rule]:
        try:
            projects = await self.file.load()
        except RuleError as err:
            if str(err) != self._reported:
                self._reported = str(err)
                log.warning("%s", err)
                self._port.notify(f"permission rules not used: {err}", WARN)
            return []
        self._reported = None
        project = self._project(session)
        kept = projects.get(project, [])
        for rule in kept:
            if rule.allows_nothing and (project, rule) not in self._told_unused:
                self._told_unused.add((project, rule))
                log.warning("the project rule %s of %s is not used", rule.describe(), project)
                self._port.notify(
                    f"the project rule 'always allow {rule.kind}' is not used: {rules.NO_COMMAND}"
                    " (revoke it with :AcpPermissions)",
                    WARN,
                )
        return kept

    async def rules_of(self, session: ChatSession) -> list[tuple[Scope, Rule]]:
        listed: list[tuple[Scope, Rule]] = [("session", rule) for rule in session.permission_rules]
        listed += [("project", r) for r in await self._project_rules(session)]
        return listed

    async def auto_answer(
        self, session: ChatSession, options: Sequence[s.PermissionOption], facts: Facts
    ) -> tuple[str, str] | None:
        """The option id a rule answers the request with, and how the chat says so; None: ask the user."""
        option_id = rules.allow_option(options)
        if option_id is None:
            return None
        roots = self._roots(session)
        for scope, rule in await self.rules_of(session):
            if rules.matches(rule, facts, roots):
                log.info("permission for %s allowed by the %s rule %s", facts.kind, scope, rule.describe())
                return option_id, f"allowed by the {scope} rule: always allow {rule.describe()}"
        return None

    def choices(
        self, session: ChatSession, options: Sequence[s.PermissionOption], facts: Facts
    ) -> list[PermissionChoice]:
        """The "always allow" choices for a request a rule could answer next time."""
        if rules.allow_option(options) is None or any(option.option_id in REMEMBER for option in options):
            return []
        rule = rules.rule_for(facts, self._roots(session))
        if rule is None:
            return []
        what = rule.describe()
        return [
            PermissionChoice(id=choice, name=f"Always allow {what} in this {scope}", kind=REMEMBER_KIND)
            for choice, scope in REMEMBER.items()
        ]

    async def settle(
        self,
        session: ChatSession,
        options: Sequence[s.PermissionOption],
        facts: Facts,
        outcome: s.RequestPermissionOutcome,
    ) -> s.RequestPermissionOutcome:
        """The answer for the agent: the user's choice, or for an "always allow" the rule kept and the
        request's own allow option."""
        if not isinstance(outcome, s.RequestPermissionOutcomeSelected):
            return outcome
        choice = outcome.option_id
        if choice not in REMEMBER or any(option.option_id == choice for option in options):
            return outcome
        return await self._remember(session, choice, options, facts)

    async def _remember(
        self, session: ChatSession, choice: str, options: Sequence[s.PermissionOption], facts: Facts
    ) -> s.RequestPermissionOutcome:
        option_id = rules.allow_option(options)
        rule = rules.rule_for(facts, self._roots(session))
        if option_id is None or rule is None:
            return s.RequestPermissionOutcomeCancelled()
        if REMEMBER[choice] == "session":
            if rule not in session.permission_rules:
                session.permission_rules.append(rule)
        else:
            try:
                await self._change_project(session, lambda kept: kept if rule in kept else [*kept, rule])
            except RuleError as err:
                self._port.notify(f"allowed this once; the rule is not kept: {err}", ERROR)
        return s.RequestPermissionOutcomeSelected(option_id=option_id)

    async def _change_project(self, session: ChatSession, change: _Change) -> None:
        projects = await self.file.load()
        root = self._project(session)
        projects[root] = change(projects.get(root, []))
        await self.file.save(projects)

    # ---- :AcpPermissions ----------------------------------------------------------------------------

    async def command(self, session_id: str | None, args: Sequence[str]) -> None:
        """No argument: the rules, one to revoke chosen in a picker; `revoke N`: revoke the N-th; `allow ...`:
        make a rule (`permission_rules.parse_allow`)."""
        current = self._runs.current(session_id)
        session = current.session
        if session is None:
            self._port.notify(current.missing or "", WARN)
            return
        listed = await self.rules_of(session)
        if args and args[0] == "revoke" and len(args) == 2 and args[1].isdigit():
            await self._revoke(session, listed, int(args[1]))
            return
        if args and args[0] == "allow":
            await self._add(session, args[1:])
            return
        if args:
            self._port.notify(USAGE, WARN)
            return
        if not listed:
            self._port.notify("no permission rules for this session or its project", INFO)
            return
        picks = [
            Choice(id=str(n), label=f"{n}. [{scope}] always allow {rule.describe()}")
            for n, (scope, rule) in enumerate(listed, 1)
        ]
        chosen = await self._port.select(
            "Permission rules (choose one to revoke)", picks, "acp_nvim.permissions"
        )
        if chosen is not None and chosen.isdigit():
            await self._revoke(session, await self.rules_of(session), int(chosen))

    async def _add(self, session: ChatSession, args: Sequence[str]) -> None:
        try:
            scope, rule = rules.parse_allow(args, session.cwd, self._roots(session))
            if scope == "session":
                if rule not in session.permission_rules:
                    session.permission_rules.append(rule)
            else:
                await self._change_project(session, lambda kept: kept if rule in kept else [*kept, rule])
        except RuleError as err:
            self._port.notify(f"no rule made: {err}", WARN)
            return
        self._port.notify(f"added the {scope} rule: always allow {rule.describe()}", INFO)

    async def _revoke(self, session: ChatSession, listed: list[tuple[Scope, Rule]], number: int) -> None:
        if not 1 <= number <= len(listed):
            self._port.notify(f"no permission rule {number} (there are {len(listed)})", WARN)
            return
        scope, rule = listed[number - 1]
        if scope == "session":
            if rule in session.permission_rules:
                session.permission_rules.remove(rule)
        else:
            try:
                await self._change_project(session, lambda kept: [other for other in kept if other != rule])
            except RuleError as err:
                self._port.notify(f"the rule is not revoked: {err}", ERROR)
                return
        self._port.notify(f"revoked the {scope} rule: always allow {rule.describe()}", INFO)

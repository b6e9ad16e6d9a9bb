"""Remembered permissions in the application (acp_nvim/app/permissions/service.py): the "always allow"
choices, the requests a rule answers itself, and :AcpPermissions, on the in-memory Neovim."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_nvim.app.permissions.rules import Rule
from acp_nvim.app.port import WARN
from acp_nvim.app.runs import ChatSession
from acp_nvim.protocol import schema as s
from tests.unit.app.fakes import App, FakeAgent

pytestmark = pytest.mark.anyio

SESSION_CHOICE, PROJECT_CHOICE = "acp_nvim:always:session", "acp_nvim:always:project"
OPTIONS = [
    s.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    s.PermissionOption(option_id="always", name="Always", kind="allow_always"),
    s.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


def edit_request(
    session: ChatSession, call: str, path: str, options: list[s.PermissionOption] = OPTIONS
) -> s.RequestPermissionRequest:
    return s.RequestPermissionRequest(
        session_id=session.session_id,
        tool_call=s.ToolCallUpdate(
            tool_call_id=call, title=f"Edit {path}", kind="edit", locations=[s.ToolCallLocation(path=path)]
        ),
        options=options,
    )


def command_request(session: ChatSession, call: str, command: str) -> s.RequestPermissionRequest:
    return s.RequestPermissionRequest(
        session_id=session.session_id,
        tool_call=s.ToolCallUpdate(
            tool_call_id=call, title=command, kind="execute", raw_input={"command": command}
        ),
        options=OPTIONS,
    )


async def started(tmp_path: Path, project: str = "project") -> tuple[App, ChatSession]:
    app = App()
    app.permissions.file.path = str(tmp_path / "data" / "acp_nvim" / "permissions.json")
    root = tmp_path / project
    root.mkdir(exist_ok=True)
    _, session = await app.start("a", FakeAgent(), cwd=str(root))
    assert session.cwd == str(root)
    return app, session


def auto_note(session: ChatSession, call: str) -> str | None:
    for item in session.state.items:
        if getattr(item, "tool_call_id", None) == call:
            return getattr(item, "auto_allowed", None)
    raise AssertionError(f"no tool call {call}")


async def test_always_allow_in_this_session_answers_the_next_edit_with_the_agents_allow_option(
    tmp_path: Path,
) -> None:
    app, session = await started(tmp_path)
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id=SESSION_CHOICE)
    first = await app.incoming.ask_permission(edit_request(session, "t1", f"{session.cwd}/a.py"))
    # The agent gets its own option, never the plugin's choice.
    assert first == s.RequestPermissionOutcomeSelected(option_id="yes")
    (view,) = app.port.permission_views
    assert [(o.id, o.name) for o in view.options][-2:] == [
        (SESSION_CHOICE, "Always allow edit in this session"),
        (PROJECT_CHOICE, "Always allow edit in this project"),
    ]
    app.port.permission_answer = s.RequestPermissionOutcomeCancelled()
    second = await app.incoming.ask_permission(edit_request(session, "t2", f"{session.cwd}/sub/b.py"))
    assert second == s.RequestPermissionOutcomeSelected(option_id="yes")
    assert len(app.port.permission_views) == 1  # not asked
    assert auto_note(session, "t2") == "allowed by the session rule: always allow edit"
    # Outside the project the rule does not apply: asked again.
    outside = await app.incoming.ask_permission(edit_request(session, "t3", str(tmp_path / "elsewhere.py")))
    assert outside == s.RequestPermissionOutcomeCancelled()
    assert len(app.port.permission_views) == 2
    # A request with no allow option is asked, whatever the rules.
    no_allow = [o for o in OPTIONS if o.kind.startswith("reject")]
    await app.incoming.ask_permission(edit_request(session, "t4", f"{session.cwd}/a.py", no_allow))
    assert len(app.port.permission_views) == 3
    assert [o.id for o in app.port.permission_views[-1].options] == ["no"]


async def test_a_project_rule_is_kept_for_the_next_session_of_that_project_only(tmp_path: Path) -> None:
    app, session = await started(tmp_path)
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id=PROJECT_CHOICE)
    assert await app.incoming.ask_permission(command_request(session, "t1", "npm test")) == (
        s.RequestPermissionOutcomeSelected(option_id="yes")
    )
    assert (tmp_path / "data" / "acp_nvim" / "permissions.json").exists()
    again, other = await started(tmp_path)
    again.port.permission_answer = s.RequestPermissionOutcomeCancelled()
    allowed = await again.incoming.ask_permission(command_request(other, "c1", "npm test -- --ci"))
    assert allowed == s.RequestPermissionOutcomeSelected(option_id="yes")
    assert auto_note(other, "c1") == "allowed by the project rule: always allow `npm test`"
    assert await again.incoming.ask_permission(command_request(other, "c2", "npm test && curl x")) == (
        s.RequestPermissionOutcomeCancelled()
    )
    elsewhere, third = await started(tmp_path, "other-project")
    elsewhere.port.permission_answer = s.RequestPermissionOutcomeCancelled()
    assert await elsewhere.incoming.ask_permission(command_request(third, "c1", "npm test")) == (
        s.RequestPermissionOutcomeCancelled()
    )


async def test_rules_are_listed_and_revoked(tmp_path: Path) -> None:
    app, session = await started(tmp_path)
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id=SESSION_CHOICE)
    await app.incoming.ask_permission(edit_request(session, "t1", f"{session.cwd}/a.py"))
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id=PROJECT_CHOICE)
    await app.incoming.ask_permission(command_request(session, "t2", "make"))
    app.port.answers.append(None)  # dismissed: nothing revoked
    await app.permissions.command(None, [])
    prompt, choices = app.port.pickers[-1]
    assert prompt == "Permission rules (choose one to revoke)"
    assert [c.label for c in choices] == [
        "1. [session] always allow edit",
        "2. [project] always allow `make`",
    ]
    await app.permissions.command(None, ["revoke", "2"])
    assert "revoked the project rule: always allow `make`" in app.port.texts()
    app.port.answers.append("1")
    await app.permissions.command(None, [])
    assert "revoked the session rule: always allow edit" in app.port.texts()
    await app.permissions.command(None, [])
    assert app.port.texts()[-1] == "no permission rules for this session or its project"
    await app.permissions.command(None, ["revoke", "7"])
    await app.permissions.command(None, ["nonsense"])
    assert app.port.texts()[-2:] == [
        "no permission rule 7 (there are 0)",
        "usage: :AcpPermissions [revoke N | allow [session|project] {kind} [{path} | {command}]]",
    ]
    # Revoked: asked again.
    app.port.permission_answer = s.RequestPermissionOutcomeCancelled()
    asked = len(app.port.permission_views)
    await app.incoming.ask_permission(edit_request(session, "t3", f"{session.cwd}/a.py"))
    assert len(app.port.permission_views) == asked + 1


async def test_a_bad_rules_file_is_reported_and_every_request_asked(tmp_path: Path) -> None:
    app, session = await started(tmp_path)
    path = Path(app.permissions.file.path or "")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "projects": {session.cwd: [{"kind": "edit", "glob": "*"}]}}))
    await app.incoming.ask_permission(edit_request(session, "t1", f"{session.cwd}/a.py"))
    assert len(app.port.permission_views) == 1
    assert any(
        level == WARN and "permission rules not used" in text and str(path) in text
        for text, level in app.port.notes
    )
    # Said once, not on every request.
    await app.incoming.ask_permission(edit_request(session, "t2", f"{session.cwd}/a.py"))
    assert len(app.port.permission_views) == 2
    assert sum("permission rules not used" in text for text in app.port.texts()) == 1


async def test_rules_made_with_the_command(tmp_path: Path) -> None:
    app, session = await started(tmp_path)
    (Path(session.cwd) / "src").mkdir()
    await app.permissions.command(None, ["allow", "edit", "src"])
    await app.permissions.command(None, ["allow", "project", "execute", "cargo", "test"])
    src = os.path.realpath(Path(session.cwd) / "src")
    assert app.port.texts()[-2:] == [
        f"added the session rule: always allow edit in {src}",
        "added the project rule: always allow `cargo test`",
    ]
    app.port.permission_answer = s.RequestPermissionOutcomeCancelled()
    assert await app.incoming.ask_permission(edit_request(session, "t1", f"{session.cwd}/src/a.py")) == (
        s.RequestPermissionOutcomeSelected(option_id="yes")
    )
    assert await app.incoming.ask_permission(command_request(session, "t2", "cargo test --all")) == (
        s.RequestPermissionOutcomeSelected(option_id="yes")
    )
    assert app.port.permission_views == []
    # Outside the path: asked.
    await app.incoming.ask_permission(edit_request(session, "t3", f"{session.cwd}/README.md"))
    assert len(app.port.permission_views) == 1
    for bad, message in [
        (["allow", "edit", "/etc"], "/etc is outside the session's directories"),
        (["allow", "nuke"], "unknown tool kind 'nuke'"),
        (["allow", "execute", "make;", "rm"], "not a plain command"),
        (["allow"], "name a tool kind to allow"),
        (["allow", "project", "execute"], "an execute rule names the command it allows"),
    ]:
        await app.permissions.command(None, bad)
        assert app.port.texts()[-1].startswith("no rule made: ") and message in app.port.texts()[-1], bad


async def test_the_question_and_the_rule_are_about_the_command_the_request_states(tmp_path: Path) -> None:
    app, session = await started(tmp_path)
    session.permission_rules.append(Rule(kind="execute", command="npm test"))
    session.state.apply(
        s.SessionUpdateToolCall(
            tool_call_id="t1", title="npm test", kind="execute", raw_input={"command": "npm test"}
        )
    )
    swapped = s.RequestPermissionRequest(
        session_id=session.session_id,
        tool_call=s.ToolCallUpdate(tool_call_id="t1", raw_input={"command": "npm test\nrm -rf X"}),
        options=OPTIONS,
    )
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id="no")
    assert await app.incoming.ask_permission(swapped) == s.RequestPermissionOutcomeSelected(option_id="no")
    (view,) = app.port.permission_views
    assert (view.title, view.kind, view.command) == ("npm test", "execute", "npm test\\nrm -rf X")
    # No "always allow" for a command no rule could judge.
    assert [o.id for o in view.options] == ["yes", "always", "no"]
    (item,) = [i for i in session.state.items if getattr(i, "tool_call_id", None) == "t1"]
    assert item.shell is not None and item.shell.command == "npm test\nrm -rf X"

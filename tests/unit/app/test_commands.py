"""What each command decides, driven on the fake Neovim: which session, what is sent, what the user reads."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import anyio
import msgspec
import pytest

from acp_nvim.app.port import WARN
from acp_nvim.app.runs import NO_AGENT_RUNNING, NO_SESSION, AgentSpec
from acp_nvim.app.sessions.prompt_queue import NOT_OPENED, WAITING
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s

from .fakes import App, FakeAgent

pytestmark = pytest.mark.anyio

SPEC = AgentSpec(name="a", cmd="fake")


def with_modes() -> FakeAgent:
    agent = FakeAgent()
    agent.modes = s.SessionModeState(
        current_mode_id="ask",
        available_modes=[s.SessionMode(id="ask", name="Ask"), s.SessionMode(id="code", name="Code")],
    )
    agent.config_options = [
        s.SessionConfigOptionSelect(
            id="model",
            name="Model",
            current_value="small",
            options=[
                s.SessionConfigSelectOption(value="small", name="Small"),
                s.SessionConfigSelectOption(value="large", name="Large"),
            ],
        ),
        s.SessionConfigOptionBoolean(id="fast", name="Fast", current_value=False),
    ]
    return agent


# ---- start, stop, sessions -------------------------------------------------------------------------


async def test_start_launches_an_agent_not_running_and_opens_another_session_on_one_that_runs() -> None:
    app = App()
    await app.commands.start(SPEC)
    assert [spec.name for spec in app.runner.launched] == ["a"]
    run = app.runs.agents["a"]
    run.connection = FakeAgent()  # type: ignore[assignment]
    run.lifecycle.connected(open_first_session=False)
    await app.commands.start(SPEC)
    assert len(app.runner.launched) == 1
    assert app.runs.current().session is not None


async def test_another_start_of_a_running_agent_keeps_what_its_process_was_started_with() -> None:
    app = App()
    run, _ = await app.start("a", FakeAgent(), args=["--acp"], terminal_auth=True)
    await app.commands.start(
        msgspec.structs.replace(SPEC, args=["--other"], terminal_auth=False, mode="code")
    )
    assert (run.spec.args, run.spec.terminal_auth, run.spec.mode) == (["--acp"], True, "code")
    assert len(app.runner.launched) == 1


async def test_stop_is_for_the_agent_of_the_chat_and_restart_reopens_its_sessions() -> None:
    app = App()
    _, session = await app.start("a", FakeAgent())
    await app.start("b", FakeAgent(session_prefix="b"))
    await app.commands.stop(session.session_id)
    assert app.runner.stopped == ["a"]
    assert app.port.status.agent_name == "b"
    await app.commands.restart(SPEC)
    assert app.runner.stopped == ["a", "a"]
    assert [old.session_id for old in app.runs.agents["a"].reopen] == [session.session_id]


async def test_a_failed_first_session_fails_the_start_a_later_one_is_only_reported() -> None:
    app = App()
    agent = FakeAgent()
    run = app.connect("a", agent)
    agent.refuse["new_session"] = RpcError(-32603, "no quota")
    assert await app.sessions.new(run, first=True) is None
    assert (app.port.status.state, app.port.status.error) == (
        "error",
        "a refused to create a session: no quota",
    )
    run.lifecycle.opening()
    await app.sessions.new(run, first=True)
    run.lifecycle.first_session_done(ready=True)
    agent.refuse["new_session"] = RpcError(-32603, "no quota")
    assert await app.sessions.new(run) is None
    app.status.push()
    assert app.port.status.state == "ready"
    assert app.port.texts()[-1] == "a refused to create a session: no quota"


# ---- modes and options --------------------------------------------------------------------------------


async def test_mode_and_config_without_a_session_say_so() -> None:
    app = App()
    await app.commands.mode(None, "code")
    await app.commands.config(None, "model", "large")
    assert app.port.notes == [(NO_SESSION, WARN), (NO_SESSION, WARN)]


async def test_a_mode_picked_is_sent_and_shown() -> None:
    app = App()
    agent = with_modes()
    _, session = await app.start("a", agent)
    app.port.answers.append("code")
    await app.commands.mode(None, None)
    prompt, choices = app.port.pickers[0]
    assert prompt == "Mode of a" and [c.label for c in choices] == ["Ask  (current)", "Code"]
    assert ("set_mode", "code") in agent.calls
    assert session.state.current_mode == "code" and app.port.status.mode == "code"


async def test_a_refused_mode_is_rolled_back_with_a_message() -> None:
    app = App()
    agent = with_modes()
    _, session = await app.start("a", agent)
    agent.refuse["set_mode"] = RpcError(-32602, "not now")
    await app.commands.mode(None, "code")
    assert session.state.current_mode == "ask"
    assert app.port.texts()[-1] == "Mode Code refused: not now"


async def test_unknown_modes_options_and_values_name_what_is_available() -> None:
    app = App()
    _, _session = await app.start("a", with_modes())
    await app.commands.mode(None, "plan")
    await app.commands.config(None, "colour", "red")
    await app.commands.config(None, "model", "huge")
    await app.commands.config(None, "fast", "maybe")
    assert app.port.texts() == [
        "unknown mode 'plan' (available: ask, code)",
        "unknown option 'colour' (available: model, fast)",
        "invalid value 'huge' for Model (allowed: small, large)",
        "invalid value 'maybe' for Fast (allowed: true, false, toggle)",
    ]


async def test_options_are_set_toggled_and_rolled_back_when_refused() -> None:
    app = App()
    agent = with_modes()
    _, session = await app.start("a", agent)
    await app.commands.config(None, "model", "large")
    await app.commands.config(None, "fast", "toggle")
    assert app.port.status.model == "large"
    assert [(o.id, o.current_value) for o in session.state.config_options] == [
        ("model", "large"),
        ("fast", True),
    ]
    agent.refuse["set_config_option"] = RpcError(-32602, "locked")
    await app.commands.config(None, "model", "small")
    assert app.port.status.model == "large"
    assert app.port.texts()[-1] == "Model = Small refused: locked"


async def test_per_agent_defaults_are_applied_to_a_new_session() -> None:
    app = App()
    agent = with_modes()
    _, session = await app.start("a", agent, mode="code", config={"fast": True, "missing": "x"})
    assert ("set_mode", "code") in agent.calls and ("set_config_option", ("fast", True)) in agent.calls
    notices = [item.text for item in session.state.items if hasattr(item, "level")]
    assert "Default option missing is not offered by this agent" in notices


# ---- login ------------------------------------------------------------------------------------------------


async def test_login_without_an_agent_says_so() -> None:
    app = App()
    await app.commands.auth(None, None)
    await app.commands.logout(None)
    assert app.port.notes == [(NO_AGENT_RUNNING, WARN), (NO_AGENT_RUNNING, WARN)]


async def test_a_start_that_failed_for_want_of_a_login_opens_its_session_after_one() -> None:
    app = App()
    agent = FakeAgent(auth_methods=[s.AuthMethodAgent(id="key", name="API key")])
    run = app.connect("a", agent)
    agent.refuse["new_session"] = RpcError(-32000, "log in first")
    # The picker is dismissed: the first session fails, the agent stays up in "error".
    assert await app.sessions.new(run, first=True) is None
    assert app.port.status.state == "error"
    assert app.port.pickers[-1][0] == "a requires authentication: log in with"
    await app.commands.auth(None, "key")
    assert ("authenticate", "key") in agent.calls
    assert "logged in to a (API key)" in app.port.texts()
    assert app.port.status.state == "ready" and app.port.status.session_id == "sess-1"


async def test_an_auth_required_call_is_retried_once_after_the_login() -> None:
    app = App()
    agent = FakeAgent(auth_methods=[s.AuthMethodAgent(id="key", name="API key")])
    run = app.connect("a", agent)
    agent.refuse["new_session"] = RpcError(-32000, "log in first")
    app.port.answers.append("key")
    session = await app.sessions.new(run, first=True)
    assert session is not None
    assert [name for name, _ in agent.calls] == ["new_session", "authenticate", "new_session"]


async def test_a_terminal_login_runs_the_agents_command_and_waits_for_its_reconnect() -> None:
    app = App()
    tty = s.AuthMethodTerminal(id="tty", name="Terminal login", args=["--login"])
    agent = FakeAgent(auth_methods=[tty])
    run = app.connect("a", agent, args=["--acp"])
    app.port.login_code = 1
    assert not await app.auth.login(run, "tty")
    assert app.port.logins == [["fake", "--acp", "--login"]]
    assert app.port.texts()[-1] == "a: login failed (exit code 1)"


async def test_terminal_methods_are_not_offered_to_an_agent_without_terminal_login() -> None:
    app = App()
    tty = s.AuthMethodTerminal(id="tty", name="Terminal login")
    run = app.connect("a", FakeAgent(auth_methods=[tty]), terminal_auth=False)
    assert not await app.auth.login(run, None)
    assert app.port.texts() == ["a needs no login: it offers no authentication method"]


# ---- directories ----------------------------------------------------------------------------------------


async def test_added_directories_are_python_s_one_list_sent_with_new_sessions(tmp_path: Path) -> None:
    app = App()
    caps = s.AgentCapabilities(
        session_capabilities=s.SessionCapabilities(
            additional_directories=s.SessionAdditionalDirectoriesCapabilities()
        )
    )
    agent = FakeAgent(capabilities=caps)
    run, _ = await app.start("a", agent, cwd=str(tmp_path))
    await app.commands.add_dir(None, str(tmp_path / "nope"))
    await app.commands.add_dir(None, str(tmp_path))
    await app.commands.add_dir(None, str(tmp_path))
    assert app.port.texts() == [
        f"not a directory: {tmp_path / 'nope'}",
        f"{tmp_path} is added to the sessions opened from now on",
        f"{tmp_path} is added to the sessions opened from now on",
    ]
    assert app.sessions.extra_directories == [str(tmp_path)]
    await app.sessions.new(run)
    assert agent.calls[-1] == ("new_session", (str(tmp_path), [str(tmp_path)]))


async def test_an_agent_without_additional_directories_is_named(tmp_path: Path) -> None:
    app = App()
    await app.start("a", FakeAgent())
    await app.commands.add_dir(None, str(tmp_path))
    assert app.port.texts() == [f"a does not support additional directories: {tmp_path} is not sent"]


# ---- turns and permissions ----------------------------------------------------------------------------


async def test_a_prompt_runs_a_turn_and_a_second_one_meanwhile_is_queued() -> None:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    session.in_turn = True
    await app.turns.prompt("again")
    assert app.port.texts() == [] and [queued.text for queued in session.queue] == ["again"]
    session.queue.clear()
    session.in_turn = False
    await app.turns.prompt("hello")
    assert ("prompt", session.session_id) in agent.calls
    assert not session.in_turn and app.port.status.state == "ready"


async def test_a_prompt_without_a_session_or_with_its_agent_gone_says_so() -> None:
    app = App()
    await app.turns.prompt("hello")
    run, _ = await app.start("a", FakeAgent())
    run.connection = None
    await app.turns.prompt("hello")
    assert app.port.texts() == [NO_SESSION, NO_AGENT_RUNNING]


async def test_a_prompt_from_no_chat_while_a_new_session_opens_waits_and_goes_to_it() -> None:
    app = App()
    agent = FakeAgent()
    _, old = await app.start("a", agent)
    opened = agent.held_until("new_session")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.commands.start, SPEC)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("first")
        await app.turns.prompt("second")
        # The old session stays the one in use for everything else, and gets neither.
        assert app.runs.current().session is old and agent.prompts == []
        assert app.port.texts() == [WAITING, WAITING]
        agent.hold = anyio.Event()
        opened.set()
        await anyio.wait_all_tasks_blocked()
        new = app.runs.current().session
        assert new is not None and new is not old
        assert agent.prompts == ["first"] and [queued.text for queued in new.queue] == ["second"]
        agent.hold.set()
    assert [call for call in agent.calls if call[0] == "prompt"] == [("prompt", new.session_id)] * 2
    assert agent.prompts == ["first", "second"] and not old.in_turn and not old.queue


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
async def test_a_waiting_prompts_diff_is_the_one_of_the_new_sessions_folder(tmp_path: Path) -> None:
    old_folder, new_folder = tmp_path / "old", tmp_path / "new"
    old_folder.mkdir()
    new_folder.mkdir()
    (new_folder / "a.txt").write_text("a\n")
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "1"],
    ):
        subprocess.run(["git", *args], cwd=new_folder, check=True, capture_output=True)
    (new_folder / "a.txt").write_text("b\n")
    app = App()
    agent = FakeAgent()
    await app.start("a", agent, cwd=str(old_folder))
    opened = agent.held_until("new_session")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.commands.start, msgspec.structs.replace(SPEC, cwd=str(new_folder)))
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("look", [{"kind": "diff", "mention": True}])
        opening = app.runs.current().opening
        assert opening is not None
        (diff,) = opening.waiting[0].attachments
        assert isinstance(diff, dict) and diff["fact"] == "" and "+b" in str(diff["text"])
        opened.set()


async def test_a_prompt_waiting_for_a_session_that_does_not_open_is_given_back() -> None:
    app = App()
    agent = FakeAgent()
    await app.start("a", agent)
    opened = agent.held_until("new_session")
    agent.refuse["new_session"] = RpcError(-32603, "no more")
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.commands.start, SPEC)
        await anyio.wait_all_tasks_blocked()
        await app.turns.prompt("kept")
        opened.set()
    assert app.port.refused == [NOT_OPENED] and agent.prompts == []
    # Once it failed, a prompt goes to the session in use again.
    await app.turns.prompt("again")
    assert agent.prompts == ["again"]


async def test_cancel_answers_the_sessions_permissions_and_tells_the_agent() -> None:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    await app.turns.cancel()
    assert agent.calls[-1][0] != "cancel"
    session.in_turn = True
    await app.turns.cancel()
    assert session.cancelling and app.port.cancelled == [session.session_id]
    assert agent.calls[-1] == ("cancel", session.session_id)


async def test_a_permission_question_shows_the_tool_call_and_the_status_waits_on_it() -> None:
    app = App()
    _, session = await app.start("a", FakeAgent())
    request = s.RequestPermissionRequest(
        session_id=session.session_id,
        tool_call=s.ToolCallUpdate(tool_call_id="t1", title="Edit main.py", kind="edit"),
        options=[s.PermissionOption(option_id="ok", name="Allow", kind="allow_once")],
    )
    app.port.permission_answer = s.RequestPermissionOutcomeSelected(option_id="ok")
    outcome = await app.incoming.ask_permission(request)
    assert outcome == s.RequestPermissionOutcomeSelected(option_id="ok")
    (view,) = app.port.permission_views
    assert (view.title, view.kind, [o.id for o in view.options]) == ("Edit main.py", "edit", ["ok"])
    assert app.port.status_while_asked == ["awaiting_permission"]
    assert app.port.status.state == "ready"


async def test_a_permission_for_a_session_not_open_here_is_an_error_for_the_agent() -> None:
    app = App()
    request = s.RequestPermissionRequest(
        session_id="nope", tool_call=s.ToolCallUpdate(tool_call_id="t1"), options=[]
    )
    with pytest.raises(RpcError):
        await app.incoming.ask_permission(request)


async def test_a_terminal_login_that_succeeds_is_logged_in_once_the_agent_reconnected() -> None:
    app = App()
    tty = s.AuthMethodTerminal(id="tty", name="Terminal login")
    run = app.connect("a", FakeAgent(auth_methods=[tty]))
    run.lifecycle.first_session_done(ready=True)

    async def the_run_reconnects() -> None:
        await run.lifecycle.wait_reconnect_asked()
        run.lifecycle.reconnecting()
        assert app.runs.agents["a"].lifecycle.phase.shown == "starting"
        run.lifecycle.connected(open_first_session=False)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(the_run_reconnects)
            assert await app.auth.login(run, "tty")
    assert app.port.texts() == ["logged in to a (Terminal login); restarting it"]
    assert run.lifecycle.phase.shown == "ready"


async def test_closing_a_chat_gives_its_memory_back_once_nothing_here_refers_to_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long chat's objects are collected and the C heap trimmed when it closes (bench/memory.py): not left
    to a collection some time later, by which time glibc keeps the memory they held."""
    import weakref

    from acp_nvim.app import commands

    app = App()
    run, _first = await app.start("a", FakeAgent())
    second = await app.sessions.new(run)
    assert second is not None
    state = weakref.ref(second.state)
    session_id = second.session_id
    del second
    released: list[bool] = []
    monkeypatch.setattr(commands, "release_memory", lambda: released.append(state() is None))
    await app.commands.close_session(session_id)
    assert released == [True]

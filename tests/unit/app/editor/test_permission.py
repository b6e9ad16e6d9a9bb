"""Permission requests answered by the broker on an in-memory editor: a session's cancel answers its own
requests only, an option the application added is a valid choice, a dismissal is the first reject. No Neovim.
(The queue on Neovim's own adapter and its tokens: `tests/unit/client/session/test_state.py`.)"""

from __future__ import annotations

import anyio
import pytest

from acp_nvim.app.editor.permission import PermissionBroker
from acp_nvim.app.views import PermissionChoice, PermissionView
from acp_nvim.protocol import schema as s
from tests.unit.app.editor.fake_port import FakeEditorPort

OPTIONS = [
    s.PermissionOption(option_id="ok", name="OK", kind="allow_once"),
    s.PermissionOption(option_id="no", name="No", kind="reject_once"),
]


def request(session_id: str) -> s.RequestPermissionRequest:
    return s.RequestPermissionRequest(
        session_id=session_id, tool_call=s.ToolCallUpdate(tool_call_id="t"), options=OPTIONS
    )


def view(session_id: str, *extra: PermissionChoice) -> PermissionView:
    return PermissionView(session_id, "t", "Edit", "edit", [*extra])


@pytest.mark.anyio
async def test_a_session_s_cancel_answers_its_own_requests_only() -> None:
    editor = FakeEditorPort()
    busy: list[bool] = []
    broker = PermissionBroker(editor, busy.append)
    results: dict[str, s.RequestPermissionOutcome] = {}

    async def ask(name: str, session_id: str) -> None:
        results[name] = await broker.ask(request(session_id), view(session_id))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask, "a1", "a")
        first = await editor.asked(1)
        tasks.start_soon(ask, "b1", "b")
        tasks.start_soon(ask, "a2", "a")
        await anyio.wait_all_tasks_blocked()
        broker.cancel_session("a")  # the open one of "a" and its queued one; "b" is asked next
        (await editor.asked(2)).give("ok")
    assert first.closed
    assert results == {
        "a1": s.RequestPermissionOutcomeCancelled(),
        "a2": s.RequestPermissionOutcomeCancelled(),
        "b1": s.RequestPermissionOutcomeSelected(option_id="ok"),
    }
    assert len(editor.questions) == 2
    assert busy == [True, False, True, False]


@pytest.mark.anyio
async def test_an_added_option_is_a_choice_and_a_dismissal_the_first_reject() -> None:
    editor = FakeEditorPort()
    broker = PermissionBroker(editor, lambda busy: None)
    always = PermissionChoice(id="always:project", name="Always in this project", kind="allow_always")
    results: list[s.RequestPermissionOutcome] = []
    async with anyio.create_task_group() as tasks:

        async def ask() -> None:
            results.append(await broker.ask(request("s"), view("s", always)))

        tasks.start_soon(ask)
        (await editor.asked(1)).give("always:project")
        tasks.start_soon(ask)
        (await editor.asked(2)).give("not offered")
        tasks.start_soon(ask)
        (await editor.asked(3)).give(None)
    assert results == [
        s.RequestPermissionOutcomeSelected(option_id="always:project"),
        s.RequestPermissionOutcomeSelected(option_id="no"),
        s.RequestPermissionOutcomeSelected(option_id="no"),
    ]

"""The dispatcher answers every request naming a session this client does not run with -32002 at once,
whatever the method, before the editor (and so the user) sees it; updates for such a session are dropped and
reported once with the session's id. Issue 29: a subagent's request nobody answers hangs the agent's turn."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from acp_nvim.client.agent.diagnostics import Diagnostics
from acp_nvim.client.dispatch import Dispatcher
from acp_nvim.jsonrpc import RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from tests.unit.client.test_dispatch_fuzz import FuzzEditor

pytestmark = pytest.mark.anyio

OPEN = "s1"
GHOST = "ghost"

REQUESTS: dict[str, dict[str, object]] = {
    "session/request_permission": {
        "toolCall": {"toolCallId": "t"},
        "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
    },
    "fs/read_text_file": {"path": "/p/a.txt"},
    "fs/write_text_file": {"path": "/p/a.txt", "content": "x"},
    "terminal/create": {"command": "true"},
    "terminal/output": {"terminalId": "term-1"},
    "terminal/wait_for_exit": {"terminalId": "term-1"},
    "terminal/kill": {"terminalId": "term-1"},
    "terminal/release": {"terminalId": "term-1"},
}


class CountingEditor(FuzzEditor):
    """Counts what reached it: nothing for an unknown session."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        self.calls += 1
        return await super().read_text_file(params)

    async def request_permission(self, params: s.RequestPermissionRequest) -> s.RequestPermissionResponse:
        self.calls += 1
        # A user who never answers: only an answer given before asking can end this call.
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def dispatcher() -> tuple[Dispatcher, CountingEditor, list[str]]:
    editor = CountingEditor()
    troubles: list[str] = []
    dispatch = Dispatcher(editor, Diagnostics("test", troubles.append, interval=0))
    dispatch.sessions.add(OPEN)
    return dispatch, editor, troubles


@pytest.mark.parametrize("method", sorted(REQUESTS))
async def test_a_request_for_an_unknown_session_is_an_error_at_once(method: str) -> None:
    dispatch, editor, _ = dispatcher()
    params = msgspec.Raw(msgspec.json.encode({"sessionId": GHOST, **REQUESTS[method]}))
    with anyio.fail_after(1), pytest.raises(RpcError) as caught:
        await dispatch.on_request(method, params)
    assert (caught.value.code, caught.value.message) == (-32002, f"unknown session: {GHOST}")
    assert caught.value.data == {"sessionId": GHOST}
    assert editor.calls == 0


async def test_the_same_request_for_the_open_session_reaches_the_editor() -> None:
    dispatch, editor, _ = dispatcher()
    params = msgspec.Raw(msgspec.json.encode({"sessionId": OPEN, **REQUESTS["fs/read_text_file"]}))
    answer = await dispatch.on_request("fs/read_text_file", params)
    assert answer == s.ReadTextFileResponse(content="read /p/a.txt")
    assert editor.calls == 1


async def test_updates_for_an_unknown_session_are_dropped_and_named() -> None:
    dispatch, editor, troubles = dispatcher()
    chunk = s.SessionUpdateAgentMessageChunk(content=s.ContentBlockText(text="hi"))
    dispatch._session_updates(
        [
            s.SessionNotification(session_id=GHOST, update=chunk),
            s.SessionNotification(session_id=OPEN, update=chunk),
        ]
    )
    assert [n.session_id for n in editor.updates] == [OPEN]
    assert troubles == [
        f"agent test sent updates for a session that is not open; they are ignored: session '{GHOST}'"
        " (see :AcpLog)"
    ]


async def test_a_subagent_announced_on_an_open_session_is_known_and_one_on_a_ghost_is_not() -> None:
    dispatch, editor, _ = dispatcher()
    params = msgspec.Raw(msgspec.json.encode({"sessionId": "child", **REQUESTS["fs/read_text_file"]}))
    with pytest.raises(RpcError):
        await dispatch.on_request("fs/read_text_file", params)
    announce = u.SessionUpdateSubagentUpdate(session_id="child")
    stray = u.SessionUpdateSubagentUpdate(session_id="stray")
    dispatch._session_updates(
        [
            u.SessionNotification(session_id=OPEN, update=announce),
            u.SessionNotification(session_id=GHOST, update=stray),
        ]
    )
    assert await dispatch.on_request("fs/read_text_file", params) == s.ReadTextFileResponse(
        content="read /p/a.txt"
    )
    assert dispatch.children_of(OPEN) == ["child"]
    assert "stray" not in dispatch.sessions
    assert [n.session_id for n in editor.updates] == [OPEN]

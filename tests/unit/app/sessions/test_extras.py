"""`:AcpSessions rename` and `archive` (`app/sessions/extras.py`): offered only where the agent advertises
`sessionCapabilities.title` / `.archive`; a rename shows the title the agent stored, an archive ends a session
open here."""

from __future__ import annotations

import pytest

from acp_nvim.app.port import WARN
from acp_nvim.app.runs import AgentSpec
from acp_nvim.client.session.transcript import NoticeItem
from acp_nvim.protocol import schema as s

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio

LISTING = s.AgentCapabilities(session_capabilities=s.SessionCapabilities(list=s.SessionListCapabilities()))


async def _started(features: set[str]) -> tuple[App, FakeAgent, s.SessionInfo]:
    app = App()
    agent = FakeAgent(capabilities=LISTING, name="Lister")
    agent.features = features
    _, session = await app.start("a", agent)
    info = s.SessionInfo(session_id=session.session_id, cwd=session.cwd, title="Old title")
    agent.listed = [info]
    return app, agent, info


async def _command(app: App, action: str) -> None:
    await app.commands.sessions_command(AgentSpec(name="a", cmd="fake"), action, False, None)


async def test_a_rename_sets_the_title_the_agent_stored_in_the_open_chat() -> None:
    app, agent, info = await _started({"title"})
    agent.stored_title = "New title"
    app.port.answers.append(info.session_id)
    app.port.typed.append("  New title  ")
    await _command(app, "rename")
    assert app.port.pickers[-1][0] == "Rename a session of a"
    assert app.port.inputs == [("New title for Old title: ", "Old title")]
    assert ("set_session_title", (info.session_id, "New title")) in agent.calls
    assert app.runs.sessions[info.session_id].state.title == "New title"
    assert app.port.statuses[-1].title == "New title"
    assert "renamed session to New title" in app.port.texts()
    assert app.port.statuses[-1].session_features == ["title"]


async def test_a_rename_dismissed_sends_nothing() -> None:
    app, agent, info = await _started({"title"})
    app.port.answers.append(info.session_id)
    app.port.typed.append(None)
    await _command(app, "rename")
    assert not [call for call in agent.calls if call[0] == "set_session_title"]


@pytest.mark.parametrize(
    ("action", "words"),
    [
        ("rename", "a cannot rename sessions (it does not offer session/set_title)"),
        ("archive", "a cannot archive sessions (it does not offer session/archive)"),
    ],
)
async def test_an_action_the_agent_does_not_advertise_is_refused_before_anything_is_sent(
    action: str, words: str
) -> None:
    app, agent, _ = await _started(set())
    await _command(app, action)
    assert (words, WARN) in app.port.notes
    assert [call[0] for call in agent.calls] == ["new_session"]
    assert app.port.pickers == []


async def test_an_archive_ends_the_session_open_here_and_its_chat_says_so() -> None:
    app, agent, info = await _started({"archive"})
    session = app.runs.sessions[info.session_id]
    app.port.answers.append(info.session_id)
    await _command(app, "archive")
    assert ("archive_session", info.session_id) in agent.calls
    assert info.session_id not in app.runs.sessions
    assert info.session_id not in app.port.destroyed
    notices = [item.text for item in session.state.items if isinstance(item, NoticeItem)]
    assert notices[-1].startswith("Archived: this session ended")
    assert "archived session Old title" in app.port.texts()

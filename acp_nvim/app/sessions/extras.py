"""What `:AcpSessions` does with a stored session beside opening and deleting it, through the unstable
schema's methods, each offered only where the agent advertises it (`sessionCapabilities.title`,
`.archive`): rename it (`session/set_title`) and archive it (`session/archive`, which hides it from the
default list and, for a session open here, ends it as `session/close` would)."""

from __future__ import annotations

from typing import Literal

from acp_nvim.app.chat.chats import Chats
from acp_nvim.app.port import ERROR, INFO, NeovimPort
from acp_nvim.app.runs import AgentRun, Runs
from acp_nvim.app.status import StatusBoard
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.calls import SessionFeature
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s

Action = Literal["open", "delete", "rename", "archive"]
ACTIONS: tuple[Action, ...] = ("open", "delete", "rename", "archive")

#: The unstable capability each action needs, and what the user is told when the agent lacks it.
NEEDS: dict[Action, tuple[SessionFeature, str]] = {
    "rename": ("title", "cannot rename sessions (it does not offer session/set_title)"),
    "archive": ("archive", "cannot archive sessions (it does not offer session/archive)"),
}


def offered(agent: AgentConnection, action: Action) -> bool:
    need = NEEDS.get(action)
    return need is None or agent.offers(need[0])


def _why(err: Exception) -> str:
    return failure.describe(err) if isinstance(err, RpcError) else str(err)


async def rename(
    port: NeovimPort,
    runs: Runs,
    status: StatusBoard,
    run: AgentRun,
    agent: AgentConnection,
    info: s.SessionInfo,
) -> None:
    """Asks for the new title (the current one to edit) and sets it; the chat of a session open here shows
    the title the agent stored (it may have normalized it)."""
    old = info.title or ""
    typed = await port.ask_text(f"New title for {old or info.session_id}: ", old)
    if typed is None or not typed.strip():
        return
    try:
        answer = await agent.set_session_title(info.session_id, typed.strip())
    except (RpcError, ConnectionClosed, Unsupported) as err:
        port.notify(f"{run.display_name} could not rename the session: {_why(err)}", ERROR)
        return
    session = runs.sessions.get(info.session_id)
    if session is not None:
        session.state.apply(s.SessionUpdateSessionInfoUpdate(title=answer.title))
        session.chat.flush()
        status.push()
    port.notify(f"renamed session to {answer.title}", INFO)


async def archive(
    port: NeovimPort, chats: Chats, runs: Runs, run: AgentRun, agent: AgentConnection, info: s.SessionInfo
) -> None:
    """Archives the session; one open here ends (the agent closes it), its chat stays, saying so."""
    try:
        await agent.archive_session(info.session_id)
    except (RpcError, ConnectionClosed, Unsupported) as err:
        port.notify(f"{run.display_name} could not archive the session: {_why(err)}", ERROR)
        return
    session = runs.sessions.get(info.session_id)
    if session is not None:
        chats.drop(info.session_id, destroy_chat=False)
        chats.tell(session, "Archived: this session ended (:AcpSessions can no longer list it)", "info")
    port.notify(f"archived session {info.title or info.session_id}", INFO)


def refusal(name: str, action: Action) -> str | None:
    need = NEEDS.get(action)
    return f"{name} {need[1]}" if need is not None else None

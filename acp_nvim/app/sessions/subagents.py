"""Cancelling subagents: with their parent's turn (every child's questions answered `cancelled`, and each
child that lets the client cancel it told so), or one alone (`:AcpCancel subagent`), where its capabilities
allow (`capabilities.cancel` of its last `subagent_update`; ACP lets no client cancel a child without it)."""

from __future__ import annotations

import contextlib

from acp_nvim.app.port import INFO, WARN, Choice, NeovimPort
from acp_nvim.app.runs import ChatSession
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.session.subagents import Subagent
from acp_nvim.jsonrpc import ConnectionClosed

NONE_TO_CANCEL = "no subagent of this chat is running"
NOT_CANCELLABLE = "the agent does not let the client cancel {names} alone (cancel the turn with :AcpCancel)"


async def cancel_children(session: ChatSession, port: NeovimPort, agent: AgentConnection | None) -> None:
    """The parent's turn is cancelled: so is the work of its children."""
    for child in session.state.all_children():
        port.cancel_permissions(child.session_id)
        if agent is not None and child.running and child.can_cancel and not child.cancel_sent:
            await _cancel(child, agent)


async def cancel_one(session: ChatSession, port: NeovimPort, agent: AgentConnection | None) -> None:
    """`:AcpCancel subagent`: one running child, chosen when there are several, cancelled alone."""
    running = [child for child in session.state.all_children() if child.running]
    if not running:
        port.notify(NONE_TO_CANCEL, WARN)
        return
    allowed = [child for child in running if child.can_cancel]
    if not allowed:
        port.notify(NOT_CANCELLABLE.format(names=", ".join(child.name for child in running)), WARN)
        return
    child = allowed[0]
    if len(allowed) > 1:
        choices = [Choice(child.session_id, f"{child.name} ({child.status_words()})") for child in allowed]
        chosen = await port.select("Cancel which subagent?", choices, "acp_nvim.subagent")
        picked = next((child for child in allowed if child.session_id == chosen), None)
        if picked is None:
            return
        child = picked
    if agent is None:
        return
    port.cancel_permissions(child.session_id)
    await _cancel(child, agent)
    port.notify(f"subagent {child.name} cancelled", INFO)


async def _cancel(child: Subagent, agent: AgentConnection) -> None:
    child.cancel_sent = True
    with contextlib.suppress(ConnectionClosed):
        await agent.cancel(child.session_id)

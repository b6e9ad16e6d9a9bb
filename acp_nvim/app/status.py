"""The status (what `status()` of the Lua module returns): built here from the current session and its agent,
pushed to Neovim on every change. Lua only shows what arrives.
"""

from __future__ import annotations

import logging

import msgspec

from acp_nvim.app import attention
from acp_nvim.app.auth import login_methods
from acp_nvim.app.port import ERROR, NeovimPort
from acp_nvim.app.runs import AgentRun, ChatSession, Runs
from acp_nvim.app.status_facts import FACTS
from acp_nvim.app.views import AgentIdentity, State, Status, TurnUsage, Usage, UsageCost
from acp_nvim.client.agent.calls import UNSTABLE_METHODS
from acp_nvim.client.session.config_options import config_value_name
from acp_nvim.client.session.state import SessionState
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.status")

SESSION_FEATURES = tuple(UNSTABLE_METHODS)


def build_status(runs: Runs) -> Status:
    current = runs.current()
    session, run = current.session, current.run
    agent: AgentIdentity | None = None
    state: State = FACTS.no_host
    if run is not None:
        agent = AgentIdentity(name=run.name)
        if run.info is not None:
            agent = AgentIdentity(name=run.info.name, title=run.info.title, version=run.info.version)
        state = run.lifecycle.phase.shown
        if state == "ready" and session is not None:
            if session.permissions:
                state = "awaiting_permission"
            elif session.in_turn:
                state = "running"
    connection = current.connection
    return Status(
        agent=agent,
        agent_name=run.name if run is not None else None,
        state=state,
        session_id=session.session_id if session else None,
        mode=session.state.current_mode if session else None,
        mode_name=session.state.current_mode_name if session else None,
        model=current_model(session.state) if session else None,
        model_name=current_model_name(session.state) if session else None,
        title=session.state.title if session else None,
        usage=_usage(session.state) if session else None,
        turn_usage=_turn_usage(session.state) if session else None,
        sessions=len(runs.sessions),
        session_features=(
            [feature for feature in SESSION_FEATURES if connection.offers(feature)]
            if connection is not None
            else []
        ),
        auth_methods=(
            [method.id for method in login_methods(connection, run.spec.terminal_auth)]
            if connection is not None and run is not None
            else []
        ),
        protocol_version=connection.protocol_version if connection else None,
        error=run.lifecycle.error if run is not None else None,
        waiting=_waiting_elsewhere(runs, session),
    )


def _waiting_elsewhere(runs: Runs, current: ChatSession | None) -> str | None:
    """The permission questions waiting in the other sessions, in words (the current one's is its state)."""
    agents = [other.agent for other in runs.sessions.values() if other.permissions and other is not current]
    if not agents:
        return None
    if len(agents) == 1:
        return f"{agents[0]} awaits permission"
    return f"{len(agents)} sessions await permission"


class StatusBoard:
    """Pushes the status, and the failures of agents that change it."""

    def __init__(self, runs: Runs, port: NeovimPort) -> None:
        self._runs = runs
        self._port = port

    def push(self) -> None:
        self._port.show_status(build_status(self._runs))

    def use(self, session_id: str) -> None:
        """The session becomes the current one, and the status says so."""
        self._runs.use(session_id)
        self.push()

    def refuse(self, agent_name: str, message: str) -> None:
        """A start the configuration cannot make (an unknown agent): said, and shown as that agent's error
        until the next status."""
        self._port.notify(message, ERROR)
        status = build_status(self._runs)
        self._port.show_status(
            msgspec.structs.replace(
                status,
                agent=AgentIdentity(name=agent_name),
                agent_name=agent_name,
                state="error",
                error=message,
            )
        )

    def fail(self, run: AgentRun, message: str) -> None:
        log.warning("%s", message)
        # The message first: whoever reacts to the status change finds it already shown.
        self._port.notify(message, ERROR)
        run.lifecycle.fail(message)
        self.push()
        ids = [sid for sid, session in self._runs.sessions.items() if session.agent == run.name]
        self._port.attention(attention.failed(run.name, message, ids, told=True))


def current_model(state: SessionState) -> str | None:
    """The current model: the select option of category "model" (or id "model")."""
    option = _model_option(state)
    return option.current_value if option is not None else None


def current_model_name(state: SessionState) -> str | None:
    option = _model_option(state)
    return config_value_name(option) if option is not None else None


def _model_option(state: SessionState) -> s.SessionConfigOptionSelect | None:
    for option in state.config_options:
        if isinstance(option, s.SessionConfigOptionSelect) and (
            option.category == "model" or option.id == "model"
        ):
            return option
    return None


def _usage(state: SessionState) -> Usage | None:
    usage = state.usage
    if usage is None:
        return None
    cost = (
        UsageCost(amount=usage.cost_amount, currency=usage.cost_currency)
        if usage.cost_amount is not None
        else None
    )
    return Usage(used=usage.used, size=usage.size, cost=cost)


def _turn_usage(state: SessionState) -> TurnUsage | None:
    usage = state.turn_usage
    if usage is None:
        return None
    return TurnUsage(
        total=usage.total_tokens,
        input=usage.input_tokens,
        output=usage.output_tokens,
        thought=usage.thought_tokens,
        cached_read=usage.cached_read_tokens,
        cached_write=usage.cached_write_tokens,
    )

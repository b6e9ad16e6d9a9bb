"""Session modes and configuration options (`session/set_config_option`); a mode goes through the agent's
mode option (category "mode") when it offers one, else through the legacy `session/set_mode`.

A change shows at once — chat notice, window bar, status — and is rolled back, with a message, when the agent
refuses it. Select options (grouped ones too) and boolean options are offered; options of a type we do not
know never get here (the lenient decoder drops them). Per-agent defaults (`agents.NAME.mode`,
`agents.NAME.config`) are applied to every new session through the same path.
"""

from __future__ import annotations

import logging

import msgspec

from acp_nvim.app.port import ERROR, WARN, Choice, NeovimPort
from acp_nvim.app.runs import AgentSpec, ChatSession, Runs
from acp_nvim.app.status import StatusBoard
from acp_nvim.client.agent import failure
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.session.config_options import config_value_words, select_choice_names
from acp_nvim.client.session.state import SessionState
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s

log = logging.getLogger("acp_nvim.session_modes")

TRUE_WORDS = {"true", "on", "yes", "1"}
FALSE_WORDS = {"false", "off", "no", "0"}


def value_label(option: s.SessionConfigOption) -> str:
    if isinstance(option, s.SessionConfigOptionBoolean):
        return "on" if option.current_value else "off"
    for value, label, _ in select_choice_names(option):
        if value == option.current_value:
            return label
    return option.current_value


def parse_value(option: s.SessionConfigOption, raw: str | bool) -> str | bool | None:
    """`raw` as a value of `option` (booleans: true/false/on/off/yes/no/1/0/toggle), or None."""
    if isinstance(option, s.SessionConfigOptionBoolean):
        if isinstance(raw, bool):
            return raw
        word = raw.strip().lower()
        if word == "toggle":
            return not option.current_value
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
        return None
    if isinstance(raw, bool):
        return None
    values = [value for value, _, _ in select_choice_names(option)]
    return raw if raw in values else None


class ModeCommands:
    def __init__(self, runs: Runs, port: NeovimPort, status: StatusBoard) -> None:
        self._runs = runs
        self._port = port
        self._status = status

    def _changed(self, session: ChatSession) -> None:
        session.chat.flush()
        self._status.push()

    # ---- modes -------------------------------------------------------------------------------------

    async def mode(self, session: ChatSession, mode_id: str | None) -> None:
        state = session.state
        agent_name = self._agent_name(session)
        if not state.offered_modes:
            self._port.notify(f"{agent_name} offers no modes for this session", WARN)
            return
        if mode_id is None:
            choices = [
                Choice(mode.id, _mark(mode.name, mode.id == state.current_mode, mode.description))
                for mode in state.offered_modes
            ]
            mode_id = await self._port.select(f"Mode of {agent_name}", choices, "acp_nvim.mode")
            if mode_id is None:
                return
        await self.set_mode(session, mode_id)

    async def set_mode(self, session: ChatSession, mode_id: str) -> bool:
        state = session.state
        known = [mode.id for mode in state.offered_modes]
        if mode_id not in known:
            self._port.notify(f"unknown mode {mode_id!r} (available: {', '.join(known)})", WARN)
            return False
        option = state.mode_option
        if option is not None:
            # The protocol asks clients to prefer the config option; `session/set_mode` is legacy.
            return await self.set_option(session, option.id, mode_id)
        previous = state.current_mode
        if mode_id == previous:
            return True
        state.set_current_mode(mode_id)
        self._changed(session)
        agent = self._agent(session)
        try:
            if agent is None:
                raise ConnectionClosed("the agent is not running")
            await agent.set_mode(session.session_id, mode_id)
        except (RpcError, Unsupported, ConnectionClosed) as err:
            why = failure.describe(err) if isinstance(err, RpcError) else str(err)
            if previous is not None and state.current_mode == mode_id:
                state.set_current_mode(previous, announce=False)
            self._refused(session, f"Mode {_mode_name(state, mode_id)} refused: {why}")
            return False
        return True

    # ---- configuration options ---------------------------------------------------------------------

    async def config(self, session: ChatSession, option_id: str | None, raw: str | None) -> None:
        state = session.state
        agent_name = self._agent_name(session)
        options = state.config_options
        if not options:
            self._port.notify(f"{agent_name} offers no configuration options for this session", WARN)
            return
        if option_id is None:
            choices = [Choice(option.id, f"{option.name}: {value_label(option)}") for option in options]
            option_id = await self._port.select(f"Option of {agent_name}", choices, "acp_nvim.config")
            if option_id is None:
                return
        option = _find(state, option_id)
        if option is None:
            known = ", ".join(option.id for option in options)
            self._port.notify(f"unknown option {option_id!r} (available: {known})", WARN)
            return
        if raw is None:
            raw = await self._port.select(option.name, self._value_choices(option), "acp_nvim.config_value")
            if raw is None:
                return
        await self.set_option(session, option.id, raw)

    def _value_choices(self, option: s.SessionConfigOption) -> list[Choice]:
        if isinstance(option, s.SessionConfigOptionBoolean):
            return [
                Choice("true", _mark("on", option.current_value is True)),
                Choice("false", _mark("off", option.current_value is False)),
            ]
        return [
            Choice(value, _mark(label, value == option.current_value))
            for value, label, _ in select_choice_names(option)
        ]

    async def set_option(self, session: ChatSession, option_id: str, raw: str | bool) -> bool:
        state = session.state
        option = _find(state, option_id)
        if option is None:
            return False
        value = parse_value(option, raw)
        if value is None:
            allowed = ", ".join(config_value_words(option))
            self._port.notify(f"invalid value {raw!r} for {option.name} (allowed: {allowed})", WARN)
            return False
        if value == option.current_value:
            return True
        before = list(state.config_options)
        changed = msgspec.structs.replace(option, current_value=value)
        state.set_config_options([changed if other is option else other for other in before])
        self._changed(session)
        request: s.SetSessionConfigOptionRequest
        if isinstance(value, bool):
            request = s.SetSessionConfigOptionRequestBoolean(
                session_id=session.session_id, config_id=option.id, value=value
            )
        else:
            request = s.SetSessionConfigOptionRequestValue(
                session_id=session.session_id, config_id=option.id, value=value
            )
        agent = self._agent(session)
        try:
            if agent is None:
                raise ConnectionClosed("the agent is not running")
            response = await agent.set_config_option(session.session_id, request)
        except (RpcError, Unsupported, ConnectionClosed) as err:
            why = failure.describe(err) if isinstance(err, RpcError) else str(err)
            state.set_config_options(before, announce=False)
            self._refused(session, f"{option.name} = {value_label(changed)} refused: {why}")
            return False
        # The answer is the complete state: other options may have followed this one.
        state.set_config_options(response.config_options)
        self._changed(session)
        return True

    # ---- defaults ----------------------------------------------------------------------------------

    async def apply_defaults(self, session: ChatSession, spec: AgentSpec) -> None:
        state = session.state
        if spec.mode is not None and state.offered_modes:
            await self.set_mode(session, spec.mode)
        elif spec.mode is not None:
            log.info("default mode %s not applied: %s offers no modes", spec.mode, spec.name)
        for option_id, value in spec.config.items():
            if _find(state, option_id) is None:
                state.add_notice(f"Default option {option_id} is not offered by this agent", "warning")
                self._changed(session)
                continue
            await self.set_option(session, option_id, value)

    # ---- helpers -----------------------------------------------------------------------------------

    def _agent(self, session: ChatSession) -> AgentConnection | None:
        return self._runs.connection_of(session)

    def _agent_name(self, session: ChatSession) -> str:
        run = self._runs.agents.get(session.agent)
        return run.display_name if run is not None else session.agent

    def _refused(self, session: ChatSession, message: str) -> None:
        session.state.add_notice(message, "error")
        self._changed(session)
        self._port.notify(message, ERROR)


def _find(state: SessionState, option_id: str) -> s.SessionConfigOption | None:
    return next((option for option in state.config_options if option.id == option_id), None)


def _mode_name(state: SessionState, mode_id: str) -> str:
    return next((mode.name for mode in state.offered_modes if mode.id == mode_id), mode_id)


def _mark(label: str, current: bool, description: str | None = None) -> str:
    text = label + ("  (current)" if current else "")
    return text + (f" — {description}" if description else "")

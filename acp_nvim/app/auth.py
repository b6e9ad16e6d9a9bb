"""Authentication: the methods an agent offers, logging in on demand or when a call answers "auth required",
and logging out.

An agent method runs `authenticate`. A terminal method (offered only when we advertise `auth.terminal` to
that agent) runs the agent's own command with the method's extra args and env in a Neovim terminal; exit 0
means logged in, and the agent is then restarted and initialized again, since it reads its credentials at
start (its run reopens the sessions that were open). A call refused with "auth required" is retried once
after a successful login.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from acp_nvim.app.port import ERROR, INFO, WARN, Choice, NeovimPort
from acp_nvim.app.runs import AgentRun
from acp_nvim.client.agent.capabilities import Unsupported
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc import ConnectionClosed, RpcError
from acp_nvim.protocol import schema as s
from acp_nvim.protocol.errors import AUTH_REQUIRED

log = logging.getLogger("acp_nvim.auth")

T = TypeVar("T")

LoginMethod = s.AuthMethodAgent | s.AuthMethodTerminal


class AuthAbandoned(Exception):
    """Authentication was required and did not happen (no method, picker dismissed, login failed)."""


def login_methods(agent: AgentConnection, terminal_auth: bool) -> list[LoginMethod]:
    """The methods the user may pick: terminal ones only when terminal login was advertised."""
    usable: list[LoginMethod] = []
    for method in agent.auth_methods:
        if isinstance(method, s.AuthMethodTerminal) and not terminal_auth:
            continue
        if isinstance(method, s.AuthMethodAgent | s.AuthMethodTerminal):
            usable.append(method)
    return usable


class AuthFlow:
    def __init__(self, port: NeovimPort) -> None:
        self._port = port

    async def call(self, run: AgentRun, call: Callable[[AgentConnection], Awaitable[T]]) -> T:
        """`call` on the agent's connection; when refused with "auth required", a login and one retry."""
        agent = run.connection
        if agent is None:
            raise ConnectionClosed(f"{run.name} is not running")
        try:
            return await call(agent)
        except RpcError as err:
            if err.code != AUTH_REQUIRED:
                raise
            log.info("%s requires authentication: %s", run.name, err.message)
        if not await self.login(run, None, reason="requires authentication"):
            raise AuthAbandoned(f"{run.display_name} requires authentication: see :AcpAuth")
        agent = run.connection
        if agent is None:
            raise ConnectionClosed(f"{run.name} is not running")
        return await call(agent)

    async def login(self, run: AgentRun, method_id: str | None, reason: str = "") -> bool:
        """Picks (unless given) and runs a login method; True when logged in."""
        agent = run.connection
        if agent is None:
            return False
        name = run.display_name
        methods = login_methods(agent, run.spec.terminal_auth)
        if not methods:
            why = reason or "needs no login"
            self._port.notify(f"{name} {why}: it offers no authentication method", WARN)
            return False
        if method_id is None:
            choices = [Choice(method.id, _label(method)) for method in methods]
            prompt = f"{name} {reason}: log in with" if reason else f"Log in to {name} with"
            method_id = await self._port.select(prompt, choices, "acp_nvim.auth")
            if method_id is None:
                return False
        method = next((method for method in methods if method.id == method_id), None)
        if method is None:
            known = ", ".join(method.id for method in methods)
            self._port.notify(f"{name} offers no authentication method {method_id!r} (known: {known})", WARN)
            return False
        if isinstance(method, s.AuthMethodTerminal):
            return await self._terminal_login(run, method)
        try:
            await agent.authenticate(method.id)
        except (RpcError, Unsupported, ConnectionClosed) as err:
            self._port.notify(f"{name}: authentication failed: {getattr(err, 'message', None) or err}", ERROR)
            return False
        self._port.notify(f"logged in to {name} ({method.name})", INFO)
        return True

    async def _terminal_login(self, run: AgentRun, method: s.AuthMethodTerminal) -> bool:
        spec = run.spec
        argv = [spec.cmd, *spec.args, *(method.args or [])]
        env = {**spec.env, **(method.env or {})}
        code = await self._port.run_login(f"{run.display_name}: {method.name}", argv, env)
        if code != 0:
            self._port.notify(f"{run.display_name}: login failed (exit code {code})", ERROR)
            return False
        self._port.notify(f"logged in to {run.display_name} ({method.name}); restarting it", INFO)
        # Its run restarts the process; this attempt's end says whether it came back.
        await run.lifecycle.ask_reconnect().wait()
        return run.connection is not None

    async def logout(self, run: AgentRun) -> None:
        agent = run.connection
        if agent is None:
            return
        auth = agent.capabilities.auth
        if auth is None or auth.logout is None:
            self._port.notify(f"{run.display_name} does not support logout", WARN)
            return
        try:
            await agent.logout()
        except (RpcError, ConnectionClosed, Unsupported) as err:
            self._port.notify(
                f"{run.display_name}: logout failed: {getattr(err, 'message', None) or err}", ERROR
            )
            return
        self._port.notify(f"logged out of {run.display_name}", INFO)


def _label(method: LoginMethod) -> str:
    label = method.name
    if isinstance(method, s.AuthMethodTerminal):
        label += " (in a terminal)"
    if method.description:
        label += f" — {method.description}"
    return label

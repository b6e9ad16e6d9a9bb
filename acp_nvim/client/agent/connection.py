"""The ACP client role: a running agent, its handshake, typed calls to it, and dispatch of its requests.

`AgentConnection.launch` owns the process and the JSON-RPC connection for the lifetime of an `async with`
block; leaving the block stops the agent's whole process group. The calls themselves, and what the agent
said of itself, are `AgentCalls` (`client/agent/calls.py`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio

from acp_nvim.client.agent.calls import AgentCalls, InvalidAnswer, TrafficHook, TrafficLinesHook
from acp_nvim.client.agent.diagnostics import Diagnostics, TroubleSink
from acp_nvim.client.agent.handshake import CLIENT_INFO, DEFAULT_HANDSHAKE_TIMEOUT, initialize
from acp_nvim.client.agent.process import AgentCommand, AgentProcess
from acp_nvim.client.dispatch import Dispatcher
from acp_nvim.client.editor import Editor
from acp_nvim.jsonrpc import DEFAULT_MAX_MESSAGE_SIZE, Connection
from acp_nvim.protocol import codec
from acp_nvim.protocol import methods as m
from acp_nvim.protocol import schema as s

__all__ = ["AgentConnection", "InvalidAnswer", "TrafficHook", "TrafficLinesHook"]

log = logging.getLogger("acp_nvim.client")


class AgentConnection(AgentCalls):
    """A live, initialized agent. Created only by `launch`."""

    # ---- lifecycle -----------------------------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def launch(
        cls,
        command: AgentCommand,
        editor: Editor,
        *,
        handshake_timeout: float = DEFAULT_HANDSHAKE_TIMEOUT,
        client_info: s.Implementation = CLIENT_INFO,
        max_message_size: int | None = None,
        on_message: TrafficHook | None = None,
        on_messages: TrafficLinesHook | None = None,
        on_protocol_error: Callable[[str], None] | None = None,
        on_trouble: TroubleSink | None = None,
    ) -> AsyncIterator[AgentConnection]:
        """Start the agent and complete `initialize`; raises a `StartError` with a one-line reason.

        `on_message` sees every line read or sent, one call each; `on_messages` the same lines, those of one
        read together (cheaper for a stream: the traffic log). `on_protocol_error` sees every bad line (for
        logs); `on_trouble` gets the few messages meant for the user, one per kind of trouble and then
        rate-limited summaries (see `Diagnostics`).
        """
        try:
            async with cls._launch(
                command,
                editor,
                handshake_timeout,
                client_info,
                max_message_size,
                on_message,
                on_messages,
                on_protocol_error,
                on_trouble,
            ) as agent:
                yield agent
        except BaseExceptionGroup as group:
            raise _sole_exception(group) from None

    @classmethod
    @asynccontextmanager
    async def _launch(
        cls,
        command: AgentCommand,
        editor: Editor,
        handshake_timeout: float,
        client_info: s.Implementation,
        max_message_size: int | None,
        on_message: TrafficHook | None,
        on_messages: TrafficLinesHook | None,
        on_protocol_error: Callable[[str], None] | None,
        on_trouble: TroubleSink | None,
    ) -> AsyncIterator[AgentConnection]:
        spawned: list[AgentProcess] = []
        try:
            async with anyio.create_task_group() as tasks:
                process = await AgentProcess.spawn(command, tasks)
                spawned.append(process)
                diagnostics = Diagnostics(command.name, on_trouble or _no_trouble_sink)
                try:
                    dispatcher = Dispatcher(editor, diagnostics)

                    def protocol_error(message: str) -> None:
                        diagnostics.protocol_error(message)
                        if on_protocol_error is not None:
                            on_protocol_error(message)

                    async def closed_reason() -> str:
                        # EOF usually comes a moment before the exit status: wait for it briefly so the user
                        # sees the code and the stderr tail, not just "connection closed".
                        with anyio.move_on_after(1.0):
                            await process.wait()
                        return process.exit_reason()

                    connection = Connection(
                        process.stdout,
                        process.stdin,
                        on_request=dispatcher.on_request,
                        on_notification=dispatcher.on_notification,
                        route=dispatcher.route(),
                        closed_reason=closed_reason,
                        on_message=on_message,
                        on_messages=on_messages,
                        on_protocol_error=protocol_error,
                        peer_name=f"agent {command.name}",
                        cancel_method=m.CANCEL_REQUEST,
                        max_message_size=(
                            DEFAULT_MAX_MESSAGE_SIZE if max_message_size is None else max_message_size
                        ),
                    )
                    tasks.start_soon(connection.serve)
                    init, session_names = await initialize(
                        connection, editor, client_info, handshake_timeout, command, process.stderr
                    )
                    agent = cls(process, connection, dispatcher, init, session_capability_names=session_names)
                    diagnostics.agent_name = agent.display_name
                    log.info(
                        "initialized %s (protocol %d, capabilities %s)",
                        agent.display_name,
                        agent.protocol_version,
                        codec.encode(agent.capabilities).decode(),
                    )
                    yield agent
                finally:
                    diagnostics.flush()
                    await process.stop()
                    tasks.cancel_scope.cancel()
        finally:
            # Only now that the reading task is over: its fd must not be closed under a wait for it.
            for process in spawned:
                process.close_stdout()


def _sole_exception(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The one real error a task group wrapped, so callers can `except StartError` as usual."""
    errors = group.exceptions
    while len(errors) == 1 and isinstance(errors[0], BaseExceptionGroup):
        errors = errors[0].exceptions
    return errors[0] if len(errors) == 1 else group


def _no_trouble_sink(message: str) -> None:
    pass

"""The lifecycle of one agent: one explicit phase, and the transitions allowed between phases.

    CONNECTING --connected--> OPENING (its first session is being opened) --opened--> READY
         ^   \\--connected (no first session)---------------------------------------> READY
         |                                                                              |
         +---------------- reconnecting (a terminal login restarts the process) -------+
    any running phase --fail--> FAILED (the process may still be up: :AcpAuth can follow)
    any phase --stop--> STOPPING --ended--> STOPPED

A reconnect while the first session is being opened keeps OPENING: that session (and its login) is still on
its way, and only its outcome says whether the agent is ready. The events are the ways to wait on it.
"""

from __future__ import annotations

import enum

import anyio

from acp_nvim.app.views import State


class Phase(enum.Enum):
    CONNECTING = "connecting"
    OPENING = "opening"
    READY = "ready"
    FAILED = "failed"
    STOPPING = "stopping"
    STOPPED = "stopped"

    @property
    def shown(self) -> State:
        """The `state` of status() for this phase (before a session's own turn or permission refine it)."""
        return _SHOWN[self]


_SHOWN: dict[Phase, State] = {
    Phase.CONNECTING: "starting",
    Phase.OPENING: "starting",
    Phase.READY: "ready",
    Phase.FAILED: "error",
    # Its sessions are ending: nothing runs any more for the user.
    Phase.STOPPING: "stopped",
    Phase.STOPPED: "stopped",
}


class Lifecycle:
    """Only used from the anyio thread."""

    def __init__(self) -> None:
        self.phase = Phase.CONNECTING
        self.error: str | None = None
        # What the chats say when a stop ends them.
        self.stop_notice: str | None = None
        self.scope = anyio.CancelScope()
        self._done = anyio.Event()
        # Set when a connection attempt ended (connected or not); replaced before each reconnect.
        self._connected = anyio.Event()
        self._reconnect = anyio.Event()

    # ---- transitions ---------------------------------------------------------------------------

    def connected(self, *, open_first_session: bool) -> None:
        """The handshake is done (again, after a reconnect)."""
        self._reconnect = anyio.Event()
        if self.phase is Phase.CONNECTING:
            self.phase = Phase.OPENING if open_first_session else Phase.READY
        self._connected.set()

    def reconnecting(self) -> None:
        """The process is restarted (a login asked for it)."""
        if self.phase is not Phase.OPENING:
            self.phase, self.error = Phase.CONNECTING, None

    def opening(self) -> None:
        """Its first session is being opened (again: after a login following a failed first one)."""
        self.phase, self.error = Phase.OPENING, None

    def first_session_done(self, *, ready: bool) -> None:
        """The first session was opened (`ready`) or not; a failure reported already left OPENING."""
        if self.phase is Phase.OPENING:
            self.phase = Phase.READY if ready else Phase.CONNECTING

    def fail(self, message: str) -> None:
        # A failure on the way down (the process died as it was stopped) does not undo the stop.
        if not self.stop_asked:
            self.phase = Phase.FAILED
        self.error = message

    def stopping(self, notice: str | None) -> None:
        self.phase, self.stop_notice = Phase.STOPPING, notice

    def stopped(self) -> None:
        self.phase, self.error = Phase.STOPPED, None

    # ---- waiting ------------------------------------------------------------------------------

    @property
    def starting(self) -> bool:
        return self.phase in (Phase.CONNECTING, Phase.OPENING)

    @property
    def stop_asked(self) -> bool:
        return self.phase in (Phase.STOPPING, Phase.STOPPED)

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def finish(self) -> None:
        """The run task ended: whatever waited for a connection or the end is woken."""
        self._connected.set()
        self._done.set()

    async def wait_done(self) -> None:
        await self._done.wait()

    async def wait_connected(self) -> None:
        await self._connected.wait()

    def ask_reconnect(self) -> anyio.Event:
        """Asks the run to restart the process; the returned event is set once that attempt ended."""
        self._connected = anyio.Event()
        self._reconnect.set()
        return self._connected

    async def wait_reconnect_asked(self) -> None:
        await self._reconnect.wait()

"""The agent as an operating-system process.

The agent runs in its own session, hence its own process group, so that stopping it can reach everything
it started (launchers like `npx` or `uvx` leave the real agent as a grandchild). Its stderr is drained all
the time (an agent that fills the pipe would block) into the log and a bounded ring of its last lines, which
is what the user is shown when the agent fails.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, TypeAlias

import anyio
import msgspec
from anyio.abc import ByteSendStream, Process, TaskGroup

from .pipe import PipeReader, open_pipe

log = logging.getLogger("acp_nvim.process")
agent_stderr_log = logging.getLogger("acp_nvim.agent_stderr")

STDERR_TAIL_LINES = 40
# A single stderr "line" longer than this is cut: an agent printing 100 MB without a newline must not make us
# hold 100 MB.
STDERR_LINE_MAX = 4096
# Lines of an agent's stderr logged at "info" (the default level): enough for what it says when something goes
# wrong; an agent that floods its stderr must not fill the disk, the rest is logged at "debug" only.
STDERR_INFO_LINES = 1000


GroupEvent: TypeAlias = Literal["started", "gone"]
GroupObserver: TypeAlias = Callable[[GroupEvent, int, "AgentCommand"], None]

# Whoever must be able to reach agent process groups without this process's help (the editor, should this
# process die) subscribes here: it hears of each group when the agent starts and when the group is empty.
_group_observers: list[GroupObserver] = []


def observe_groups(observer: GroupObserver) -> Callable[[], None]:
    """Calls `observer("started" | "gone", pgid, command)` for every agent group; returns the unsubscriber."""
    _group_observers.append(observer)

    def unsubscribe() -> None:
        if observer in _group_observers:
            _group_observers.remove(observer)

    return unsubscribe


def _tell_observers(event: GroupEvent, pgid: int, command: AgentCommand) -> None:
    for observer in list(_group_observers):
        try:
            observer(event, pgid, command)
        except Exception:
            log.exception("process group observer failed")


class StartError(Exception):
    """The agent could not be started or did not complete the handshake; str() is a one-line user message."""


class AgentNotFound(StartError):
    pass


class AgentCommand(msgspec.Struct, frozen=True):
    """How to launch an agent: the executable, its arguments, extra environment and working directory."""

    command: str
    args: Sequence[str] = ()
    env: Mapping[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None

    @property
    def name(self) -> str:
        """The executable's name, as the user would call the agent when nothing better is known."""
        return os.path.basename(self.command)

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "is still running"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return f"was killed by {name}"
    return f"exited with code {returncode}"


class StderrTail:
    """Keeps the last lines an agent wrote to stderr, bounded in lines and in bytes per line."""

    def __init__(self, max_lines: int = STDERR_TAIL_LINES, name: str = "agent") -> None:
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._partial = bytearray()
        self._name = name
        self._waiter: anyio.Event | None = None
        # Lines finished so far: a mark for `lines_since`.
        self.count = 0

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                room = STDERR_LINE_MAX - len(self._partial)
                if room > 0:
                    self._partial += data[start : start + room]
                return
            room = max(0, STDERR_LINE_MAX - len(self._partial))
            self._partial += data[start : start + min(room, newline - start)]
            self._finish_line()
            start = newline + 1

    def _finish_line(self) -> None:
        line = self._partial.decode("utf-8", errors="replace").rstrip("\r")
        self._partial.clear()
        self._lines.append(line)
        self.count += 1
        if self.count <= STDERR_INFO_LINES:
            agent_stderr_log.info("%s stderr: %s", self._name, line)
        else:
            if self.count == STDERR_INFO_LINES + 1:
                agent_stderr_log.info("%s stderr: more lines are logged at level debug only", self._name)
            agent_stderr_log.debug("%s stderr: %s", self._name, line)
        if self._waiter is not None:
            self._waiter.set()
            self._waiter = None

    def flush(self) -> None:
        if self._partial:
            self._finish_line()

    def lines(self, count: int = 10) -> list[str]:
        tail = [line for line in self._lines if line.strip()]
        return tail[-count:]

    def lines_since(self, mark: int, count: int = 10) -> list[str]:
        """The last `count` non-blank lines finished after `self.count` was `mark` (those still kept)."""
        new = min(self.count - mark, len(self._lines))
        if new <= 0:
            return []
        recent = list(self._lines)[-new:]
        return [line for line in recent if line.strip()][-count:]

    async def wait_beyond(self, mark: int) -> None:
        """Returns once a line has been finished after `self.count` was `mark`."""
        while self.count <= mark:
            if self._waiter is None:
                self._waiter = anyio.Event()
            await self._waiter.wait()


class AgentProcess:
    """A started agent process. Use `spawn`, then `stop` (always: it is what guarantees no orphans)."""

    def __init__(self, process: Process, command: AgentCommand, stdout: PipeReader) -> None:
        self._process = process
        self._stdout = stdout
        self.command = command
        self.pid: int = process.pid
        # start_new_session makes the agent the leader of a new process group whose id is its pid.
        self.pgid: int = process.pid
        self.stderr = StderrTail(name=command.name)
        self._exited = anyio.Event()

    @classmethod
    async def spawn(cls, command: AgentCommand, task_group: TaskGroup) -> AgentProcess:
        env = {**os.environ, **command.env}
        executable = shutil.which(command.command, path=env.get("PATH"))
        if executable is None:
            raise AgentNotFound(f"agent command not found: {command.command}")
        read_fd, write_fd = open_pipe()
        try:
            process = await anyio.open_process(
                [executable, *command.args],
                cwd=command.cwd,
                env=env,
                start_new_session=True,
                stdout=write_fd,
            )
        except OSError as err:
            os.close(read_fd)
            raise AgentNotFound(f"cannot run agent {command.describe()}: {err.strerror or err}") from err
        except BaseException:
            os.close(read_fd)
            raise
        finally:
            # The child has its copy: ours would keep the pipe open past the agent's exit (no end of stream).
            os.close(write_fd)
        agent = cls(process, command, PipeReader(read_fd))
        log.info("started agent %s (pid %d)", command.describe(), agent.pid)
        _tell_observers("started", agent.pgid, command)
        task_group.start_soon(agent._drain_stderr)
        task_group.start_soon(agent._watch_exit)
        return agent

    @property
    def stdin(self) -> ByteSendStream:
        assert self._process.stdin is not None
        return self._process.stdin

    @property
    def stdout(self) -> PipeReader:
        return self._stdout

    def close_stdout(self) -> None:
        """Once nothing reads it any more (the connection is over): the pipe's read end is released."""
        self._stdout.close()

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def exited(self) -> bool:
        return self._exited.is_set()

    async def wait(self) -> int:
        await self._exited.wait()
        code = self._process.returncode
        assert code is not None
        return code

    def exit_reason(self) -> str:
        """One line for the user: how the agent ended and what it last said on stderr."""
        reason = f"agent {self.command.name} {describe_exit(self.returncode)}"
        tail = self.stderr.lines(3)
        if tail:
            reason += ": " + " | ".join(tail)
        return reason

    async def _drain_stderr(self) -> None:
        stream = self._process.stderr
        if stream is None:
            return
        try:
            async for chunk in stream:
                self.stderr.feed(chunk)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            self.stderr.flush()

    async def _watch_exit(self) -> None:
        code = await self._process.wait()
        log.info("agent %s (pid %d) %s", self.command.command, self.pid, describe_exit(code))
        self._exited.set()

    async def stop(self, *, grace: float = 1.0, term_grace: float = 2.0) -> None:
        """Close stdin, give the agent `grace` seconds, then SIGTERM and finally SIGKILL its whole group.

        The group is signalled even when the agent itself has already exited: its children may not have.
        """
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self.stdin.aclose()
            with anyio.move_on_after(grace):
                await self._exited.wait()
            for sig in (signal.SIGTERM, signal.SIGKILL):
                if not self._group_alive():
                    break
                self._signal_group(sig)
                await self._wait_group_gone(term_grace)
            with anyio.move_on_after(term_grace):
                # Reaped here, on the loop: asyncio's child watcher that sees the exit only after the loop has
                # closed (a probe timing out, the host exiting) warns on stderr, past our one-line errors.
                await self._process.wait()
            if not self._group_alive():
                # Only a group seen empty is forgotten: one outliving SIGKILL stays on the observers' lists.
                _tell_observers("gone", self.pgid, self.command)

    async def _wait_group_gone(self, timeout: float) -> None:
        # Signals are delivered asynchronously; polling is the only portable way to see a group empty.
        with anyio.move_on_after(timeout):
            while self._group_alive():
                await anyio.sleep(0.02)

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.pgid, sig)
            log.info("sent %s to agent process group %d", sig.name, self.pgid)
        except ProcessLookupError:
            pass
        except PermissionError as err:
            log.warning("cannot signal process group %d: %s", self.pgid, err)

    def _group_alive(self) -> bool:
        if _HAS_PROC:
            # /proc tells a zombie leader from a live one. `_exited` cannot be trusted here: when the caller's
            # scope is cancelled (a stop from the editor), the task that reaps the leader is cancelled with it
            # and `_exited` is never set, so every stop would wait out both graces.
            return group_has_members(self.pgid)
        if not self._exited.is_set():
            return True
        return group_has_members(self.pgid)


_HAS_PROC = os.path.isdir("/proc")


def group_has_members(pgid: int) -> bool:
    """Whether any process other than a zombie is still in the group. For the host's own agents; Neovim scans
    for its terminals' groups, and for the agents' once the host is gone, in
    `lua/acp_nvim/editor/process_groups.lua` (another process, which must work without this one)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not _HAS_PROC:
        return True  # no way to tell zombies apart here; killpg succeeding is the best evidence we have
    return any(_live_member(pid, pgid) for pid in _pids())


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _live_member(pid: int, pgid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    state, group = fields[0], int(fields[2])
    return group == pgid and state != b"Z"

"""An agent spawned by the host's first lines, so that the agent starts while the host is still loading.

The first `:AcpStart` spawns the Python host, which needs a few hundred milliseconds to import pynvim,
asyncio and the plugin before it could spawn the agent, and the agent then needs its own start-up time
(hundreds of milliseconds for a Node.js agent). The Lua layer hands the agent's command to the new host in
$ACP_NVIM_PRESPAWN; `spawn_from_environment` runs before any heavy import and spawns it exactly as
`AgentProcess.spawn` would (same executable lookup, environment, working directory, own session, default
SIGPIPE). The first `AgentProcess.spawn` adopts it when its command is the same (`take`), else ends it.

Until then only this module knows the agent, and the host is not yet talking to Neovim: the agent's process
group goes to stderr at once (`acp-nvim-prespawned <pgid>`), where Lua reads it, so that Neovim can end the
group if the host dies while loading.

Standard library only, imported before everything else: keep it cheap.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence

ENV = "ACP_NVIM_PRESPAWN"
# $ACP_NVIM_PRESPAWN is the working directory, the command and its arguments, and the extra environment's
# NAME=value entries, as records; not JSON, whose import alone would delay the spawn by a few milliseconds.
RECORD, FIELD = "\x1e", "\x1f"
STDERR_MARK = "acp-nvim-prespawned"


class Prespawned:
    """A running agent nobody has adopted yet; the fds are this process's ends of its stdio pipes."""

    def __init__(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: str | None,
        pid: int,
        fds: Sequence[int],
    ) -> None:
        self.key = (command, tuple(args), _env_key(env), cwd)
        self.pid = pid
        self.stdin, self.stdout, self.stderr = fds
        self.started = time.monotonic()

    def matches(self, command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None) -> bool:
        return self.key == (command, tuple(args), _env_key(env), cwd)

    def discard(self) -> None:
        """End it: its whole group, at once (it has done nothing but start), and reap it."""
        for fd in (self.stdin, self.stdout, self.stderr):
            _quietly(os.close, fd)
        _quietly(os.killpg, self.pid, signal.SIGKILL)
        _quietly(os.waitpid, self.pid, 0)


def _quietly(fn: Callable[..., object], *args: int) -> None:
    try:
        fn(*args)
    except OSError:
        return


_waiting: Prespawned | None = None


def _env_key(env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(env.items()))


def spawn_from_environment() -> None:
    """Spawn the agent $ACP_NVIM_PRESPAWN describes, if any. Never raises: on any trouble the host spawns the
    agent the usual way later, and reports what goes wrong then."""
    raw = os.environ.pop(ENV, None)
    if not raw:
        return
    try:
        cwd, command, env = raw.split(RECORD)
        argv = command.split(FIELD)
        pairs = (entry.partition("=") for entry in env.split(FIELD) if entry)
        spawn(argv[0], argv[1:], {name: value for name, _, value in pairs}, cwd or None)
    except Exception:
        return


def spawn(command: str, args: Sequence[str], env: Mapping[str, str], cwd: str | None) -> Prespawned | None:
    """Spawn the agent and keep it for `take`; None when it cannot be spawned (the usual path reports why)."""
    global _waiting
    full_env = {**os.environ, **env}
    executable = shutil.which(command, path=full_env.get("PATH"))
    if executable is None:
        return None
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    stderr_r, stderr_w = os.pipe()
    ours, theirs = (stdin_w, stdout_r, stderr_r), (stdin_r, stdout_w, stderr_w)
    here = os.getcwd()
    try:
        # posix_spawn has no working-directory argument; nothing else runs in this process yet.
        if cwd is not None:
            os.chdir(cwd)
        pid = os.posix_spawn(
            executable,
            [executable, *args],
            full_env,
            file_actions=[(os.POSIX_SPAWN_DUP2, fd, target) for target, fd in enumerate(theirs)],
            setsid=True,
            # Python ignores SIGPIPE and SIGXFSZ; the agent gets the defaults, as subprocess gives them.
            setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),
        )
    except (OSError, NotImplementedError):  # NotImplementedError: a platform without setsid here
        for fd in (*ours, *theirs):
            os.close(fd)
        return None
    finally:
        if cwd is not None:
            os.chdir(here)
    for fd in theirs:
        os.close(fd)
    _waiting = Prespawned(command, args, env, cwd, pid, ours)
    sys.stderr.write(f"{STDERR_MARK} {pid}\n")
    sys.stderr.flush()
    atexit.register(_discard_waiting)
    return _waiting


def take() -> Prespawned | None:
    """The waiting agent, once: the caller adopts it when it `matches` its command, else `discard`s it."""
    global _waiting
    waiting, _waiting = _waiting, None
    return waiting


def _discard_waiting() -> None:
    global _waiting
    waiting, _waiting = _waiting, None
    if waiting is not None:
        waiting.discard()

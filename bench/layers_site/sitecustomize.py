"""The host's layer clocks for `bench/layers.py`, loaded by the host's interpreter (this folder on its
PYTHONPATH) when `ACP_BENCH_LAYERS` names a file; any other process started with that path (the flood agent)
finds the variable unset or is not the host, and is left alone. No product code changes: the entry points of
each layer are wrapped on their classes and modules before the host uses them.

Each wrapper reads the thread's CPU clock (`time.thread_time_ns`) on entry and exit and charges the time to
its layer, less the time of the wrapped layers called inside it (a stack per thread), so that the layers add
up to the CPU time of the calls wrapped. The wrapped calls are per read (64 KiB of lines), per frame or per
line only for the lines the route refuses: a few thousand per stream, their cost (~1 us each) is left in
"other". On SIGUSR1 the totals are written to the file (JSON) with the native ids of the threads they ran on.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any


def _enabled() -> bool:
    return bool(os.environ.get("ACP_BENCH_LAYERS")) and any(
        arg.endswith("acp_nvim_host.py") for arg in getattr(sys, "orig_argv", ())
    )


_totals: dict[str, list[int]] = {}
_threads: dict[str, set[int]] = {}
_local = threading.local()


def _wrap(layer: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    clock = time.thread_time_ns

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = [0]
        stack.append(0)
        started = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            spent = clock() - started
            inner = stack.pop()
            stack[-1] += spent
            entry = _totals.get(layer)
            if entry is None:
                entry = _totals[layer] = [0, 0]
                _threads[layer] = set()
            entry[0] += spent - inner
            entry[1] += 1
            _threads[layer].add(threading.get_native_id())

    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


class _TimedOs:
    """The pipe module's `os`, its `read` (the agent's pipe) timed."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.read = _wrap("pipe read", real.read)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _dump(_signum: int, _frame: object) -> None:
    path = os.environ["ACP_BENCH_LAYERS"]
    data = {
        layer: {"ns": ns, "calls": calls, "threads": sorted(_threads[layer])}
        for layer, (ns, calls) in _totals.items()
    }
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        json.dump(data, out)
    os.replace(path + ".tmp", path)


def _install() -> None:
    import signal

    from acp_nvim.app.sessions import incoming
    from acp_nvim.client import dispatch
    from acp_nvim.client.agent import pipe, traffic
    from acp_nvim.client.session import state
    from acp_nvim.jsonrpc import connection, framing, wire
    from acp_nvim.nvim import bridge, render

    setattr(pipe, "os", _TimedOs(os))  # noqa: B010 (a module attribute typing does not see)
    # (owner, name, layer): the owner's attribute replaced by its timed wrapper.
    wrapped: list[tuple[object, str, str]] = [
        (framing.LineSplitter, "feed", "split lines"),
        (traffic.TrafficLog, "record_lines", "traffic log"),
        (wire.NotificationRoute, "take_leading", "decode"),
        (connection.Connection, "_handle_item", "decode"),
        (dispatch.Dispatcher, "_session_updates", "dispatch"),
        (incoming.Incoming, "on_session_updates", "dispatch"),
        (state.SessionState, "apply", "reducer"),
        (state.SessionState, "apply_chunks", "reducer"),
        (render.ChatRenderer, "changed", "view model"),
        (render.ChatRenderer, "_send", "view model"),
        (render, "ops_for", "view model"),
        (render, "encode_ops", "ops to JSON"),
        (bridge.Bridge, "_hand_over", "hand-off to pynvim"),
        (bridge.Bridge, "_exec_batch", "msgpack + write to Neovim"),
    ]
    for owner, name, layer in wrapped:
        setattr(owner, name, _wrap(layer, getattr(owner, name)))
    signal.signal(signal.SIGUSR1, _dump)


if _enabled():
    _install()

"""Profile the Python half of the streaming path in-process, without Neovim: `python -m bench.profile_host`.

The real client (`AgentConnection`) reads the flood agent; an editor does what the controller does with each
update (the real reducer `SessionState`, then the real `ChatRenderer`, which builds the view models); the
`Bridge` is replaced by one that encodes each Lua call with msgpack, as pynvim would, and drops it; the
traffic log of `:AcpLog` records every line, as in the host. cProfile (stdlib) shows where the host's time
goes; the Lua half is timed inside Neovim by the streaming benchmark (its `apply` figures).

`--no-profile` runs without cProfile (whose cost per call distorts a path made of many small calls) and prints
the process's CPU time: run it under `valgrind --tool=callgrind` at two sizes, and the difference of the
instruction counts over the difference of the sizes is the cost of one streamed update.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import time
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import msgpack  # type: ignore[import-untyped]
import msgspec

from acp_nvim.app.sessions.incoming import CHUNKS
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.traffic import TrafficLog
from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.client.session.state import SessionState
from acp_nvim.client.session.text_run import TextRun
from acp_nvim.nvim.render import ChatRenderer
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from bench.flood_agent import final_text
from bench.floor import flood_command


class EncodingBridge:
    """Stands in for `Bridge`: pays the encoding pynvim would pay, counts the calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.bytes = 0
        self.done = anyio.Event()
        self.needle = ""

    def attach_loop(self, call_soon: Any) -> None:
        pass

    def lua(self, code: str, *args: Any) -> None:
        self.calls += 1
        self.bytes += len(msgpack.packb([2, "nvim_exec_lua", [code, list(args)]]))
        if code.startswith("require('acp_nvim.ui.chat').apply") and self.needle:
            # The ops travel as JSON chunks (acp_nvim/nvim/render.py); decoding them is not the host's cost.
            for op in (op for chunk in args[1] for op in msgspec.json.decode(chunk)):
                if (op.get("op") == "append" and op["text"].endswith(self.needle)) or (
                    op.get("op") == "add"
                    and op["item"]["lines"][-1].get("s", [[""]])[-1][0].endswith(self.needle)
                ):
                    self.done.set()

    async def lua_result(self, code: str, *args: Any) -> Any:
        self.lua(code, *args)
        return None


class RenderingEditor(HeadlessEditor):
    """What `Incoming.on_session_updates` does with a read's updates, minus the status bookkeeping."""

    def __init__(
        self, bridge: EncodingBridge, spawn: Callable[[Callable[[], Coroutine[Any, Any, None]]], None]
    ) -> None:
        self._bridge = bridge
        self._spawn = spawn
        self.renderer: ChatRenderer | None = None
        self.state: SessionState | None = None

    def open(self, session_id: str) -> ChatRenderer:
        self.state = SessionState(session_id)
        self.renderer = ChatRenderer(self._bridge, self.state, "Flood agent", self._spawn)  # type: ignore[arg-type]
        return self.renderer

    def session_updates(self, notifications: list[u.SessionNotification]) -> None:
        self.session_stream(list(notifications))

    def session_stream(self, notifications: list[u.SessionNotification | TextRun]) -> None:
        """As the host's editor: the stream's bulk read by its bytes comes as `TextRun`s."""
        if self.state is None or self.renderer is None:
            return
        updates = [n if isinstance(n, TextRun) else n.update for n in notifications]
        if all(type(update) in CHUNKS or type(update) is TextRun for update in updates):
            self.state.apply_chunks(updates)  # type: ignore[arg-type]
        else:
            for n in notifications:
                for notification in n.notifications() if isinstance(n, TextRun) else [n]:
                    self.state.apply(notification.update)
        self.renderer.changed()


async def run(show: str, count: int) -> tuple[float, EncodingBridge]:
    bridge = EncodingBridge()
    async with anyio.create_task_group() as tasks:

        def spawn(fn: Callable[[], Coroutine[Any, Any, None]]) -> None:
            tasks.start_soon(fn)

        editor = RenderingEditor(bridge, spawn)
        traffic = TrafficLog()
        async with AgentConnection.launch(flood_command(), editor, on_messages=traffic.record_lines) as agent:
            session = await agent.new_session(os.getcwd())
            renderer = editor.open(session.session_id)
            bridge.needle = final_text(show, count)
            started = time.perf_counter()
            assert editor.state is not None
            editor.state.add_user_prompt(f"{show} {count}")
            renderer.flush()
            await agent.prompt(session.session_id, [s.ContentBlockText(text=f"{show} {count}")])
            renderer.flush()
            with anyio.fail_after(120):
                await bridge.done.wait()
            elapsed = time.perf_counter() - started
        tasks.cancel_scope.cancel()
    return elapsed, bridge


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("show", nargs="?", default="words", choices=["words", "mix", "history"])
    parser.add_argument("count", nargs="?", type=int, default=100_000)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--no-profile", action="store_true", help="no cProfile: CPU time (or callgrind) only")
    args = parser.parse_args(argv)
    if args.no_profile:
        cpu = time.process_time()
        elapsed, bridge = anyio.run(run, args.show, args.count)
        cpu = time.process_time() - cpu
        print(
            f"{args.show} {args.count}: {elapsed * 1000:.0f} ms, CPU {cpu * 1000:.0f} ms, "
            f"{bridge.calls} Lua calls, {bridge.bytes} bytes"
        )
        return
    profile = cProfile.Profile()
    profile.enable()
    elapsed, bridge = anyio.run(run, args.show, args.count)
    profile.disable()
    print(
        f"{args.show} {args.count}: {elapsed * 1000:.0f} ms, {bridge.calls} Lua calls, {bridge.bytes} bytes"
    )
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(args.top)
    print(out.getvalue())


if __name__ == "__main__":
    main()

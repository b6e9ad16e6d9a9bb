"""The floors: the same agent traffic handled by the bare Python client, without Neovim.

`AgentConnection` reads and decodes what the flood agent sends; `FloorEditor` does nothing with it except
note when the awaited last update arrives (streaming), and serves fs requests straight from disk (fs). What
Neovim adds on top of these is what the benchmarks judge.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.client.agent.process import AgentCommand
from acp_nvim.client.editor import HeadlessEditor
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u
from bench.harness import BENCH, FLOOD_AGENT, NS_PER_S, NVIM, flood_agent_pid, task_cpu_seconds, wait_until

LUA_FLOOR = BENCH / "lua_floor.lua"


class FloorEditor(HeadlessEditor):
    """A null editor: stamps the arrival of the awaited update, reads and writes files with plain Python."""

    def __init__(self, fs: bool = False) -> None:
        self.needle: str | None = None
        self.done_at: float | None = None
        self.updates = 0
        self._fs = fs

    def client_capabilities(self) -> s.ClientCapabilities:
        if not self._fs:
            return s.ClientCapabilities()
        return s.ClientCapabilities(fs=s.FileSystemCapabilities(read_text_file=True, write_text_file=True))

    def session_updates(self, notifications: list[u.SessionNotification]) -> None:
        self.updates += len(notifications)
        if self.done_at is not None:
            return
        for notification in notifications:
            update = notification.update
            if (
                isinstance(update, s.SessionUpdateAgentMessageChunk)
                and isinstance(update.content, s.ContentBlockText)
                and update.content.text == self.needle
            ):
                self.done_at = time.perf_counter()
                return

    async def read_text_file(self, params: s.ReadTextFileRequest) -> s.ReadTextFileResponse:
        with open(params.path, encoding="utf-8") as source:
            text = source.read()
        if params.line is not None or params.limit is not None:
            first = (params.line or 1) - 1
            lines = text.split("\n")
            last = len(lines) if params.limit is None else first + params.limit
            text = "\n".join(lines[first:last])
        return s.ReadTextFileResponse(content=text)

    async def write_text_file(self, params: s.WriteTextFileRequest) -> s.WriteTextFileResponse:
        with open(params.path, "w", encoding="utf-8") as target:
            target.write(params.content)
        return s.WriteTextFileResponse()


def flood_command(env: dict[str, str] | None = None) -> AgentCommand:
    return AgentCommand(command=sys.executable, args=[str(FLOOD_AGENT)], env=env or {}, cwd=os.getcwd())


async def _stream(text: str, needle: str, warmup: str | None) -> float:
    editor = FloorEditor()
    async with AgentConnection.launch(flood_command(), editor) as agent:
        session = await agent.new_session(os.getcwd())
        if warmup is not None:
            await agent.prompt(session.session_id, [s.ContentBlockText(text=warmup)])
        editor.needle = needle
        started = time.perf_counter()
        await agent.prompt(session.session_id, [s.ContentBlockText(text=text)])
        assert editor.done_at is not None, f"the floor never saw {needle!r}"
        return editor.done_at - started


def stream_floor(text: str, needle: str, warmup: str | None = "words 100") -> float:
    """Seconds from sending the prompt to decoding its last update, in the bare Python client."""
    return anyio.run(_stream, text, needle, warmup)


async def _startup() -> float:
    started = time.perf_counter()
    async with AgentConnection.launch(flood_command(), HeadlessEditor()) as agent:
        await agent.new_session(os.getcwd())
        return time.perf_counter() - started


def startup_floor() -> float:
    """The agent's own start-up: spawn + initialize + session/new, with the bare Python client."""
    return anyio.run(_startup)


async def _fs(prompts: list[str], report: Path) -> None:
    editor = FloorEditor(fs=True)
    async with AgentConnection.launch(flood_command({"ACP_FLOOD_REPORT": str(report)}), editor) as agent:
        session = await agent.new_session(os.getcwd())
        for text in prompts:
            await agent.prompt(session.session_id, [s.ContentBlockText(text=text)])


def fs_floor(prompts: list[str], report: Path) -> None:
    """Plays fs prompts against the Python floor; the flood agent writes its timings to `report`."""
    anyio.run(_fs, prompts, report)


@dataclass(frozen=True)
class LuaRun:
    seconds: float
    first: float
    cpu: float
    # The flood agent's own CPU time over the turn (s; 0 when it could not be found).
    agent_cpu: float = 0.0


class LuaFloor:
    """The in-process Lua floor (`lua_floor.lua`): a bare headless Neovim that is its own minimal ACP client
    of the flood agent, streaming into a plain buffer changed once per frame (`plain`), or into a markdown
    buffer with tree-sitter highlighting changed once per read. Kept running across prompts, as the plugin's
    Neovim is."""

    def __init__(self, workdir: Path, plain: bool) -> None:
        import pynvim

        # Listening, as the plugin's Neovim does: a UI (bench/ui_client.py) can attach to either.
        self.socket = str(workdir / "nvim.sock")
        argv = [NVIM, "--embed", "--headless", "--clean", "-n", "--listen", self.socket]
        argv += ["--cmd", f"cd {workdir}"]
        self.api: Any = pynvim.attach("child", argv=argv)
        self.pid: int = self.api.call("getpid")
        self.api.exec_lua(LUA_FLOOR.read_text(encoding="utf-8"))
        self.api.exec_lua("acp_floor.start(...)", [sys.executable, str(FLOOD_AGENT)], plain)
        wait_until(lambda: self.api.exec_lua("return acp_floor.ready == true"), 30, "the Lua floor's session")

    def stream(self, text: str, needle: str, timeout: float = 120.0) -> LuaRun:
        """Seconds from the prompt to its last words in the buffer, and to its first ones; Neovim's CPU time
        over the turn."""
        agent = flood_agent_pid(self.pid)
        cpu, agent_cpu = task_cpu_seconds(self.pid), task_cpu_seconds(agent) if agent else 0.0
        self.api.exec_lua("acp_floor.prompt(...)", text, needle)
        # The plain kind may show the last words a frame after the prompt's answer.
        wait_until(
            lambda: self.api.exec_lua("return acp_floor.ended and acp_floor.t_done ~= nil"),
            timeout,
            f"{needle!r} in the floor",
        )
        cpu = task_cpu_seconds(self.pid) - cpu
        agent_cpu = task_cpu_seconds(agent) - agent_cpu if agent else 0.0
        record = self.api.exec_lua("return acp_floor.record()")
        if not record.get("t_done"):
            raise RuntimeError(f"the Lua floor never showed {needle!r}")
        return LuaRun(
            (record["t_done"] - record["t0"]) / NS_PER_S,
            (record["t_first"] - record["t0"]) / NS_PER_S,
            cpu,
            agent_cpu,
        )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.api.exec_lua("acp_floor.stop()")
        with contextlib.suppress(Exception):
            self.api.command("qa!")
        with contextlib.suppress(Exception):
            self.api.close()

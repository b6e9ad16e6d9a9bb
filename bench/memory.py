"""Benchmark: the host's memory after a chat of 50 MiB is closed (issue 31).

One Neovim with the flood agent; a first small turn pays for the connection. Then, chat after chat (`:AcpNew`
for each but the first), `bigtext 50`: one message of 50 MiB in 64 KiB chunks, streamed to its last words
shown; the chat's buffer is then wiped, as `:bwipeout` or `:q` in the chat does, which closes the session. The
host's VmRSS (`/proc/PID/status`) before the chat, with it open, and once it is closed (the host settled: no
CPU for 200 ms). The target: within 5 MiB of before, for every chat. What the host keeps by design is bounded
and shared by every chat: the traffic log of `:AcpLog` (5,000 lines, 8 MiB, a line cut to 64 KiB), which this
stream's 64 KiB lines fill on the first chat; that chat is allowed those 8 MiB more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_nvim.client.agent.traffic import DEFAULT_MAX_BYTES
from bench.flood_agent import final_text
from bench.harness import Neovim, Result, mib, proc_status_kib, settle, wait_until

if TYPE_CHECKING:
    from bench.suite import Config

TARGET_MIB = 5.0
CURRENT = "return require('acp_nvim.ui.chat').current"
GONE = "return require('acp_nvim.ui.chat').chats[...] == nil"
WIPE = """
local chat = require('acp_nvim.ui.chat')
local current = chat.chats[chat.current]
vim.cmd('bwipeout! ' .. current.buf)
"""


def _rss(pid: int) -> int:
    kib = proc_status_kib(pid, "VmRSS")
    if kib is None:
        raise RuntimeError(f"no VmRSS for the host ({pid})")
    return kib


def _current_other_than(nv: Neovim, session_id: object) -> Callable[[], bool]:
    """Whether the current chat is now another one."""
    return lambda: nv.lua(CURRENT) not in (None, session_id)


def _gone(nv: Neovim, session_id: object) -> Callable[[], bool]:
    """Whether the chat of `session_id` is closed in Neovim."""
    return lambda: bool(nv.lua(GONE, session_id))


def memory(config: Config) -> Result:
    result = Result("memory")
    size = config.size(50, 2)
    chats = 1 + config.runs
    workdir = config.workdir("memory")
    nv = Neovim(workdir)
    judged = not config.quick
    rows: list[tuple[int, int, int]] = []
    try:
        nv.start_agent()
        host = nv.host_pid()
        if host is None:
            raise RuntimeError("the host's pid is unknown")
        nv.prompt_and_wait("words 100", final_text("words", 100))
        for index in range(chats):
            if index:
                before_id = nv.lua(CURRENT)
                nv.api.command("AcpNew")
                wait_until(_current_other_than(nv, before_id), 30, "the new chat")
                nv.wait_state("ready")
            settle([host, nv.pid])
            before = _rss(host)
            nv.prompt_and_wait(f"bigtext {size}", final_text("bigtext", size), timeout=300)
            settle([host, nv.pid])
            opened = _rss(host)
            closing = nv.lua(CURRENT)
            nv.lua(WIPE)
            wait_until(_gone(nv, closing), 30, "the chat closed")
            # The host's close (session/close, then its memory given back) is over once it is idle.
            settle([host, nv.pid], quiet=0.2)
            rows.append((before, opened, _rss(host)))
    finally:
        nv.close()
    log_mib = DEFAULT_MAX_BYTES / 2**20
    for index, (before, opened, closed) in enumerate(rows, 1):
        grown = (closed - before) / 1024
        label = f"chat {index} of {size} MiB"
        result.figures[label] = (
            f"host VmRSS {mib(before)} before, {mib(opened)} with the chat open, {mib(closed)} once closed "
            f"({grown:+.1f} MiB)"
        )
        # The first chat also fills the traffic log of :AcpLog, which every chat shares and which is bounded.
        allowed = TARGET_MIB + (log_mib if index == 1 else 0.0)
        kept = f" + the traffic log's {log_mib:.0f} MiB" if index == 1 else ""
        result.judge(
            f"{label}: host VmRSS within {TARGET_MIB:.0f} MiB{kept} of before ({grown:+.1f} MiB)",
            grown <= allowed,
            judged,
        )
    return result

"""Benchmark: a command's output that the agent resends whole on every update (issue 14).

The flood agent's `toolout N BYTES` reports a command it runs itself and resends its output, growing to
BYTES, whole in N updates; `toolout 1 BYTES` sends the final output alone. What it costs Neovim is measured
in the same Neovim, alternating the two: the Lua time of the chat's drain (`chat._drain`, which hands the
output to the chat terminal) and the CPU time of the Neovim process over the turn (everything it did: reading
the RPC messages, decoding, Lua, the terminal view's redraws). The target: the resent output costs under 2x
what the final output alone does.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from bench.flood_agent import TOOLOUT_END
from bench.harness import NS_PER_S, Neovim, Result, median, ms, wait_until

if TYPE_CHECKING:
    from bench.suite import Config

EXITED = "    └ exited with code 0"
# The virtual lines under the chat's last terminal placeholder.
SHOWN = """
local chat = require('acp_nvim.ui.chat')
local buf = chat.chats[chat.current].buf
local marks = vim.api.nvim_buf_get_extmarks(buf, vim.api.nvim_create_namespace('acp_nvim_term'), 0, -1,
  { details = true })
local out = {}
for _, line in ipairs(marks[#marks] and marks[#marks][4].virt_lines or {}) do
  out[#out + 1] = line[1][1]
end
return out
"""


# Done: the turn is over, the chat's queue is empty, and the terminal view shows the exit (it redraws 50 ms
# after the last output, on its own timer; its shown lines are reset by each new turn's first output).
DRAWN = (
    "local chat = require('acp_nvim.ui.chat')"
    " if require('acp_nvim').status().state ~= 'ready' or chat.pending(chat.current) then return false end"
    " local lines = (function() " + SHOWN + " end)()"
    " return lines[#lines] == ... and #lines > 1"
)


def _cpu_seconds(pid: int) -> float:
    """CPU time of all threads of process `pid` so far, in ns from the scheduler (/proc/PID/stat counts
    10 ms ticks: as long as the whole of what is measured here)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
            total += int(stat.read().split()[0])
    return total / NS_PER_S


def _turn(nv: Neovim, times: int, size: int) -> dict[str, Any]:
    """One turn, its end polled twice a second: the bench's own calls into Neovim (every 25 ms in
    `prompt_and_wait`) would be most of the CPU time measured over a turn of seconds."""
    _turn.count = getattr(_turn, "count", 0) + 1  # type: ignore[attr-defined]
    # A needle of its own: the previous turn ended with the same show.
    tag = f"t{_turn.count}"  # type: ignore[attr-defined]
    before = _cpu_seconds(nv.pid)
    nv.lua("acp_bench.arm(...)", f"{TOOLOUT_END}{tag} ", f"toolout {times} {size} {tag}")
    wait_until(lambda: nv.lua("return acp_bench.t_done ~= nil"), 300, "the end of the output", interval=0.5)
    # The output's ops may follow the closing message's: measured until they are drawn too.
    wait_until(lambda: nv.lua(DRAWN, EXITED), 30, "the output drawn", interval=0.1)
    record: dict[str, Any] = nv.lua("return acp_bench.record()")
    record["cpu_s"] = _cpu_seconds(nv.pid) - before
    record["shown"] = nv.lua(SHOWN)
    nv.wait_state("ready")
    return record


def tool_output(config: Config) -> Result:
    result = Result("tool_output")
    times, size = config.size(1000, 20), config.size(1_000_000, 20_000)
    resent: list[dict[str, Any]] = []
    alone: list[dict[str, Any]] = []
    nv = Neovim(config.workdir("tool_output"))
    try:
        nv.start_agent()
        _turn(nv, 10, 10_000)
        for _ in range(config.runs):
            alone.append(_turn(nv, 1, size))
            resent.append(_turn(nv, times, size))
        shown: list[str] = resent[-1]["shown"]
    finally:
        nv.close()

    def lua_s(records: list[dict[str, Any]]) -> float:
        return median([r["apply_ns"] / NS_PER_S for r in records])

    def cpu_s(records: list[dict[str, Any]]) -> float:
        return median([r["cpu_s"] for r in records])

    def took_s(records: list[dict[str, Any]]) -> float:
        return median([(r["t_done"] - r["t0"]) / NS_PER_S for r in records])

    lua_ratio = lua_s(resent) / max(lua_s(alone), 1e-9)
    cpu_ratio = cpu_s(resent) / max(cpu_s(alone), 1e-3)
    label = f"{size / 1e6:g} MB resent whole {times:,} times"
    result.figures[label] = (
        f"Neovim Lua (chat drain) {ms(lua_s(resent))}, Neovim CPU {ms(cpu_s(resent))}, "
        f"chat.apply calls {median([r['applies_at_done'] for r in resent]):.0f}, turn {ms(took_s(resent))}"
    )
    result.figures[f"{size / 1e6:g} MB sent once"] = (
        f"Neovim Lua (chat drain) {ms(lua_s(alone))}, Neovim CPU {ms(cpu_s(alone))}, "
        f"chat.apply calls {median([r['applies_at_done'] for r in alone]):.0f}, turn {ms(took_s(alone))}"
    )
    result.figures["ratio resent / once"] = f"Lua {lua_ratio:.2f}x, CPU {cpu_ratio:.2f}x"
    judged = not config.quick
    result.judge(
        f"resent output costs Neovim under 2x the final alone (Lua {lua_ratio:.2f}x)", lua_ratio < 2, judged
    )
    result.judge(f"... and in Neovim's CPU time ({cpu_ratio:.2f}x)", cpu_ratio < 2, judged)
    result.figures["shown under the command"] = " / ".join(line.strip() for line in shown[-2:])
    result.notes.append("CPU time: /proc/PID/task/*/schedstat of the Neovim process over the turn")
    return result

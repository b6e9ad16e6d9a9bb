"""Benchmark: streaming into a chat that already holds 5 MB (issue 17: highlighting at any size).

Two Neovims, each with the flood agent started and its chat shown: one chat is empty, the other is filled
first with a long day of work (messages with code blocks, each followed by a tool call with its diff, then
long answers of prose, to 5 MB), drawn through `chat.apply` as the host would draw them and highlighted to the
end (`chat_highlight.pending`). Then `mdwords N` (the flood's words with markdown in them: plain text is not
parsed at all) is streamed into each, alternately, markdown highlighting on in both: the time to the last word
shown (stamped as in `streaming`) and the Neovim process's CPU time over the turn. The target: the full chat
costs within 1.2x of the empty one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench.flood_agent import final_text
from bench.harness import NS_PER_S, Neovim, Result, median, ms, wait_until
from bench.tool_output import _cpu_seconds

if TYPE_CHECKING:
    from bench.suite import Config

# The chat has drawn everything it was sent and highlighted all of it.
IDLE = """
local chat = require('acp_nvim.ui.chat')
local current = chat.chats[chat.current]
return current ~= nil and not chat.pending(chat.current)
  and not require('acp_nvim.ui.chat_highlight').pending(current.buf)
"""
SIZE = """
local chat = require('acp_nvim.ui.chat')
local buf = chat.chats[chat.current].buf
return vim.api.nvim_buf_get_offset(buf, vim.api.nvim_buf_line_count(buf))
"""
APPLY = "local chat = require('acp_nvim.ui.chat'); chat.apply(chat.current, ...)"


def _line(text: str, group: str = "") -> dict[str, Any]:
    return {"s": [[text, group]]}


def day_of_work(tool_calls: int) -> list[dict[str, Any]]:
    """View-model ops of a long day: a message with a code block and a tool call with its diff, each step."""
    ops: list[dict[str, Any]] = []
    for n in range(tool_calls):
        text = [
            f"Step {n}: I changed **file {n}** so that `run_{n}` returns early.",
            "",
            "```lua",
            f"local step_{n} = require('steps').run({n})",
            "```",
        ]
        lines = [_line("▍ agent"), *[_line(line) for line in text]]
        ops.append({"op": "add", "item": {"id": f"day-m{n}", "kind": "agent", "lines": lines}})
        old = "\n".join(f"line {k} of file {n}" for k in range(30))
        call_lines = [
            _line(f"  ✓ Edit src/file_{n}.py", "AcpChatToolDone"),
            {"diff": {"path": f"src/file_{n}.py", "old": old, "new": old.replace("line 7 ", "line seven ")}},
        ]
        ops.append({"op": "add", "item": {"id": f"day-t{n}", "kind": "tool_call", "lines": call_lines}})
    return ops


def prose(n: int, lines: int) -> dict[str, Any]:
    text = [
        f"Line {k} of a long answer, with *emphasis* and a [link](https://x.y/{k})." for k in range(lines)
    ]
    return {"op": "add", "item": {"id": f"day-p{n}", "kind": "agent", "lines": [_line(t) for t in text]}}


def fill(nv: Neovim, tool_calls: int, size: int) -> int:
    """Draws a long day into the current chat, then prose up to `size` bytes; returns the chat's size."""
    ops = day_of_work(tool_calls)
    for start in range(0, len(ops), 500):
        nv.lua(APPLY, ops[start : start + 500])
    n = 0
    while nv.lua(SIZE) < size:
        nv.lua(APPLY, [prose(n, 500) for n in range(n, n + 8)])
        n += 8
        wait_until(
            lambda: nv.lua("local c = require('acp_nvim.ui.chat'); return not c.pending(c.current)"),
            120,
            "the chat to draw",
        )
    wait_until(lambda: nv.lua(IDLE), 600, "the chat to be highlighted")
    return int(nv.lua(SIZE))


def _turn(nv: Neovim, text: str, needle: str) -> tuple[float, float]:
    wait_until(lambda: nv.lua(IDLE), 120, "the chat to be highlighted")
    cpu = _cpu_seconds(nv.pid)
    record = nv.prompt_and_wait(text, needle)
    # The turn's highlighting too: the deferred open block, highlighted once the stream has paused.
    wait_until(lambda: nv.lua(IDLE), 120, "the streamed text to be highlighted")
    return (record["t_done"] - record["t0"]) / NS_PER_S, _cpu_seconds(nv.pid) - cpu


def big_chat(config: Config) -> Result:
    result = Result("big_chat")
    count = config.size(10_000, 200)
    size = config.size(5_000_000, 200_000)
    text, needle = f"mdwords {count}", final_text("mdwords", count)
    empty = Neovim(config.workdir("big-chat-empty"))
    full = Neovim(config.workdir("big-chat-full"))
    times: dict[str, list[float]] = {"empty": [], "full": []}
    cpus: dict[str, list[float]] = {"empty": [], "full": []}
    try:
        for nv in (empty, full):
            nv.start_agent()
            nv.prompt_and_wait("words 100", final_text("words", 100))
        filled = fill(full, config.size(2_000, 50), size)
        for _ in range(config.runs):
            # Alternated: the load of these shared machines drifts within a run.
            for name, nv in (("empty", empty), ("full", full)):
                took, cpu = _turn(nv, text, needle)
                times[name].append(took)
                cpus[name].append(cpu)
    finally:
        empty.close()
        full.close()
    t_empty, t_full = median(times["empty"]), median(times["full"])
    c_empty, c_full = median(cpus["empty"]), median(cpus["full"])
    label = f"mdwords {count:,}"
    result.figures[f"{label} into an empty chat"] = f"{ms(t_empty)}, Neovim CPU {ms(c_empty)}"
    result.figures[f"{label} into a chat of {filled / 1e6:.1f} MB"] = f"{ms(t_full)}, Neovim CPU {ms(c_full)}"
    result.figures["ratio full / empty"] = f"time {t_full / t_empty:.2f}x, CPU {c_full / c_empty:.2f}x"
    judged = not config.quick
    result.judge(
        f"{label}: a 5 MB chat within 1.2x of an empty one ({t_full / t_empty:.2f}x)",
        t_full / t_empty <= 1.2,
        judged,
    )
    result.judge(
        f"{label}: ... in Neovim's CPU time ({c_full / c_empty:.2f}x)", c_full / c_empty <= 1.2, judged
    )
    result.notes.append(
        "markdown highlighting on in both chats; CPU time: /proc/PID/task/*/schedstat of Neovim over the "
        "turn and its highlighting"
    )
    return result

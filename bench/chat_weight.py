"""Benchmarks: what a big chat costs after it is drawn (issue 31).

`insert_leave`: the probe's keys keep Neovim in Insert mode (a scratch buffer, as in `replay`) while a history
of 10,000 updates is loaded with :AcpSessions into a new chat, drawn to its end and highlighted; then `<Esc>`
is sent (`nvim_input`) and a round trip follows at once: from the send to the later of the round trip's answer
and a `vim.schedule` queued by the `ModeChanged` that leaves Insert mode (it runs after the `InsertLeave`
autocommands, where the chat's folds made while the user typed are brought up to date), and Neovim's CPU
time over it (`/proc/PID/task/*/schedstat`). The floor: the same `<Esc>` after a history of 10 updates, in a
second Neovim, alternated. Then a history of 100,000 updates, loaded with the probe running (as `replay`): the
time to the last update shown and the round trips meanwhile.

`lua_heap`: Neovim's Lua heap (`collectgarbage("count")` after `collectgarbage("collect")`, twice) before and
after a chat of 10,000 updates, streamed (`history 10000` as a prompt, in its own session) and replayed (a
`session/load` of the same history into a new chat), both drawn and highlighted to their end; the growth per
chat. The floor: a chat of 10 updates, in the same Neovim.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from bench.flood_agent import final_text
from bench.harness import NS_PER_S, Neovim, Result, median, ms, task_cpu_seconds, wait_until

if TYPE_CHECKING:
    from collections.abc import Callable

    from bench.suite import Config

LEAVE_S = 0.016
RENDER_100K_S = 2.0
HEAP_PER_CHAT_KIB = 512

IDLE = """
local chat = require('acp_nvim.ui.chat')
local current = chat.chats[...]
return current ~= nil and not chat.pending(...)
  and not require('acp_nvim.ui.chat_highlight').pending(current.buf)
"""
ARM_LEAVE = """
acp_bench.t_left = nil
vim.api.nvim_create_autocmd('ModeChanged', { pattern = 'i:*', once = true, callback = function()
  vim.schedule(function() acp_bench.t_left = vim.uv.hrtime() end)
end })
return vim.api.nvim_get_mode().mode
"""
CURRENT_SESSION = "return require('acp_nvim').status().session_id"
LAST_LINE = """
local current = require('acp_nvim.ui.chat').chats[...]
return current and vim.api.nvim_buf_get_lines(current.buf, -2, -1, false)[1] or ''
"""
HEAP = """
collectgarbage('collect')
collectgarbage('collect')
return collectgarbage('count')
"""


def _history_env(workdir: Any, count: int, stored: int) -> dict[str, str]:
    return {
        "ACP_FLOOD_REPORT": str(workdir / "report.jsonl"),
        "ACP_FLOOD_HISTORY": str(count),
        "ACP_FLOOD_STORED": str(stored),
    }


def _leave(nv: Neovim) -> tuple[float, float]:
    """`<Esc>` from Insert mode: its time as Neovim spends it, and Neovim's CPU time over it (seconds)."""
    mode = nv.lua(ARM_LEAVE)
    if mode != "i":
        raise RuntimeError(f"not in Insert mode before <Esc> (mode {mode!r})")
    cpu = task_cpu_seconds(nv.pid)
    sent = time.monotonic_ns()
    nv.api.input("<Esc>")
    nv.api.eval("1")
    answered = time.monotonic_ns()
    left = wait_until(lambda: nv.lua("return acp_bench.t_left"), 10, "Insert mode to end")
    cpu = task_cpu_seconds(nv.pid) - cpu
    return (max(answered, int(left)) - sent) / NS_PER_S, cpu


def _load_in_insert(nv: Neovim, session_id: str, needle: str) -> None:
    from bench.suite import _load_and_wait

    nv.lua("acp_bench.typing_target()")
    _load_and_wait(nv, session_id, needle)
    wait_until(lambda: nv.lua(IDLE, session_id), 120, "the loaded chat drawn and highlighted")


def insert_leave(config: Config) -> Result:
    result = Result("insert_leave")
    count, small = config.size(10_000, 100), 10
    workdir = config.workdir("insert_leave")
    # The agent replays one length: a Neovim and an agent for each.
    big = Neovim(workdir / "big", agent_env=_history_env(workdir / "big", count, config.runs))
    floor = Neovim(workdir / "small", agent_env=_history_env(workdir / "small", small, config.runs))
    leaves: list[tuple[float, float]] = []
    floors: list[tuple[float, float]] = []
    try:
        for nv in (big, floor):
            nv.start_agent()
            nv.prompt_and_wait("words 100", final_text("words", 100))
        for run in range(1, config.runs + 1):
            _load_in_insert(big, f"stored-{run}", final_text("history", count))
            leaves.append(_leave(big))
            _load_in_insert(floor, f"stored-{run}", final_text("history", small))
            floors.append(_leave(floor))
    finally:
        big.close()
        floor.close()
    took, cpu = median([t for t, _ in leaves]), median([c for _, c in leaves])
    floor_took, floor_cpu = median([t for t, _ in floors]), median([c for _, c in floors])
    result.figures[f"<Esc> after a {count:,}-update replay"] = (
        f"{ms(took)} (Neovim CPU {ms(cpu)}); floor, after {small} updates: {ms(floor_took)} "
        f"(CPU {ms(floor_cpu)})"
    )
    result.judge(f"leaving Insert mode at most 16 ms ({ms(took)})", took <= LEAVE_S, not config.quick)

    huge = config.size(100_000, 200)
    from bench.suite import ui_cases

    for ui in ui_cases(config):
        _huge_replay(config, result, huge, ui)
    result.notes.append(
        "<Esc>: nvim_input then nvim_eval('1') at once, to the later of its answer and a vim.schedule queued "
        "by the ModeChanged out of Insert mode (after the InsertLeave autocommands); the chat was drawn "
        "while the probe's keys kept Insert mode on"
    )
    return result


def _huge_replay(config: Config, result: Result, huge: int, ui: bool) -> None:
    """Loads of a history of `huge` updates with the probe running, in a Neovim of their own (headless, or
    with a UI attached: the chat redrawn as a user sees it); headless, `<Esc>` after such a load drawn in
    Insert mode too."""
    from bench.suite import _latency_figures, _load_and_wait, _probed_flood, _ui_label, attached_ui

    workdir = config.workdir("replay_100k")
    # Each load another stored session (a loaded one would only be shown again).
    nv = Neovim(workdir, agent_env=_history_env(workdir, huge, 2 * config.runs))
    records = []
    huge_leaves = []
    try:
        with attached_ui(nv, ui):
            nv.start_agent()
            nv.prompt_and_wait("words 100", final_text("words", 100))

            def load(run: int) -> Callable[[], dict[str, Any]]:
                def measured() -> dict[str, Any]:
                    return _load_and_wait(nv, f"stored-{run}", final_text("history", huge), 300)

                return measured

            for run in range(1, config.runs + 1):
                records.append(_probed_flood(nv, workdir, load(2 * run - 1)))
                if not ui:
                    _load_in_insert(nv, f"stored-{2 * run}", final_text("history", huge))
                    huge_leaves.append(_leave(nv))
    finally:
        nv.close()
    label = _ui_label(f"session/load {huge:,}", ui)
    rendered = median([(r["t_done"] - r["t0"]) / NS_PER_S for r in records])
    result.figures[label] = f"fully rendered after {ms(rendered)}"
    if huge_leaves:
        result.figures[f"<Esc> after a {huge:,}-update replay"] = (
            f"{ms(median([t for t, _ in huge_leaves]))} "
            f"(Neovim CPU {ms(median([c for _, c in huge_leaves]))})"
        )
    result.judge(f"{label}: rendered within 2 s ({ms(rendered)})", rendered < RENDER_100K_S, not config.quick)
    _latency_figures(result, label, records, not config.quick)


def _wait_idle(nv: Neovim, session_id: str) -> None:
    wait_until(lambda: nv.lua(IDLE, session_id), 120, "the chat drawn and highlighted")


def _new_session(nv: Neovim) -> str:
    """:AcpNew, then its session current and ready; returns its id. The state alone does not tell: a running
    agent stays `ready` while the host opens another session, so a prompt sent on that alone went to the old
    one (whose chat then showed the text awaited) and the new chat, never drawn, was waited for forever."""
    before = nv.lua(CURRENT_SESSION)
    nv.api.command("AcpNew")

    def opened() -> str | None:
        now = nv.lua(CURRENT_SESSION)
        return None if now in (None, before) else str(now)

    session: str = wait_until(opened, 30, "the new session to be the current one")
    nv.wait_state("ready", 30)
    return session


def _prompt_in(nv: Neovim, session: str, text: str, needle: str) -> None:
    """`text` as a prompt, to its end in the chat of `session` (the bench's done check looks at any chat)."""
    nv.prompt_and_wait(text, needle)
    last = nv.lua(LAST_LINE, session)
    if not str(last).endswith(needle):
        raise RuntimeError(f"{text!r} did not end in the chat of {session} (its last line: {last!r})")


def _heap_kib(nv: Neovim) -> float:
    return float(nv.lua(HEAP))


def lua_heap(config: Config) -> Result:
    result = Result("lua_heap")
    count, small = config.size(10_000, 100), 10
    workdir = config.workdir("lua_heap")
    nv = Neovim(workdir, agent_env=_history_env(workdir, count, 2 * config.runs))
    streamed: list[float] = []
    replayed: list[float] = []
    floors: list[float] = []
    try:
        nv.start_agent()
        nv.prompt_and_wait("words 100", final_text("words", 100))
        from bench.suite import _load_and_wait

        for run in range(1, config.runs + 1):
            session = _new_session(nv)
            before = _heap_kib(nv)
            _prompt_in(nv, session, f"history {small}", final_text("history", small))
            _wait_idle(nv, session)
            floors.append(_heap_kib(nv) - before)

            session = _new_session(nv)
            before = _heap_kib(nv)
            _prompt_in(nv, session, f"history {count}", final_text("history", count))
            _wait_idle(nv, session)
            streamed.append(_heap_kib(nv) - before)

            before = _heap_kib(nv)
            _load_and_wait(nv, f"stored-{run}", final_text("history", count))
            _wait_idle(nv, f"stored-{run}")
            replayed.append(_heap_kib(nv) - before)
    finally:
        nv.close()
    s, r, f = median(streamed), median(replayed), median(floors)
    result.figures[f"Lua heap per {count:,}-update chat"] = (
        f"streamed +{s / 1024:.2f} MiB, replayed +{r / 1024:.2f} MiB; floor, a {small}-update chat: "
        f"+{f / 1024:.3f} MiB"
    )
    for what, grown in (("streamed", s), ("replayed", r)):
        result.judge(
            f"{what}: the Lua heap grows at most 0.5 MiB per {count:,} updates ({grown / 1024:.2f} MiB)",
            grown <= HEAP_PER_CHAT_KIB,
            not config.quick,
        )
    result.notes.append(
        "collectgarbage('count') after two full collections, before and after each chat (drawn and "
        "highlighted to its end); each chat in a session of its own (:AcpNew, or a session/load into a "
        "new chat)"
    )
    return result

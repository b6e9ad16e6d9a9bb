"""Where a stream's CPU time goes, layer by layer (issue 31): `python -m bench.layers [--runs N] [--ui]`.

A real headless Neovim with the plugin, the host and the flood agent (as in `bench/streaming.py`), one stream
at a time (`words 100000`, `mdwords 10000`), the processes settled before and after each (so that the
highlighting after the last word counts too). Each process's CPU time over the stream is its threads'
`/proc/PID/task/*/schedstat`; within it:

- the host (`bench/layers_site/sitecustomize.py`, loaded by the host's interpreter): the thread CPU clock
  around each layer's entry points, less the layers called inside them: the agent's pipe read (`os.read`),
  splitting lines, the traffic log, the JSON decode (`route_leading` and the per-line path), dispatch (the
  dispatcher and the application's routing), the reducer (`SessionState`), the view model (`ChatRenderer`,
  `ops_for`), the ops' JSON (`encode_ops`), the hand-off to pynvim's thread, and on that thread pynvim's
  msgpack encode and write of each call to Neovim (`Bridge._exec_batch`); the rest of each thread (the event
  loops, anyio, the checkpoints between slices, the collector outside those calls) is "other";
- Neovim (`bench/layers.lua`): `getrusage` around `chat.apply_json` (the Lua call the host makes),
  `chat._drain` (drawing the ops), the highlighting (`chat_highlight.refresh` and its parse steps), and the
  redraw (a decoration provider's on_start to on_end); the rest ("other") is msgpack decode of the host's
  calls, the event loop, tree-sitter's asynchronous parse slices, the collector outside those calls, and
  writing the screen to a UI (`--ui`: `bench/ui_client.py` attached).

`--profile` instead profiles the host's Python path in process (`bench/profile_host.py`, cProfile) and prints
the top functions of each layer (their own time; a builtin's time charged to its caller's layer).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import signal
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio

from bench.flood_agent import final_text
from bench.harness import BENCH, NS_PER_S, Neovim, UiClient, commit, settle, task_cpu_seconds, wait_until

# `words 10`: what a turn costs whatever its length (the prompt, its request and answer, the status, the
# checkpoint's part in the host), the bulk of the larger streams' "other".
STREAMS = [("words", 100_000), ("mdwords", 10_000), ("words", 10)]
SITE = BENCH / "layers_site"
LAYERS_LUA = BENCH / "layers.lua"


def thread_cpu_ns(pid: int) -> dict[int, int]:
    """Each thread's CPU time so far (ns), by its native id."""
    found = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as stat:
                found[int(task)] = int(stat.read().split()[0])
        except OSError:
            continue
    return found


def host_layers(pid: int, path: Path) -> dict[str, Any]:
    """The host's layer totals so far (it writes them on SIGUSR1)."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    os.kill(pid, signal.SIGUSR1)
    wait_until(lambda: path.exists() and path.stat().st_mtime_ns != before, 10, "the host's layer clocks")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class Sample:
    def __init__(self, nv: Neovim, host: int | None, path: Path) -> None:
        self.threads = thread_cpu_ns(host) if host else {}
        self.host = host_layers(host, path) if host else {}
        self.nvim_ns = int(task_cpu_seconds(nv.pid) * NS_PER_S)
        self.lua: dict[str, Any] = nv.lua("return acp_layers.snapshot()")

    @classmethod
    def nvim_only(cls, nv: Neovim) -> Sample:
        return cls(nv, None, Path())


def account(before: Sample, after: Sample, shown: Sample) -> dict[str, Any]:
    """The stream's CPU per layer (ms), per process and thread, with what is left as "other"."""
    threads = {tid: ns - before.threads.get(tid, 0) for tid, ns in after.threads.items()}
    layers: dict[str, float] = {}
    by_thread: dict[int, float] = defaultdict(float)
    for layer, entry in after.host.items():
        spent = entry["ns"] - before.host.get(layer, {"ns": 0})["ns"]
        layers[layer] = spent / 1e6
        for tid in entry["threads"][:1]:
            by_thread[tid] += spent / 1e6
    host: dict[str, Any] = {"total": sum(threads.values()) / 1e6, "layers": layers, "threads": {}}
    for tid, ns in sorted(threads.items(), key=lambda item: -item[1]):
        if ns > 1e6:
            host["threads"][tid] = {"cpu": ns / 1e6, "layers": by_thread.get(tid, 0.0)}
    lua = {
        layer: (after.lua["cpu"][layer] - before.lua["cpu"].get(layer, 0)) / 1e3 for layer in after.lua["cpu"]
    }
    # After the turn, what is not in a wrapped layer is tree-sitter's asynchronous parse of the deferred block
    # (its slices run from Neovim's loop, outside the chat's calls), the idle loop a little.
    tail_wrapped = sum(after.lua["cpu"][layer] - shown.lua["cpu"].get(layer, 0) for layer in after.lua["cpu"])
    tail = (after.nvim_ns - shown.nvim_ns) / 1e6
    lua["after the turn: tree-sitter's parse slices"] = tail - tail_wrapped / 1e3
    nvim: dict[str, Any] = {"total": (after.nvim_ns - before.nvim_ns) / 1e6, "layers": lua}
    # What no layer accounts for, per run (the medians of the layers need not add up to the median total).
    for process in (host, nvim):
        process["other"] = process["total"] - sum(process["layers"].values())
    return {"host": host, "nvim": nvim}


def measure(runs: int, ui: bool, streams: list[tuple[str, int]]) -> dict[str, list[dict[str, Any]]]:
    results: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="acp-layers-") as scratch:
        workdir = Path(scratch)
        path = workdir / "host-layers.json"
        os.environ["ACP_BENCH_LAYERS"] = str(path)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE), os.environ.get("PYTHONPATH")]))
        nv = Neovim(workdir)
        uis: list[UiClient] = []
        try:
            if ui:
                uis.append(UiClient(nv.socket))
            nv.lua(LAYERS_LUA.read_text(encoding="utf-8"))
            nv.start_agent()
            host = nv.host_pid()
            assert host is not None
            everyone = [nv.pid, host, *(each.pid for each in uis)]
            for show, _count in streams:
                nv.prompt_and_wait(f"{show} 100", final_text(show, 100))
            for _ in range(runs):
                for show, count in streams:
                    settle(everyone)
                    before = Sample(nv, host, path)
                    record = nv.prompt_and_wait(f"{show} {count}", final_text(show, count))
                    # The last word shown and the turn ended: what Neovim does from here is the highlighting
                    # deferred to the chat's pause (a block too large to parse while it grows).
                    shown = Sample.nvim_only(nv)
                    # Longer than the chat's pause (300 ms) after which a large open block is highlighted.
                    settle(everyone, quiet=0.5)
                    after = Sample(nv, host, path)
                    entry = account(before, after, shown)
                    entry["shown_ms"] = (record["t_done"] - record["t0"]) / 1e6
                    results.setdefault(f"{show} {count}", []).append(entry)
        finally:
            for each in uis:
                each.close()
            nv.close()
    return results


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def report(results: dict[str, list[dict[str, Any]]], ui: bool) -> None:
    """Per stream and process, the run whose CPU is the median one, layer by layer: its rows add up to its
    measured CPU exactly ("other" is its remainder), where medians taken layer by layer would not (the runs
    vary, Neovim's most); the range of the totals over the runs beside it."""
    print(f"commit {commit()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {os.getloadavg()}")
    for name, entries in results.items():
        count = int(name.split()[1])
        print(f"\n== {name}{', a UI attached' if ui else ', headless'}: {len(entries)} runs, the median run")
        print(f"shown in {_median([e['shown_ms'] for e in entries]):.0f} ms (median)")
        for process in ("host", "nvim"):
            ordered = sorted(entries, key=lambda e: e[process]["total"])
            run = ordered[(len(ordered) - 1) // 2][process]
            total, low, high = run["total"], ordered[0][process]["total"], ordered[-1][process]["total"]
            print(
                f"{process}: {total:.1f} ms CPU ({total * 1e3 / count:.2f} us per update; "
                f"the runs {low:.1f}-{high:.1f} ms)"
            )
            rows = sorted(run["layers"].items(), key=lambda row: -row[1])
            for layer, value in [*rows, ("other", run["other"])]:
                share, per_update = value / total, value * 1e3 / count
                print(f"  {layer:<44} {value:8.1f} ms  {share:6.1%}  {per_update:6.2f} us/update")
            if process == "host":
                for tid, thread in run["threads"].items():
                    cpu, layered = thread["cpu"], thread["layers"]
                    print(f"  thread {tid}: {cpu:.1f} ms CPU, of which {layered:.1f} ms in layers")


# ---- the in-process profile -------------------------------------------------------------------------------

# Where a function's own time goes, by its file (the first that matches); builtins go to their caller's.
LAYER_OF_PATH = [
    ("acp_nvim/client/agent/pipe.py", "pipe read"),
    ("acp_nvim/jsonrpc/framing.py", "split lines"),
    ("acp_nvim/client/agent/traffic.py", "traffic log"),
    ("acp_nvim/jsonrpc/", "decode"),
    ("acp_nvim/protocol/", "decode"),
    ("acp_nvim/client/session/text_run.py", "decode"),
    ("acp_nvim/client/session/", "reducer"),
    ("acp_nvim/client/", "dispatch"),
    ("acp_nvim/app/sessions/", "dispatch"),
    ("acp_nvim/app/chat/", "view model"),
    ("acp_nvim/nvim/render.py", "view model"),
    ("/anyio/", "event loop"),
    ("/asyncio/", "event loop"),
    ("selectors.py", "event loop"),
]


WAITING = "waiting (the loop's epoll: not CPU, left out)"


def _layer(func: tuple[str, int, str], callers: dict[Any, Any]) -> str:
    path, _, name = func
    if path.endswith("profile_host.py"):
        # The bench's stand-ins: its Bridge pays pynvim's msgpack encode; its editor is the application's
        # routing (`Incoming.on_session_updates`).
        return "msgpack encode (pynvim's, in the host)" if name in ("lua", "lua_result") else "dispatch"
    if path == "~":
        if "epoll" in name:
            return WAITING
        if "msgpack" in name or "packb" in name:
            return "msgpack encode (pynvim's, in the host)"
        if callers:
            caller: tuple[str, int, str] = max(callers, key=lambda c: callers[c][2])
            return f"builtin:{caller[0]}:{caller[2]}"
        return "other"
    for part, layer in LAYER_OF_PATH:
        if part in path:
            return layer
    return "other"


def profile(show: str, count: int, top: int) -> None:
    from bench import profile_host

    # The default clock (perf_counter): with the process's CPU clock each call's two clock reads are system
    # calls that multiply the cost of the many small calls (170,000 `list.append` read 123 ms). The loop's
    # waits (epoll's `poll`) are then told apart: they are not the host's work.
    prof = cProfile.Profile()
    prof.enable()
    elapsed, _bridge = anyio.run(profile_host.run, show, count)
    prof.disable()
    stats: dict[Any, Any] = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    by_layer: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for func, (_cc, calls, own, _cum, callers) in stats.items():
        layer = _layer(func, callers)
        if layer.startswith("builtin:"):
            path, _, name = layer.removeprefix("builtin:").rpartition(":")
            layer = _layer((path, 0, name), {})
        label = f"{Path(func[0]).name}:{func[1]}({func[2]})" if func[0] != "~" else func[2]
        by_layer[layer].append((own, f"{label} x{calls}"))
    waiting = sum(own for own, _ in by_layer.pop(WAITING, []))
    total = sum(own for entries in by_layer.values() for own, _ in entries)
    print(
        f"{show} {count}: shown in {elapsed * 1e3:.0f} ms; the functions' own time {total * 1e3:.0f} ms "
        f"(and {waiting * 1e3:.0f} ms waiting in epoll)"
    )
    for layer, entries in sorted(by_layer.items(), key=lambda item: -sum(own for own, _ in item[1])):
        spent = sum(own for own, _ in entries)
        print(f"{layer}: {spent * 1e3:.0f} ms ({spent / total:.1%})")
        for own, label in sorted(entries, reverse=True)[:top]:
            print(f"    {own * 1e3:7.1f} ms  {label}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ui", action="store_true", help="a UI attached (bench/ui_client.py)")
    parser.add_argument("--only", choices=[show for show, _ in STREAMS], help="one stream only")
    parser.add_argument("--profile", action="store_true", help="cProfile of the host's path, in process")
    parser.add_argument("--top", type=int, default=4, help="--profile: functions shown per layer")
    args = parser.parse_args(argv)
    streams = [stream for stream in STREAMS if args.only in (None, stream[0])]
    if args.profile:
        for show, count in streams:
            profile(show, count, args.top)
        return
    report(measure(args.runs, args.ui, streams), args.ui)


if __name__ == "__main__":
    main()

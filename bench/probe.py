"""The responsiveness probe: a second Neovim client that measures the main loop's latency.

Run as `python -m bench.probe SOCKET OUT.json` while the benchmark drives Neovim. Every 10 ms it types one key
(`nvim_input`; Neovim stamps its InsertCharPre with vim.uv.hrtime, the same clock as time.monotonic_ns) and
makes one round trip (`nvim_eval("1")`). It stops when its stdin closes and writes the send times and round
trips as JSON: the benchmark splits them into idle / during / after by its own timestamps.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import pynvim

PERIOD_NS = 10_000_000


def main(argv: list[str]) -> int:
    socket, out = argv[0], argv[1]
    nvim = pynvim.attach("socket", path=socket)
    stop = threading.Event()

    def wait_for_eof() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=wait_for_eof, daemon=True).start()
    evals: list[tuple[int, int]] = []
    keys: list[int] = []
    # Ready: the benchmark waits for this line before it starts its idle window.
    print("ready", flush=True)
    tick = time.monotonic_ns()
    while not stop.is_set():
        keys.append(time.monotonic_ns())
        nvim.input("x")
        sent = time.monotonic_ns()
        nvim.eval("1")
        evals.append((sent, time.monotonic_ns() - sent))
        tick += PERIOD_NS
        pause = tick - time.monotonic_ns()
        if pause > 0:
            time.sleep(pause / 1e9)
        else:
            # Late (Neovim was slow): the next probe goes at once, and the schedule restarts from now.
            tick = time.monotonic_ns()
    with open(out, "w", encoding="utf-8") as target:
        json.dump({"evals": evals, "keys": keys}, target)
    nvim.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A UI for the benchmarks: attaches to a Neovim over its `--listen` socket and reads every redraw event.

Run as `python -m bench.ui_client SOCKET [WIDTH HEIGHT]`. It attaches with `nvim_ui_attach` (the line grid, as
the TUI and the GUIs attach), prints `ready` once Neovim has answered, then decodes (msgpack, in C) and
discards whatever Neovim sends until the socket closes or its stdin does; then prints `read N` (the bytes of
redraw events it read, to show that Neovim did redraw for it). In a process of its own, as a real
UI is: Neovim redraws for it and writes the events out, and nothing waits on the benchmark's own client
reading them.
"""

from __future__ import annotations

import socket as sockets
import sys
import threading

import msgpack  # type: ignore[import-untyped]

ATTACH_ID = 1


def main(argv: list[str]) -> int:
    path = argv[0]
    width, height = (int(argv[1]), int(argv[2])) if len(argv) >= 3 else (80, 24)
    conn = sockets.socket(sockets.AF_UNIX, sockets.SOCK_STREAM)
    conn.connect(path)
    options = {"rgb": True, "ext_linegrid": True}
    conn.sendall(msgpack.packb([0, ATTACH_ID, "nvim_ui_attach", [width, height, options]]))

    def stop_on_eof() -> None:
        sys.stdin.read()
        conn.shutdown(sockets.SHUT_RDWR)

    threading.Thread(target=stop_on_eof, daemon=True).start()
    unpacker = msgpack.Unpacker(raw=True)
    announced = False
    total = 0
    while True:
        try:
            data = conn.recv(1 << 16)
        except OSError:
            break
        if not data:
            break
        total += len(data)
        unpacker.feed(data)
        for message in unpacker:
            if not announced and message[0] == 1 and message[1] == ATTACH_ID:
                if message[2] is not None:
                    print(f"error {message[2]!r}", flush=True)
                    return 1
                announced = True
                print("ready", flush=True)
    conn.close()
    print(f"read {total}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

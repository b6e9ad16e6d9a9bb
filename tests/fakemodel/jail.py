"""Runs a real agent with no way off this machine: in a network namespace of its own (only loopback, up),
beside the fake model server (`server.py`) that serves it there.

Used as the agent's command in the tests (`python jail.py CONFIG`): Neovim starts this, this starts the agent
with the same stdin/stdout (the ACP stream passes straight through), and both are one process group, the one
the plugin stops. CONFIG (JSON) gives the agent's `argv`, `env` and `files` to write first (config files in
its temporary HOME); `{port}` in any of them is the server's port, chosen once it listens. `script` and `log`
are the server's (see server.py). Every HTTP(S) proxy variable points at the server, which refuses and logs
what an agent tries to reach elsewhere; in the namespace a direct connection elsewhere fails anyway.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import socket
import struct
import subprocess
import sys
import threading
from pathlib import Path

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1


def isolate() -> None:
    """This process in a new network namespace with its loopback up; exits with a message if it cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        sys.stderr.write(f"jail: cannot make a network namespace: {os.strerror(err)} (needs root)\n")
        sys.exit(3)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))


def main() -> int:
    config = json.loads(Path(sys.argv[1]).read_text())
    isolate()
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from tests.fakemodel.server import FakeModelServer

    server = FakeModelServer(Path(config["script"]), Path(config["log"]))
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def fill(text: str) -> str:
        return text.replace("{port}", str(server.port))

    for path, content in config.get("files", {}).items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(fill(content))
    proxy = f"http://127.0.0.1:{server.port}"
    env = {**os.environ, **{k: fill(v) for k, v in config.get("env", {}).items()}}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env[name] = proxy
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    agent = subprocess.Popen([fill(a) for a in config["argv"]], env=env)
    try:
        return agent.wait()
    except KeyboardInterrupt:
        agent.terminate()
        return agent.wait()


if __name__ == "__main__":
    sys.exit(main())

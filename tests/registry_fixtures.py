"""A test ACP Registry, offline: its JSON, agent archives (good and malicious) and a stdlib HTTP server on
127.0.0.1 that serves them (one route may be cut short, to play a truncated download)."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import sys
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from acp_nvim.app.registry.entries import this_platform

# The binary agent: the plugin's demo agent behind a launcher, as a vendor's archive would hold it.
LAUNCHER = f"""#!/bin/sh
exec "{sys.executable}" -m acp_nvim.agents.demo "$@"
"""


@dataclass
class Member:
    name: str
    data: bytes = b""
    mode: int = 0o644
    # "file", "dir", "symlink" or "hardlink"; `link` is the target of the last two.
    kind: str = "file"
    link: str = ""


def launcher_members(script: str = LAUNCHER) -> list[Member]:
    return [
        Member("bin/", kind="dir", mode=0o755),
        Member("bin/demo-agent", script.encode(), mode=0o755),
        Member("README.txt", b"the demo agent, packed for the tests\n"),
    ]


def tar_gz(members: list[Member]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for member in members:
            info = tarfile.TarInfo(member.name.rstrip("/") if member.kind == "dir" else member.name)
            info.mode = member.mode
            if member.kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif member.kind == "symlink":
                info.type, info.linkname = tarfile.SYMTYPE, member.link
                tar.addfile(info)
            elif member.kind == "hardlink":
                info.type, info.linkname = tarfile.LNKTYPE, member.link
                tar.addfile(info)
            else:
                info.size = len(member.data)
                tar.addfile(info, io.BytesIO(member.data))
    return out.getvalue()


def zip_bytes(members: list[Member]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zipped:
        for member in members:
            info = zipfile.ZipInfo(member.name)
            if member.kind == "symlink":
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
                zipped.writestr(info, member.link)
            elif member.kind == "dir":
                info.external_attr = (stat.S_IFDIR | member.mode) << 16
                zipped.writestr(info, b"")
            else:
                info.external_attr = (stat.S_IFREG | member.mode) << 16
                zipped.writestr(info, member.data)
    return out.getvalue()


# The npx agent: a local npm package whose bin runs the demo agent (npx runs a folder offline).
NPX_BIN = f"""#!/usr/bin/env node
const {{ spawnSync }} = require("child_process");
const python = {json.dumps(sys.executable)};
const result = spawnSync(python, ["-m", "acp_nvim.agents.demo"], {{ stdio: "inherit" }});
process.exit(result.status === null ? 1 : result.status);
"""


def npx_package(folder: Path, name: str = "acp-test-npx-agent") -> Path:
    folder.mkdir(parents=True)
    (folder / "package.json").write_text(
        json.dumps({"name": name, "version": "3.0.0", "bin": {name: "index.js"}})
    )
    (folder / "index.js").write_text(NPX_BIN)
    (folder / "index.js").chmod(0o755)
    return folder


def package_agent(agent_id: str, runner: str, package: str, env: dict[str, str]) -> dict[str, Any]:
    return {
        "id": agent_id,
        "name": f"Test {agent_id}",
        "version": "3.0.0",
        "description": f"the demo agent through {runner}",
        "distribution": {runner: {"package": package, "env": env}},
    }


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def binary_agent(
    agent_id: str, version: str, archive_url: str, *, digest: str | None = None, platform: str | None = None
) -> dict[str, Any]:
    target: dict[str, Any] = {
        "archive": archive_url,
        "cmd": "./bin/demo-agent",
        "env": {"ACP_TEST_FROM": "registry"},
    }
    if digest is not None:
        target["sha256"] = digest
    return {
        "id": agent_id,
        "name": f"Test {agent_id}",
        "version": version,
        "description": f"the demo agent as {agent_id}",
        "authors": ["acp.nvim tests"],
        "license": "MIT",
        "distribution": {"binary": {platform or this_platform(): target}},
    }


def elsewhere() -> str:
    """A platform this machine is not."""
    return "windows-aarch64" if this_platform() != "windows-aarch64" else "linux-x86_64"


def registry(*agents: dict[str, Any]) -> bytes:
    return json.dumps({"version": "1.0.0", "agents": list(agents), "extensions": []}).encode()


@dataclass
class Routes:
    files: dict[str, bytes] = field(default_factory=dict)
    # Paths answered with their full Content-Length but only half their body.
    truncated: set[str] = field(default_factory=set)
    # Paths answered only once their event is set (a slow network).
    held: dict[str, threading.Event] = field(default_factory=dict)
    hits: list[str] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    routes: Routes

    def do_GET(self) -> None:
        self.routes.hits.append(self.path)
        held = self.routes.held.get(self.path)
        if held is not None:
            held.wait(60)
        body = self.routes.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in self.routes.truncated:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class Served:
    base: str
    routes: Routes

    def url(self, path: str) -> str:
        return self.base + path


@contextmanager
def serve(routes: Routes) -> Iterator[Served]:
    handler = type("Handler", (_Handler,), {"routes": routes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Served(f"http://127.0.0.1:{server.server_address[1]}", routes)
    finally:
        server.shutdown()
        server.server_close()


# A package of two executables: its default one (named as the package) and `preview-agent`; each appends its
# channel to the file $ACP_TEST_MARK before it runs the demo agent (which one a start ran, for the tests).
MARKING_BIN = f"""#!/usr/bin/env node
const {{ spawnSync }} = require("child_process");
require("fs").appendFileSync(process.env.ACP_TEST_MARK, "%s\\n");
const python = {json.dumps(sys.executable)};
const result = spawnSync(python, ["-m", "acp_nvim.agents.demo"], {{ stdio: "inherit" }});
process.exit(result.status === null ? 1 : result.status);
"""


def marking_npx_package(folder: Path, name: str = "acp-test-channels") -> Path:
    folder.mkdir(parents=True)
    bins = {name: "stable.js", "preview-agent": "preview.js"}
    (folder / "package.json").write_text(json.dumps({"name": name, "version": "3.1.0", "bin": bins}))
    for channel in ("stable", "preview"):
        script = folder / f"{channel}.js"
        script.write_text(MARKING_BIN % channel)
        script.chmod(0o755)
    return folder

"""Fixtures shared by every test layer: paths, the official schema, a real headless Neovim."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "tests" / "peers" / "node_modules"
SCHEMA_PATH = PEERS / "acp-sdk-schema" / "schema" / "v1" / "schema.json"
TS_EXAMPLE_AGENT = PEERS / "acp-sdk-example" / "dist" / "examples" / "agent.js"
# Re-recorded by tools/record_transcripts.py from the pinned peer agents (CONTRIBUTING.md).
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"
VENV_BIN = Path(sys.executable).parent
NVIM = str(VENV_BIN / "nvim") if (VENV_BIN / "nvim").exists() else shutil.which("nvim") or "nvim"
NODE = shutil.which("node") or "node"


def process_alive(pid: int) -> bool:
    """A live process, not a zombie (from /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="session")
def schema() -> dict[str, Any]:
    """The official ACP v1 JSON Schema from npm @agentclientprotocol/sdk@2.4.0."""
    return json.loads(SCHEMA_PATH.read_text())


@pytest.fixture
def nvim_clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A bare headless Neovim 0.11 (from PyPI) with this repository on 'runtimepath', no user config."""
    import pynvim

    # The child inherits our environment: keep its state and data out of the user's home.
    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    argv = [NVIM, "--embed", "--headless", "--clean", "-n", "--cmd", f"set rtp^={ROOT}"]
    nvim = pynvim.attach("child", argv=argv)
    try:
        yield nvim
    finally:
        with contextlib.suppress(Exception):
            nvim.command("qa!")
        nvim.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

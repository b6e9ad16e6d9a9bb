"""`:help acp_nvim` for every way of installing: the tags file is committed (doc/tags), and kept current."""

from __future__ import annotations

import shutil
from pathlib import Path

import pynvim

from tests.conftest import NVIM, ROOT


def test_committed_help_tags_are_current(tmp_path: Path) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    shutil.copy(ROOT / "doc" / "acp_nvim.txt", doc / "acp_nvim.txt")
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    try:
        nvim.command(f"helptags {doc}")
    finally:
        nvim.close()
    assert (ROOT / "doc" / "tags").read_text() == (doc / "tags").read_text(), (
        "doc/tags is out of date: run `.venv/bin/nvim --clean --headless -c 'helptags doc' -c q`"
    )


def test_help_works_from_a_native_package(tmp_path: Path) -> None:
    """A clone under pack/*/start, no plugin manager, no build step: `:help acp_nvim` opens the help."""
    start = tmp_path / "site" / "pack" / "plugins" / "start"
    start.mkdir(parents=True)
    (start / "acp.nvim").symlink_to(ROOT, target_is_directory=True)
    argv = [NVIM, "--embed", "--headless", "--clean", "-n", "--cmd", f"set packpath^={tmp_path / 'site'}"]
    nvim = pynvim.attach("child", argv=argv)
    try:
        nvim.command("help acp_nvim")
        assert nvim.current.buffer.name.endswith("doc/acp_nvim.txt")
        assert "*acp_nvim*" in nvim.current.line
        nvim.command("help :AcpStart")
        assert "*:AcpStart*" in nvim.current.line
    finally:
        nvim.close()

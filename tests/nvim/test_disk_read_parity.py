"""The host answers reads of files no buffer holds (`client/files/disk.py`), Lua those of files a buffer holds
(`fs/read.lua`): an agent must get the same text and slices either way, and the host's errors for what it
refuses (the one reader of the disk: Lua's own disk reader is gone)."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.client.files.disk import ReadRefused, read_text, slice_lines
from tests.nvim.fs_calls import read

TEXTS = [
    "",
    "\n",
    "\n\n",
    "one",
    "one\n",
    "one\ntwo",
    "one\ntwo\n",
    "one\n\nthree\n\n",
    "crlf\r\nline\r\n",
    "lone\rcr\n",
    "ünï\ncødé ✓\n",
]
LINES = [None, 1, 2, 3, 5]
# What each refusal of the host is for the agent (the codes Lua's disk reader gave too, when it had one).
CODES = {"missing": -32002, **dict.fromkeys(["directory", "fifo", "binary", "latin1", "overlong"], -32602)}
CODES.update(surrogate=-32602, too_large=-32602)
LIMITS = [None, 0, 1, 2, 10]


def host_read(path: Path, line: int | None, limit: int | None, max_bytes: int) -> dict[str, Any]:
    try:
        return {"content": slice_lines(read_text(str(path), max_bytes), line, limit)}
    except ReadRefused as err:
        return {"code": err.code, "message": err.message}


def buffer_read(nvim: Any, path: Path, line: int | None, limit: int | None, max_bytes: int) -> dict[str, Any]:
    got = read(nvim, path, line, limit, max_bytes=max_bytes)
    assert got["ok"] is False or got["from_buffer"] is True, got
    if got["ok"]:
        return {"content": got["content"]}
    return {"code": got["code"], "message": got["message"]}


def direct_read(nvim: Any, path: Path, max_bytes: int) -> dict[str, Any]:
    got = read(nvim, path, max_bytes=max_bytes)
    if got["ok"]:
        return {"content": got["content"]}
    return {"code": got["code"], "message": got["message"]}


def load(nvim: Any, path: Path) -> None:
    nvim.exec_lua(
        "local b = vim.fn.bufadd(...) vim.bo[b].swapfile = false vim.fn.bufload(b)",
        str(path),
    )


def test_text_and_slices_are_the_same(nvim_clean: Any, tmp_path: Path) -> None:
    for index, text in enumerate(TEXTS):
        path = tmp_path / f"t{index}.txt"
        path.write_bytes(text.encode())
        from_disk = {
            (line, limit): host_read(path, line, limit, 1 << 20)
            for line, limit in itertools.product(LINES, LIMITS)
        }
        load(nvim_clean, path)
        for (line, limit), want in from_disk.items():
            assert buffer_read(nvim_clean, path, line, limit, 1 << 20) == want, (text, line, limit)


@pytest.mark.parametrize(
    "case",
    ["missing", "directory", "fifo", "binary", "latin1", "overlong", "surrogate", "too_large"],
)
def test_errors_are_the_same(nvim_clean: Any, tmp_path: Path, case: str) -> None:
    path = tmp_path / case
    if case == "directory":
        path.mkdir()
    elif case == "fifo":
        os.mkfifo(path)
    elif case != "missing":
        content = {
            "binary": b"a\0b\n",
            "latin1": "caf\u00e9\n".encode("latin-1"),
            "overlong": b"\xc0\xaf\n",
            "surrogate": b"\xed\xa0\x80\n",
            "too_large": b"x" * 100,
        }[case]
        path.write_bytes(content)
    want = direct_read(nvim_clean, path, 64)
    assert want["code"] == CODES[case], want
    assert host_read(path, None, None, 64) == want

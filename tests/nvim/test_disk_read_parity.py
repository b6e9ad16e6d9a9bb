"""The host answers reads of files no buffer holds (`client/disk.py`); Lua's `fs.read` answers the same
request from disk for its direct callers. Both must give an agent the same text and the same errors."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.client.disk import ReadRefused, read_text, slice_lines

READ = "return require('acp_nvim.editor.fs').read(...)"

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
LIMITS = [None, 0, 1, 2, 10]


def host_read(path: Path, line: int | None, limit: int | None, max_bytes: int) -> dict[str, Any]:
    try:
        return {"content": slice_lines(read_text(str(path), max_bytes), line, limit)}
    except ReadRefused as err:
        return {"code": err.code, "message": err.message}


def lua_read(nvim: Any, path: Path, line: int | None, limit: int | None, max_bytes: int) -> dict[str, Any]:
    got = nvim.exec_lua(READ, str(path), line, limit, {"max_bytes": max_bytes})
    if got["ok"]:
        return {"content": got["content"]}
    return {"code": got["code"], "message": got["message"]}


def test_text_and_slices_are_the_same(nvim_clean: Any, tmp_path: Path) -> None:
    for index, text in enumerate(TEXTS):
        path = tmp_path / f"t{index}.txt"
        path.write_bytes(text.encode())
        for line, limit in itertools.product(LINES, LIMITS):
            want = lua_read(nvim_clean, path, line, limit, 1 << 20)
            assert host_read(path, line, limit, 1 << 20) == want, (text, line, limit)


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
    want = lua_read(nvim_clean, path, None, None, 64)
    assert "code" in want
    assert host_read(path, None, None, 64) == want

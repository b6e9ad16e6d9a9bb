"""Agent writes are atomic on disk (issue 7, "Nothing lost"): `fs.write` saves by temp file and rename, and
Neovim keeps the buffer as its own written file, in a real headless Neovim on real files."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import NVIM, ROOT
from tests.nvim.fs_calls import write

REJECT = "local ok, e = require('acp_nvim.editor.review').reject_file(0, 's1'); return { ok, e or '' }"


def leftovers(folder: Path) -> list[str]:
    """Temp files of ours still in `folder`."""
    return [p.name for p in folder.iterdir() if ".acp-" in p.name]


def start_nvim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: list[str]) -> Any:
    import pynvim

    for name in ("XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    argv = [*prefix, NVIM, "--embed", "--headless", "--clean", "-n", "--cmd", f"set rtp^={ROOT}"]
    return pynvim.attach("child", argv=argv)


@pytest.fixture
def nvim_unprivileged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Neovim that file permissions apply to: run as root, it starts without capabilities (root ignores a
    read-only folder otherwise)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot drop the capabilities that skip permissions")
        prefix = [setpriv, "--inh-caps=-all", "--bounding-set=-all", "--"]
    nvim = start_nvim(tmp_path, monkeypatch, prefix)
    try:
        yield nvim
    finally:
        with contextlib.suppress(Exception):
            nvim.command("qa!")
        nvim.close()


# --- 1. a reader never sees a torn file -------------------------------------------------------------------


def test_concurrent_reader_sees_only_old_or_new_bytes(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    old = "".join(f"old {i:07d} " + "o" * 88 + "\n" for i in range(300_000))
    new = "".join(f"NEW {i:07d} " + "n" * 93 + "\n" for i in range(320_000))
    old_bytes, new_bytes = old.encode(), new.encode()
    assert len(old_bytes) > 25_000_000 and len(new_bytes) > len(old_bytes)
    f.write_bytes(old_bytes)
    nvim_clean.command(f"edit {f}")

    started, stop = threading.Event(), threading.Event()
    seen = {"old": 0, "new": 0}
    torn: list[str] = []

    def reader() -> None:
        started.set()
        while not stop.is_set():
            try:
                data = f.read_bytes()
            except FileNotFoundError:
                torn.append("missing")
                continue
            if data == old_bytes:
                seen["old"] += 1
            elif data == new_bytes:
                seen["new"] += 1
            else:
                torn.append(f"{len(data)} bytes starting {data[:16]!r}")

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    assert started.wait(10)
    try:
        res = write(nvim_clean, f, new)
    finally:
        stop.set()
        thread.join(30)
    assert res["ok"] is True, res
    assert torn == [], f"the reader saw {len(torn)} torn states, first: {torn[:3]}"
    # The reader was really reading while the agent wrote, else nothing above was tested.
    assert seen["old"] + seen["new"] >= 2, seen
    assert f.read_bytes() == new_bytes
    assert nvim_clean.current.buffer.options["modified"] is False


# --- 2. rename, symlinks, permissions ---------------------------------------------------------------------


def test_rename_keeps_symlink_and_mode(nvim_clean: Any, tmp_path: Path) -> None:
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    real = real_dir / "script.sh"
    real.write_text("#!/bin/sh\necho old\n")
    real.chmod(0o751)
    link = tmp_path / "link.sh"
    link.symlink_to(real)
    inode = real.stat().st_ino

    assert write(nvim_clean, link, "#!/bin/sh\necho new\n")["ok"] is True
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"#!/bin/sh\necho new\n"
    st = real.stat()
    assert st.st_ino != inode, "the file was rewritten in place, not replaced by rename"
    assert stat.S_IMODE(st.st_mode) == 0o751
    assert leftovers(real_dir) == [] and leftovers(tmp_path) == []

    # A loaded buffer (opened through the link) too.
    nvim_clean.command(f"edit {link}")
    inode = real.stat().st_ino
    assert write(nvim_clean, real, "#!/bin/sh\necho newer\n")["ok"] is True
    assert link.is_symlink() and real.read_bytes() == b"#!/bin/sh\necho newer\n"
    assert real.stat().st_ino != inode and stat.S_IMODE(real.stat().st_mode) == 0o751


# --- 3. the file keeps its format byte for byte ------------------------------------------------------------


@pytest.mark.parametrize("loaded", [False, True], ids=["hidden-buffer", "loaded-buffer"])
def test_format_is_kept_byte_for_byte(nvim_clean: Any, tmp_path: Path, loaded: bool) -> None:
    dos = tmp_path / "dos.txt"
    dos.write_bytes(b"one\r\ntwo\r\n")
    noeol = tmp_path / "noeol.txt"
    noeol.write_bytes(b"a\nb")
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\u00e9\n".encode("latin-1"))
    if loaded:
        nvim_clean.command(f"edit {dos}")
        nvim_clean.command(f"edit {noeol}")
        nvim_clean.command(f"edit ++enc=latin1 {latin}")
    else:
        # The hidden buffer must read it as latin1 too: Neovim falls back to it when UTF-8 fails.
        nvim_clean.command("set fileencodings=utf-8,latin1")
    inodes = {p: p.stat().st_ino for p in (dos, noeol, latin)}

    assert write(nvim_clean, dos, "one\n2\nthree\n")["ok"] is True
    assert dos.read_bytes() == b"one\r\n2\r\nthree\r\n"
    assert write(nvim_clean, noeol, "a\nB")["ok"] is True
    assert noeol.read_bytes() == b"a\nB"
    assert write(nvim_clean, latin, "caf\u00e9\nna\u00efve\n")["ok"] is True
    assert latin.read_bytes() == "caf\u00e9\nna\u00efve\n".encode("latin-1")
    assert all(p.stat().st_ino != inodes[p] for p in inodes)

    # Text latin1 cannot hold is refused, not saved mangled; file and buffer stay.
    res = write(nvim_clean, latin, "snow \u2603\n")
    assert res["ok"] is False and str(latin) in res["message"] and "conversion" in res["message"].lower()
    assert latin.read_bytes() == "caf\u00e9\nna\u00efve\n".encode("latin-1")
    buf = nvim_clean.funcs.bufnr(str(latin))
    if loaded:
        assert nvim_clean.api.buf_get_lines(buf, 0, -1, False) == ["caf\u00e9", "na\u00efve"]
    else:
        # The hidden buffer a write loads does not outlive the write (no review keeps it here).
        assert buf == -1 or not nvim_clean.api.buf_is_loaded(buf)
    assert leftovers(tmp_path) == []


# --- 4. Neovim takes the renamed file as its own -----------------------------------------------------------


def wait_written(nvim: Any, path: Path, expected: bytes, timeout: float = 10.0) -> None:
    """Waits until `path` holds `expected`; fails at once if Neovim stops at a prompt instead."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        mode = nvim.api.get_mode()  # a fast request: answered even while a prompt waits for a key
        if mode["blocking"] or mode["mode"] in ("r?", "r", "rm", "cv"):
            raise AssertionError(f"Neovim is waiting at a prompt ({mode}) instead of writing")
        if path.read_bytes() == expected and nvim.eval("&modified") == 0:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{path} never got the user's write")


def extmark(nvim: Any, ns: int, mark: int) -> Any:
    code = "local ns, id = ...; return vim.api.nvim_buf_get_extmark_by_id(0, ns, id, {})"
    return nvim.exec_lua(code, ns, mark)


def test_buffer_stays_in_sync_after_agent_write(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "sync.txt"
    lines = [f"line {i}" for i in range(1, 31)]
    f.write_text("\n".join(lines) + "\n")
    nvim_clean.command(f"edit {f}")
    ns = nvim_clean.exec_lua('return vim.api.nvim_create_namespace("test_atomic")')
    mark = nvim_clean.exec_lua("return vim.api.nvim_buf_set_extmark(0, ..., 27, 2, {})", ns)
    nvim_clean.current.window.cursor = (25, 3)
    inode = f.stat().st_ino

    agent = list(lines)
    agent[4] = "agent five"
    assert write(nvim_clean, f, "\n".join(agent) + "\n")["ok"] is True
    assert f.stat().st_ino != inode
    assert nvim_clean.current.buffer[:] == agent
    assert nvim_clean.eval("&modified") == 0
    assert extmark(nvim_clean, ns, mark) == [27, 2]
    assert nvim_clean.current.window.cursor == (25, 3)

    # :checktime finds nothing: no warning, no FileChangedShell, and no silent 'autoread' reload either (that
    # one fires only FileChangedShellPost and BufReadPost).
    nvim_clean.command("messages clear")
    nvim_clean.exec_lua(
        "_G.fcs = 0; vim.api.nvim_create_autocmd({'FileChangedShell', 'FileChangedShellPost', 'BufReadPost'},"
        " {callback = function() _G.fcs = _G.fcs + 1 end})"
    )
    nvim_clean.command("let v:warningmsg = ''")
    nvim_clean.command("checktime")
    assert nvim_clean.exec_lua("return _G.fcs") == 0
    assert nvim_clean.eval("v:warningmsg") == ""

    # The user edits and saves: no "changed since reading it" prompt, no warning.
    nvim_clean.command("normal! Goby the user")
    nvim_clean.request("nvim_command", "write", async_=True)
    expected = ("\n".join([*agent, "by the user"]) + "\n").encode()
    wait_written(nvim_clean, f, expected)
    assert nvim_clean.eval("v:warningmsg") == ""
    messages = nvim_clean.exec_lua("return vim.api.nvim_exec2('messages', { output = true }).output")
    assert "WARNING" not in messages and "W1" not in messages and "E" not in messages.split('"')[0], messages
    nvim_clean.command("checktime")
    assert nvim_clean.exec_lua("return _G.fcs") == 0

    # Undo history is whole: the user's line, then the agent's change.
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == agent
    nvim_clean.command("undo")
    assert nvim_clean.current.buffer[:] == lines
    assert extmark(nvim_clean, ns, mark) == [27, 2]


def test_own_write_is_not_a_change_on_disk_but_a_foreign_one_is(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "race.txt"
    f.write_text("one\n")
    nvim_clean.command(f"edit {f}")
    assert write(nvim_clean, f, "two\n")["ok"] is True
    assert write(nvim_clean, f, "three\n")["ok"] is True
    assert f.read_text() == "three\n"
    f.write_text("someone else\n")
    res = write(nvim_clean, f, "four\n")
    assert res["ok"] is False and res["data"]["reason"] == "changed_on_disk"
    assert f.read_text() == "someone else\n"


def test_new_file_is_bound_to_its_buffer(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "sub" / "new.txt"
    nvim_clean.command(f"edit {f}")
    nvim_clean.current.buffer[:] = ["user draft"]
    assert write(nvim_clean, f, "agent made\n")["ok"] is True
    assert f.read_bytes() == b"agent made\n"
    nvim_clean.command("let v:warningmsg = ''")
    nvim_clean.command("checktime")
    assert nvim_clean.eval("v:warningmsg") == ""
    # The user's draft and the agent's file are a merge conflict (fs/merge.lua); the user takes the agent's.
    assert "user draft" in nvim_clean.current.buffer[:]
    nvim_clean.command("2")
    nvim_clean.command("AcpConflict theirs")
    nvim_clean.command("normal! Gomore")
    nvim_clean.request("nvim_command", "write", async_=True)
    wait_written(nvim_clean, f, b"agent made\nmore\n")


# --- 5. a failed write changes nothing ---------------------------------------------------------------------


def user_buffer(nvim: Any, f: Path) -> None:
    nvim.command(f"edit {f}")
    nvim.current.buffer[:] = ["typed", "not saved"]
    assert nvim.eval("&modified") == 1


def test_read_only_folder_fails_cleanly(nvim_unprivileged: Any, tmp_path: Path) -> None:
    nvim = nvim_unprivileged
    d = tmp_path / "ro"
    d.mkdir()
    f = d / "f.txt"
    f.write_bytes(b"on disk\n")
    user_buffer(nvim, f)
    d.chmod(0o555)
    try:
        res = write(nvim, f, "agent\n")
        assert res["ok"] is False and res["code"] == -32603
        assert str(d) in res["message"] and "permission denied" in res["message"]
        assert f.read_bytes() == b"on disk\n"
        assert nvim.current.buffer[:] == ["typed", "not saved"]
        assert nvim.eval("&modified") == 1
        assert leftovers(d) == []
    finally:
        d.chmod(0o755)


def test_failed_rename_fails_cleanly(nvim_unprivileged: Any, tmp_path: Path) -> None:
    """The temp file is written but cannot replace the file: a sticky folder where another user owns the file
    (Neovim may create files there and write this one, but not replace it)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the file to another user")
    nvim = nvim_unprivileged
    d = tmp_path / "sticky"
    d.mkdir()
    f = d / "f.txt"
    f.write_bytes(b"on disk\n")
    os.chown(d, 65534, 65534)
    os.chown(f, 65534, 65534)
    d.chmod(0o1777)
    f.chmod(0o666)
    user_buffer(nvim, f)
    inode = f.stat().st_ino

    res = write(nvim, f, "agent\n")
    assert res["ok"] is False and res["code"] == -32603
    assert str(f) in res["message"] and "EPERM" in res["message"]
    assert f.read_bytes() == b"on disk\n" and f.stat().st_ino == inode
    assert nvim.current.buffer[:] == ["typed", "not saved"]
    assert nvim.eval("&modified") == 1
    assert leftovers(d) == []
    # The user's own save still works the usual way afterwards.
    nvim.command("write")
    assert f.read_bytes() == b"typed\nnot saved\n"


def test_failed_review_reject_leaves_file_and_buffer(nvim_unprivileged: Any, tmp_path: Path) -> None:
    nvim = nvim_unprivileged
    d = tmp_path / "rej"
    d.mkdir()
    f = d / "f.txt"
    f.write_bytes(b"a\nb\nc\n")
    nvim.command(f"edit {f}")
    assert write(nvim, f, "a\nB\nc\n", session_id="s1")["ok"] is True
    inode = f.stat().st_ino
    d.chmod(0o555)
    try:
        ok, msg = nvim.exec_lua(REJECT)
        assert ok is False and "permission denied" in msg
        assert f.read_bytes() == b"a\nB\nc\n" and f.stat().st_ino == inode
        assert leftovers(d) == []
    finally:
        d.chmod(0o755)


def test_review_reject_writes_atomically(nvim_clean: Any, tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree")
    f.chmod(0o600)
    nvim_clean.command(f"edit {f}")
    assert write(nvim_clean, f, "one\nTWO\nthree", session_id="s1")["ok"] is True
    inode = f.stat().st_ino
    ok, _ = nvim_clean.exec_lua(REJECT)
    assert ok is True
    assert f.read_bytes() == b"one\r\ntwo\r\nthree"
    assert f.stat().st_ino != inode and stat.S_IMODE(f.stat().st_mode) == 0o600
    assert nvim_clean.eval("&modified") == 0
    nvim_clean.command("let v:warningmsg = ''")
    nvim_clean.command("checktime")
    assert nvim_clean.eval("v:warningmsg") == ""

"""Typing an :Acp* command on the command line starts the Python host in the background, in a real headless
Neovim: keys are fed as typed (nvim_input), which fires CmdlineChanged as a person's typing does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from bench.harness import wait_until
from tests.nvim.conftest import INSTRUMENT, Nvim, configure

HOST_INFO = "return require('acp_nvim.host').info()"
WATCHING = "return require('acp_nvim.host.warmup').enabled()"


def type_cmdline(nvim: Nvim, keys: str, expected: str, kind: str = ":") -> None:
    """Types `kind` + `keys` and waits until Neovim shows that command line (every key handled)."""
    nvim.api.input(kind + keys)
    wait_until(
        lambda: nvim.lua("return { vim.fn.getcmdtype(), vim.fn.getcmdline() }") == [kind, expected],
        10,
        f"the command line {kind}{expected}",
    )


def mode(nvim: Nvim) -> str:
    return str(nvim.api.request("nvim_get_mode")["mode"])


def leave_cmdline(nvim: Nvim) -> None:
    nvim.api.input("<Esc>")
    wait_until(lambda: mode(nvim) == "n", 10, "normal mode")


def settle(nvim: Nvim) -> Any:
    """The host's info once whatever the typed keys scheduled has run."""
    return nvim.lua(
        "local done = false\n"
        "vim.schedule(function() done = true end)\n"
        "vim.wait(5000, function() return done end, 5)\n" + HOST_INFO
    )


def test_typing_an_acp_command_starts_the_host(nvim: Nvim) -> None:
    assert nvim.lua(HOST_INFO) is None
    assert nvim.lua(WATCHING)
    type_cmdline(nvim, "AcpSt", "AcpSt")
    # Started while the command line is still open; the user has not pressed <CR>.
    assert nvim.lua(HOST_INFO) is not None
    nvim.wait("require('acp_nvim.host').is_ready()")
    assert mode(nvim) == "c"
    assert nvim.lua("return vim.fn.getcmdline()") == "AcpSt"
    assert not nvim.lua(WATCHING)  # at most once
    pid = nvim.lua(HOST_INFO)["pid"]
    leave_cmdline(nvim)
    # The command itself finds the host running.
    nvim.api.input(":AcpStart<CR>")
    nvim.wait_state("ready")
    assert nvim.lua(HOST_INFO)["pid"] == pid
    assert not nvim.errors()
    assert nvim.lua("return vim.v.errmsg") == ""


@pytest.mark.parametrize(
    ("kind", "keys"),
    [
        (":", "echo 1"),
        (":", "echo 'Acp'"),
        (":", "%s/Acp/x/"),
        (":", "acp"),
        ("/", "AcpStart"),
    ],
)
def test_other_command_lines_do_not_start_it(nvim: Nvim, kind: str, keys: str) -> None:
    type_cmdline(nvim, keys, keys, kind)
    assert settle(nvim) is None
    assert nvim.lua(WATCHING)
    leave_cmdline(nvim)
    assert settle(nvim) is None
    assert not nvim.errors()


def test_what_counts_as_an_acp_command_line(nvim: Nvim) -> None:
    lines = {
        "Acp": True,
        "AcpStart": True,
        "  AcpChat": True,
        ":AcpStart": True,
        "'<,'>AcpPrompt": True,
        "%AcpPrompt": True,
        "3,5AcpPrompt": True,
        "A": False,
        "Ac": False,
        "acpstart": False,
        "echo 'AcpStart'": False,
        "sAcp": False,
        "help AcpStart": False,
    }
    found = nvim.lua(
        "local warmup = require('acp_nvim.host.warmup')\n"
        "local found = {}\n"
        "for line in pairs(...) do found[line] = warmup.matches(line) end\n"
        "return found",
        lines,
    )
    assert found == lines


def test_a_running_host_is_left_alone(nvim: Nvim, tmp_path: Path) -> None:
    """Started some other way first: typing starts no second host, raises nothing, and stops watching."""
    assert nvim.lua(WATCHING)
    nvim.lua("require('acp_nvim.host').start()")
    nvim.wait("require('acp_nvim.host').is_ready()")
    pid = nvim.lua(HOST_INFO)["pid"]
    type_cmdline(nvim, "AcpSt", "AcpSt")
    assert settle(nvim)["pid"] == pid
    assert not nvim.lua(WATCHING)
    leave_cmdline(nvim)
    # setup() again with the host running does not watch the command line at all.
    assert configure(nvim, tmp_path)
    assert not nvim.lua(WATCHING)
    type_cmdline(nvim, "AcpSt", "AcpSt")
    assert settle(nvim)["pid"] == pid
    leave_cmdline(nvim)
    assert nvim.lua("return vim.fn['remote#host#IsRunning']('acp_nvim')") == 1
    assert not nvim.errors()
    assert nvim.lua("return vim.v.errmsg") == ""


def test_not_armed_with_prestart_host(nvim: Nvim, tmp_path: Path) -> None:
    assert configure(nvim, tmp_path, prestart_host=True)
    assert not nvim.lua(WATCHING)
    nvim.wait("require('acp_nvim.host').is_ready()")
    pid = nvim.lua(HOST_INFO)["pid"]
    type_cmdline(nvim, "AcpSt", "AcpSt")
    assert settle(nvim)["pid"] == pid
    leave_cmdline(nvim)
    assert not nvim.errors()


def test_a_host_that_cannot_start_raises_nothing_while_typing(nvim: Nvim, tmp_path: Path) -> None:
    """The failure is the command's to report, once the user runs it."""
    missing = str(tmp_path / "no-such-python")
    assert configure(nvim, tmp_path, python=missing)
    type_cmdline(nvim, "AcpSt", "AcpSt")
    assert settle(nvim) is None
    assert not nvim.lua(WATCHING)  # tried once
    assert mode(nvim) == "c"
    assert not nvim.errors()
    assert nvim.lua("return vim.v.errmsg") == ""
    leave_cmdline(nvim)
    nvim.api.input(":AcpStart<CR>")
    nvim.wait("#acp_test.notes > 0")
    assert "Python not found" in nvim.errors()[-1]


def test_armed_without_setup(nvim_clean: Any, tmp_path: Path) -> None:
    """A user who never calls setup(): the plugin file arms the warm-up, and the host it starts is the one
    the defaults name (the private environment's Python)."""
    bare = Nvim(nvim_clean)
    bare.lua(INSTRUMENT)
    assert bare.lua(WATCHING)
    python = Path(bare.lua("return require('acp_nvim.config').python()"))
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    type_cmdline(bare, "AcpSt", "AcpSt")
    assert bare.lua(HOST_INFO) is not None
    bare.wait("require('acp_nvim.host').is_ready()")
    leave_cmdline(bare)
    assert not bare.errors()

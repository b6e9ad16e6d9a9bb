"""The host's door through pynvim's real host: every method of the table is registered (from the table), and a
malformed call from Lua is one warning (or, for a call Lua waits on, a failed call saying why), never a
traceback or pynvim's "no handler"."""

from __future__ import annotations

from pathlib import Path

from acp_nvim.nvim.host_methods import METHODS
from tests.nvim.conftest import Nvim

# More arguments than any method takes: each one refuses them.
TOO_MANY = 9


def test_every_method_of_the_table_is_registered_and_refuses_a_malformed_call(
    nvim: Nvim, tmp_path: Path
) -> None:
    nvim.wait_configured()
    channel = int(nvim.lua("return require('acp_nvim.host').info().channel"))
    notified = [method.name for method in METHODS if not method.sync]
    nvim.lua(
        "local channel, names, n = ...\n"
        "for _, name in ipairs(names) do vim.rpcnotify(channel, name, unpack(vim.fn['repeat']({0}, n))) end",
        channel,
        notified,
        TOO_MANY,
    )
    for name in notified:
        nvim.wait(
            "vim.iter(acp_test.notes):any(function(n) return n.msg:find(args[1], 1, true) ~= nil end)",
            15,
            f"acp.nvim: malformed call {name}: ",
        )
    warnings = [n for n in nvim.notes() if "malformed call" in n["msg"]]
    assert len(warnings) == len(notified)
    assert all(n["level"] == 3 and "\n" not in n["msg"] for n in warnings)
    # Lua waits on these: api.lua's `request` returns false and the host's one line.
    for method in METHODS:
        if method.sync and not method.function:
            ok, why = nvim.lua(
                "return { pcall(vim.rpcrequest, ...) }", channel, method.name, *([0] * TOO_MANY)
            )
            assert ok is True and why["bad_call"].startswith(f"malformed call {method.name}: ")
    ok, why = nvim.lua("return { require('acp_nvim.host.api').log_save(1, 2, 3) }")
    assert ok is False and why.startswith("malformed call acp_log_save: ")
    ok, why = nvim.lua("return { pcall(vim.fn.AcpNvimBootstrap, 1, 2) }")
    assert ok is True and why["bad_call"].startswith("malformed call AcpNvimBootstrap: ")
    assert nvim.errors() == []
    logged = (tmp_path / "acp_nvim.log").read_text(encoding="utf-8")
    assert all(f"malformed call from Lua: {method.name}: " in logged for method in METHODS)
    assert "Traceback" not in nvim.lua("return vim.api.nvim_exec2('messages', { output = true }).output")

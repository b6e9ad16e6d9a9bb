"""The Neovim MCP server as a session offers it (`opts.mcp`), and the options' check."""

from __future__ import annotations

from acp_nvim.app.config.check import check
from acp_nvim.app.mcp import offer
from acp_nvim.app.mcp.tools import TOOL_NAMES


def test_the_server_runs_the_plugins_python_on_this_neovim_and_the_sessions_folders() -> None:
    neovim = offer.neovim_mcp(True, ["hover", "selection"], "/venv/bin/python", "/run/nvim.sock")
    assert neovim is not None
    server = offer.server(neovim, "/work", ["/libs"])
    assert (server.name, server.command) == ("neovim", "/venv/bin/python")
    assert server.args == [
        "-m", "acp_nvim", "mcp", "--nvim", "/run/nvim.sock", "--root", "/work", "--root", "/libs",
        "--tools", "hover,selection",
    ]  # fmt: skip
    assert [(env.name, env.value) for env in server.env] == [("PYTHONPATH", offer.PACKAGE_ROOT)]


def test_no_server_when_turned_off_without_tools_or_without_an_address() -> None:
    assert offer.neovim_mcp(False, TOOL_NAMES, "/py", "/sock") is None
    assert offer.neovim_mcp(True, [], "/py", "/sock") is None
    assert offer.neovim_mcp(True, TOOL_NAMES, "/py", "") is None


def test_opts_mcp_is_checked_like_every_option() -> None:
    config, errors = check(
        {"mcp": {"enabled": False, "tools": ["hover"], "servers": [{"name": "m", "command": "x"}]}}
    )
    assert errors == []
    assert (config.mcp.enabled, config.mcp.tools, [s.name for s in config.mcp.servers]) == (
        False,
        ["hover"],
        ["m"],
    )
    config, errors = check(
        {"mcp": {"enabled": "yes", "tools": ["hover", "rm"], "servers": [{"url": 1}], "x": 1}}
    )
    assert len(errors) == 4, errors
    assert any("`mcp.tools` must be a list of the Neovim MCP server's tools" in e for e in errors)
    assert config.mcp.tools == list(TOOL_NAMES) and config.mcp.enabled

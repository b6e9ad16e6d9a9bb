"""The plugin's highlight groups in a real headless Neovim: defined at start-up, defined again by every
colorscheme, and never over a definition of the user's or the colorscheme's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

GROUPS = "return require('acp_nvim.ui.highlights').groups"


def links(nvim: Any, names: list[str]) -> dict[str, Any]:
    """What Neovim has for each group: the group it links to, or its own attributes."""
    return {  # type: ignore[no-any-return]
        name: nvim.exec_lua("local h = vim.api.nvim_get_hl(0, { name = ... }) return h.link or h", name)
        for name in names
    }


def every_group_linked(nvim: Any) -> dict[str, Any]:
    groups: dict[str, str] = nvim.exec_lua(GROUPS)
    return {name: link for name, link in links(nvim, list(groups)).items() if link != groups[name]}


def test_groups_are_defined_at_start_up(nvim_clean: Any) -> None:
    sample = ["AcpChatAgent", "AcpPromptHint", "AcpNvimReviewAdd", "AcpChatTerminalOutput"]
    assert links(nvim_clean, sample) == {
        "AcpChatAgent": "Function",
        "AcpPromptHint": "Comment",
        "AcpNvimReviewAdd": "DiffAdd",
        "AcpChatTerminalOutput": "Comment",
    }
    assert every_group_linked(nvim_clean) == {}


@pytest.mark.parametrize("scheme", ["habamax", "default"])
def test_a_colorscheme_gets_the_groups_defined_again(nvim_clean: Any, scheme: str) -> None:
    assert nvim_clean.exec_lua("return require('acp_nvim').setup({ prestart_host = false })") is True
    nvim_clean.command(f"colorscheme {scheme}")
    assert every_group_linked(nvim_clean) == {}
    assert links(nvim_clean, ["AcpChatUser", "AcpNvimReviewOld"]) == {
        "AcpChatUser": "Title",
        "AcpNvimReviewOld": "DiffDelete",
    }


def test_hi_clear_then_colorscheme_event_defines_them_again(nvim_clean: Any) -> None:
    assert nvim_clean.exec_lua("return require('acp_nvim').setup({ prestart_host = false })") is True
    nvim_clean.command("hi clear")
    nvim_clean.command("doautocmd ColorScheme")
    assert every_group_linked(nvim_clean) == {}


def test_the_users_and_the_colorschemes_definitions_win(nvim_clean: Any, tmp_path: Path) -> None:
    # The user's own colour, set after start-up, survives setup().
    nvim_clean.exec_lua("vim.api.nvim_set_hl(0, 'AcpChatAgent', { fg = '#ff0000' })")
    assert nvim_clean.exec_lua("return require('acp_nvim').setup({ prestart_host = false })") is True
    assert links(nvim_clean, ["AcpChatAgent"]) == {"AcpChatAgent": {"fg": 0xFF0000}}
    # A colorscheme that styles one of the groups keeps its style; the others are linked again.
    colors = tmp_path / "rtp" / "colors"
    colors.mkdir(parents=True)
    (colors / "acptest.lua").write_text(
        "vim.cmd('hi clear')\n"
        "vim.g.colors_name = 'acptest'\n"
        "vim.api.nvim_set_hl(0, 'AcpChatUser', { fg = '#00ff00', bold = true })\n"
    )
    nvim_clean.exec_lua("vim.opt.runtimepath:append(...)", str(tmp_path / "rtp"))
    nvim_clean.command("colorscheme acptest")
    styled = links(nvim_clean, ["AcpChatUser"])["AcpChatUser"]
    assert (styled["fg"], styled["bold"]) == (0x00FF00, True)
    assert links(nvim_clean, ["AcpChatAgent"]) == {"AcpChatAgent": "Function"}
    # A user's ColorScheme autocommand (the usual way to keep a colour across colorschemes) wins too.
    nvim_clean.exec_lua(
        "vim.api.nvim_create_autocmd('ColorScheme', { callback = function()"
        " vim.api.nvim_set_hl(0, 'AcpChatAgent', { fg = '#0000ff' }) end })"
    )
    nvim_clean.command("colorscheme habamax")
    assert links(nvim_clean, ["AcpChatAgent", "AcpChatUser"]) == {
        "AcpChatAgent": {"fg": 0x0000FF},
        "AcpChatUser": "Title",
    }

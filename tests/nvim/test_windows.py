"""The chat's and the prompt's windows keep their buffers ('winfixbuf'), and what the plugin opens from them
goes to one of the user's windows (lua/acp_nvim/ui/windows.lua), in a real headless Neovim."""

from __future__ import annotations

from pathlib import Path

import pytest
from pynvim.api.common import NvimError

from tests.nvim.conftest import Nvim, configure

LAYOUT = """
local chat = require('acp_nvim.ui.chat')
chat.create('s1', { agent = 'a', display_name = 'Agent', cwd = '/' })
-- What the host sends next: a status naming the new session current (the host decides which is).
local status = require('acp_nvim.ui.status')
status.set(vim.tbl_extend('force', status.get(), { session_id = 's1' }))
chat.open('s1')
local c = chat.chats.s1
return { file = vim.fn.win_getid(1), chat = vim.fn.win_findbuf(c.buf)[1],
  prompt = vim.fn.win_findbuf(c.prompt_buf)[1], chat_buf = c.buf, prompt_buf = c.prompt_buf }
"""


@pytest.fixture
def layout(nvim: Nvim, tmp_path: Path) -> dict[str, int]:
    code = tmp_path / "code.py"
    code.write_text("one\ntwo\nthree\n")
    (tmp_path / "other.py").write_text("other\n")
    nvim.api.command(f"edit {code}")
    nvim.api.command(f"badd {tmp_path / 'other.py'}")
    wins: dict[str, int] = nvim.lua(LAYOUT)
    assert len({wins["file"], wins["chat"], wins["prompt"]}) == 3, wins
    return wins


def buffer_of(nvim: Nvim, win: int) -> int:
    return int(nvim.lua("return vim.api.nvim_win_get_buf(...)", win))


def test_the_chat_and_prompt_windows_refuse_another_buffer(nvim: Nvim, layout: dict[str, int]) -> None:
    # Set on their windows only: a window the user opens later starts from the global values.
    globals_ = "return { vim.go.winfixbuf, vim.go.signcolumn, vim.go.wrap, vim.go.foldmethod }"
    assert nvim.lua(globals_) == [False, "auto", True, "manual"]
    for name in ("chat", "prompt"):
        nvim.lua("vim.api.nvim_set_current_win(...)", layout[name])
        with pytest.raises(NvimError, match="E1513"):
            nvim.api.command("bnext")
        assert buffer_of(nvim, layout[name]) == layout[f"{name}_buf"]


def test_quickfix_from_the_chat_opens_the_file_in_the_users_window(
    nvim: Nvim, layout: dict[str, int], tmp_path: Path
) -> None:
    other = tmp_path / "other.py"
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["chat"])
    nvim.lua(
        "vim.fn.setqflist({}, ' ', { items = { { filename = ..., lnum = 1, text = 'x' } } })", str(other)
    )
    nvim.api.command("botright copen")
    nvim.api.command("cc 1")  # "the previous window" is the chat
    assert buffer_of(nvim, layout["chat"]) == layout["chat_buf"]
    assert nvim.lua("return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(...))", layout["file"]) == str(
        other
    )


def test_a_location_opens_in_the_users_window_even_from_the_prompt_side(
    nvim: Nvim, layout: dict[str, int], tmp_path: Path
) -> None:
    target = tmp_path / "other.py"
    item = {
        "id": "1",
        "kind": "tool_call",
        "lines": [
            {"s": [["  ✓ Read", ""]]},
            {"s": [["    → other.py:1", ""]], "loc": {"path": str(target), "lnum": 1}},
        ],
    }
    nvim.lua("require('acp_nvim.ui.chat').apply('s1', { { op = 'add', item = ... } })", item)
    nvim.wait("not require('acp_nvim.ui.chat').pending('s1')")
    # Into the chat from the prompt: the previous window is the prompt, no place for a file.
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["prompt"])
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["chat"])
    row = nvim.lua(
        "for i, l in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do"
        " if l:find('other.py:1', 1, true) then return i end end"
    )
    nvim.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", row)
    nvim.api.feedkeys(nvim.api.replace_termcodes("<CR>", True, False, True), "x", False)
    assert nvim.lua("return vim.api.nvim_get_current_win()") == layout["file"]
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)") == str(target)
    assert buffer_of(nvim, layout["prompt"]) == layout["prompt_buf"]
    assert buffer_of(nvim, layout["chat"]) == layout["chat_buf"]


def test_with_no_window_of_the_users_a_location_gets_a_plain_new_one(
    nvim: Nvim, layout: dict[str, int], tmp_path: Path
) -> None:
    nvim.lua("vim.api.nvim_win_close(..., true)", layout["file"])
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["chat"])
    nvim.lua("require('acp_nvim.ui.log').show({ name = 'agent', lines = { 'one line' } })")
    win = nvim.lua("return vim.api.nvim_get_current_win()")
    assert win not in (layout["chat"], layout["prompt"])
    assert nvim.lua("return vim.bo.filetype") == "acp_nvim_log"
    # Not the chat's window options: the user's defaults (signs shown, no chat header).
    assert nvim.lua("return { vim.wo.signcolumn, vim.wo.winbar, vim.wo.winfixbuf }") == ["auto", "", False]
    assert buffer_of(nvim, layout["chat"]) == layout["chat_buf"]


def test_quitting_the_last_file_window_of_a_tab_closes_the_tab_and_keeps_the_others(
    nvim: Nvim, tmp_path: Path
) -> None:
    first = tmp_path / "first.py"
    first.write_text("first\n")
    second = tmp_path / "second.py"
    second.write_text("second\n")
    nvim.api.command(f"edit {first}")
    nvim.api.command(f"tabedit {second}")
    nvim.lua(LAYOUT)
    nvim.lua("vim.api.nvim_set_current_win(vim.fn.win_getid(1))")
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)") == str(second)
    assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 3
    nvim.api.command("quit")
    nvim.wait("#vim.api.nvim_list_tabpages() == 1")
    assert nvim.lua("return vim.api.nvim_buf_get_name(0)") == str(first)
    assert nvim.lua("return #vim.api.nvim_tabpage_list_wins(0)") == 1
    # The session's chat is hidden, not gone: :AcpChat brings it back.
    assert nvim.lua("return vim.api.nvim_buf_is_valid(require('acp_nvim.ui.chat').chats.s1.buf)")


PROMPT_TEXT = "table.concat(vim.api.nvim_buf_get_lines(args[1], 0, -1, false), '\\n')"


def test_acpchat_puts_the_cursor_in_an_empty_prompt_in_insert_mode(
    nvim: Nvim, layout: dict[str, int]
) -> None:
    """What the README says: open the chat, type the prompt. In Normal mode `show me the tour` would have
    substituted a character and inserted the rest."""
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["file"])
    nvim.api.command("AcpChat")
    nvim.wait_mode("i")
    assert nvim.lua("return vim.api.nvim_get_current_win()") == layout["prompt"]
    nvim.api.input("show me the tour")
    nvim.wait(f"{PROMPT_TEXT} == 'show me the tour'", 5, layout["prompt_buf"])
    nvim.api.input("<Esc>")
    nvim.wait_mode("n")
    # Back to a draft: Normal mode, the user may have come to edit it.
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["file"])
    nvim.api.command("AcpChat")
    assert nvim.lua("return { vim.api.nvim_get_current_win(), vim.api.nvim_get_mode().mode }") == [
        layout["prompt"],
        "n",
    ]
    assert nvim.lua(f"local args = {{...}} return {PROMPT_TEXT}", layout["prompt_buf"]) == "show me the tour"


def test_with_start_insert_off_acpchat_leaves_normal_mode(
    nvim: Nvim, layout: dict[str, int], tmp_path: Path
) -> None:
    configure(nvim, tmp_path, chat={"start_insert": False})
    nvim.wait_configured()
    nvim.lua("vim.api.nvim_set_current_win(...)", layout["file"])
    nvim.api.command("AcpChat")
    assert nvim.lua("return vim.api.nvim_get_current_win()") == layout["prompt"]
    # Typed keys are Normal-mode commands: `i` begins Insert mode (in Insert mode it would be text).
    nvim.api.input("ihello<Esc>")
    nvim.wait(f"{PROMPT_TEXT} ~= ''", 5, layout["prompt_buf"])
    assert nvim.lua(f"local args = {{...}} return {PROMPT_TEXT}", layout["prompt_buf"]) == "hello"

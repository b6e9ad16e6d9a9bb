"""The chat window follows the stream while the user looks at its end, also across a permission request."""

from __future__ import annotations

from pathlib import Path

from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import scripted_agent


def chat_window_view(nvim: Nvim) -> dict[str, int]:
    return nvim.lua(  # type: ignore[no-any-return]
        """
        local chat = require('acp_nvim.ui.chat')
        local c = chat.chats[chat.current]
        local win = vim.fn.win_findbuf(c.buf)[1]
        return { cursor = vim.api.nvim_win_get_cursor(win)[1], last = vim.api.nvim_buf_line_count(c.buf) }
        """
    )


def test_chat_follows_the_end_through_a_permission_request(nvim: Nvim, tmp_path: Path) -> None:
    before = [{"text": f"line {n}\n"} for n in range(60)]
    after = [{"text": f"more {n}\n"} for n in range(60)]
    permission = {"permission": {"toolCall": {"toolCallId": "t1", "title": "Edit a.txt", "kind": "edit"}}}
    scenario = {"echo": False, "turns": [[*before, permission, *after, {"text": "the end"}]]}
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.lua("acp_test.answers = { 'allow' }")
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait_chat("the end")
    nvim.wait_state("ready")
    view = chat_window_view(nvim)
    assert view["last"] > 120
    assert view["cursor"] == view["last"], view


def test_a_window_the_user_scrolled_up_stays_put(nvim: Nvim, tmp_path: Path) -> None:
    first = [{"text": f"line {n}\n"} for n in range(40)]
    scenario = {"echo": False, "turns": [first, [{"text": "second turn"}]]}
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua("require('acp_nvim').prompt('one')")
    nvim.wait_chat("line 39")
    nvim.wait_state("ready")
    nvim.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        local win = vim.fn.win_findbuf(chat.chats[chat.current].buf)[1]
        vim.api.nvim_win_set_cursor(win, { 3, 0 })
        """
    )
    nvim.lua("require('acp_nvim').prompt('two')")
    nvim.wait_chat("second turn")
    nvim.wait_state("ready")
    assert chat_window_view(nvim)["cursor"] == 3


def test_acpchat_while_starting_focuses_the_chat_once_it_exists(nvim: Nvim, tmp_path: Path) -> None:
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, {"echo": False})}),
    )
    nvim.api.command("AcpStart s")
    assert nvim.state() == "starting"
    nvim.api.command("AcpChat")
    assert not any("no chat yet" in note["msg"] for note in nvim.notes())
    nvim.wait_state("ready")
    # The prompt window under the chat has the focus, as after :AcpChat on a running session.
    nvim.wait("vim.bo.filetype == 'acp_nvim_prompt'")
    # And Insert mode, as there: the user asked for the chat to type in it.
    nvim.wait_mode("i")

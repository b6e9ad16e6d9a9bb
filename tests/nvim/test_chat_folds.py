"""The chat's folds as the user handles them (issue 31 made them manual folds, made as items are drawn): which
ones the user opened or closed stays so when the chat makes its folds again (an item redrawn, the chat shown
anew in a window after it was closed, in another tab, in a split), and the keys that make or delete folds are
refused as they were under the chat's old 'foldexpr'. Keys are typed (`feedkeys` with remapping, as typed);
what is folded is read with foldclosed() in the chat's windows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.nvim.conftest import Nvim
from tests.nvim.test_chat import apply, chat_window, create_shown, folds, message, seg, tool_call


@pytest.fixture
def chat(nvim: Nvim) -> Nvim:
    create_shown(nvim)
    return nvim


def typed(nvim: Nvim, keys: str) -> None:
    """`keys` as the user types them (mappings apply), done before this returns."""
    nvim.api.feedkeys(nvim.api.replace_termcodes(keys, True, False, True), "mtx", False)


def long_output(item_id: str, title: str, count: int) -> dict[str, Any]:
    """A tool call whose output has `count` lines: its details are a fold, and the output past its first five
    lines a fold inside it (as tool_call_view.py draws it)."""
    lines = [{**seg(title), "f": ">1"}, {**seg("    → /p/out"), "f": "1"}]
    for n in range(1, count + 1):
        lines.append({**seg(f"    out {n}"), "f": "1" if n <= 5 else (">2" if n == 6 else "2")})
    return {"id": item_id, "kind": "tool_call", "lines": lines}


def row_of(nvim: Nvim, text: str) -> int:
    """The line (1-based) of the chat that reads `text`."""
    return nvim.chat_lines().index(text) + 1


def closed(nvim: Nvim, win: int, text: str) -> bool:
    """Whether the line that reads `text` is hidden in a closed fold (or is a closed fold's line) in `win`."""
    return folds(nvim, win)[row_of(nvim, text) - 1][0] != -1


def closed_at(nvim: Nvim, win: int, text: str) -> int:
    """foldclosed() of the line that reads `text` in `win`."""
    return folds(nvim, win)[row_of(nvim, text) - 1][0]


def go_to(nvim: Nvim, win: int, text: str) -> None:
    """Into `win` (as <C-w> would take the user there), the cursor on the line that reads `text`."""
    nvim.lua("vim.api.nvim_set_current_win(...)", win)
    typed(nvim, f"{row_of(nvim, text)}G")


def chat_windows(nvim: Nvim) -> list[int]:
    return list(nvim.lua("return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)"))


def reopen(nvim: Nvim) -> int:
    """`:AcpChat` typed (it leaves the user in the prompt, typing when it is empty: <Esc>): the chat's window
    in this tab."""
    nvim.wait_mode("n")
    nvim.api.input(":AcpChat<CR>")
    nvim.wait("vim.bo.filetype == 'acp_nvim_prompt'")
    if nvim.api.api.get_mode()["mode"] == "i":  # an empty prompt is typed into at once
        nvim.api.input("<Esc>")
        nvim.wait_mode("n")
    wins = [w for w in chat_windows(nvim) if nvim.lua("return vim.api.nvim_win_get_tabpage(...)", w) == 1]
    assert len(wins) == 1, wins
    return wins[0]


FIRST_ITEMS = [
    {"op": "add", "item": message("1", "agent", "hi")},
    {"op": "add", "item": tool_call("c1", "  ✓ Run", "    → /p/a", "    ok")},
    {"op": "add", "item": message("t1", "thought", "step one", "step two")},
    {"op": "add", "item": tool_call("c2", "  ✓ Read", "    → /p/b")},
    {"op": "add", "item": long_output("c3", "  ✓ Test", 9)},
]


def test_a_fold_opened_by_hand_stays_open_when_the_chat_is_closed_and_opened_again(chat: Nvim) -> None:
    """The user opens a tool call's details (zo) and, inside another, the rest of its long output (<CR> on
    the call, za on the output's fold, zc on the call); closes the chat window; items arrive and the open
    call grows meanwhile; `:AcpChat` shows the chat again: what they opened is open, the rest and the new
    closed."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    go_to(chat, win, "  ✓ Run")
    typed(chat, "zo")
    go_to(chat, win, "  ✓ Test")
    typed(chat, "<CR>")
    go_to(chat, win, "    out 6")
    typed(chat, "za")
    assert not closed(chat, win, "    out 9")
    go_to(chat, win, "  ✓ Test")
    typed(chat, "zc")
    assert closed_at(chat, win, "    out 9") == row_of(chat, "  ✓ Test")
    # Its output grows (drawn again, the call closed): the output's fold inside stays open.
    apply(chat, {"op": "replace", "item": long_output("c3", "  ✓ Test", 10)})
    assert closed_at(chat, win, "    out 10") == row_of(chat, "  ✓ Test")
    typed(chat, ":close<CR>")
    assert chat_windows(chat) == []
    apply(
        chat,
        {"op": "add", "item": tool_call("c4", "  ✓ Edit", "    → /p/c")},
        {"op": "replace", "item": tool_call("c1", "  ✓ Run", "    → /p/a", "    ok", "    more")},
    )
    win = reopen(chat)
    assert not closed(chat, win, "  ✓ Run") and not closed(chat, win, "    more")
    assert closed_at(chat, win, "step two") == row_of(chat, "  Thinking")
    assert closed_at(chat, win, "    → /p/b") == row_of(chat, "  ✓ Read")
    assert closed_at(chat, win, "    → /p/c") == row_of(chat, "  ✓ Edit")
    # The long output's own fold was left open inside the closed call: opening the call shows all of it.
    assert closed_at(chat, win, "    out 10") == row_of(chat, "  ✓ Test")
    go_to(chat, win, "  ✓ Test")
    typed(chat, "<CR>")
    assert not closed(chat, win, "    out 10")
    assert chat.errors() == []


def test_a_fold_closed_by_hand_stays_closed_when_the_chat_is_shown_again(chat: Nvim) -> None:
    """zR opens every fold and zc closes the thought again: shown anew, the chat has the thought closed and
    the others open; what arrived meanwhile is closed."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    go_to(chat, win, "  Thinking")
    typed(chat, "zR")
    typed(chat, "zc")
    expected = {"    ok": False, "step one": True, "    → /p/b": False, "    out 9": False}
    assert {text: closed(chat, win, text) for text in expected} == expected
    typed(chat, "<C-w>j")  # to the prompt
    chat.lua("vim.api.nvim_win_close(..., false)", win)
    apply(chat, {"op": "add", "item": tool_call("c4", "  ✓ Edit", "    → /p/c")})
    win = reopen(chat)
    assert {text: closed(chat, win, text) for text in expected} == expected
    assert closed(chat, win, "    → /p/c")
    # New folds are closed however many the user opened.
    apply(chat, {"op": "add", "item": tool_call("c5", "  ✓ Grep", "    → /p/d")})
    assert closed_at(chat, win, "    → /p/d") == row_of(chat, "  ✓ Grep")
    assert not closed(chat, win, "    ok")


def test_the_folds_follow_into_another_tab_and_a_split_and_each_window_keeps_its_own(chat: Nvim) -> None:
    """The chat shown in a new tab (`:tabnew`, `:buffer`) and in a split of its window has the folds as the
    user left them; then each window keeps its own (as Neovim keeps folds per window), through new items and
    an item redrawn."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    go_to(chat, win, "  ✓ Run")
    typed(chat, "zo")
    buf = chat.lua("return require('acp_nvim.ui.chat').chats.s1.buf")
    typed(chat, f":tabnew<CR>:buffer {buf}<CR>")
    tab_win = chat.lua("return vim.api.nvim_get_current_win()")
    assert tab_win != win
    assert not closed(chat, tab_win, "    ok") and closed(chat, tab_win, "step one")
    go_to(chat, tab_win, "  ✓ Run")
    typed(chat, "zc")
    typed(chat, ":split<CR>")
    split = chat.lua("return vim.api.nvim_get_current_win()")
    go_to(chat, split, "  Thinking")
    typed(chat, "zo")
    apply(
        chat,
        {"op": "add", "item": tool_call("c4", "  ✓ Edit", "    → /p/c")},
        {"op": "replace", "item": tool_call("c1", "  ✓ Run", "    → /p/a", "    ok", "    more")},
        {"op": "append", "id": "t1", "text": "\nstep three"},
    )
    seen = {
        w: [closed(chat, w, t) for t in ("    more", "step three", "    → /p/c")]
        for w in (win, tab_win, split)
    }
    assert seen == {win: [False, True, True], tab_win: [True, True, True], split: [True, False, True]}
    # `:tab split` of the split: a new tab page, its window as the split was.
    typed(chat, ":tab split<CR>")
    tab_split = chat.lua("return vim.api.nvim_get_current_win()")
    apply(chat, {"op": "add", "item": tool_call("c5", "  ✓ Grep", "    → /p/d")})
    texts = ("    more", "step three", "    → /p/c", "    → /p/d")
    assert [closed(chat, tab_split, t) for t in texts] == [True, False, True, True]
    assert chat.errors() == []


def test_folds_turned_off_with_zn_keep_which_are_open(chat: Nvim) -> None:
    """With folding off in the chat window (zn) every fold looks open; the chat still knows which the user
    opened: zN after items were redrawn, and the chat shown anew, have the same ones open."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    go_to(chat, win, "  ✓ Run")
    typed(chat, "zozn")
    apply(
        chat,
        {"op": "replace", "item": tool_call("c1", "  ✓ Run", "    → /p/a", "    ok", "    more")},
        {"op": "append", "id": "t1", "text": "\nstep three"},
    )
    typed(chat, "zN")
    assert not closed(chat, win, "    more") and closed(chat, win, "step three")
    typed(chat, "zn<C-w>j")
    chat.lua("vim.api.nvim_win_close(..., false)", win)
    win = reopen(chat)
    assert not closed(chat, win, "    more") and closed(chat, win, "step three")


# Counts the times the user's cursor enters window `...`.
ENTERED = """
local win = ...
acp_test.entered = 0
vim.api.nvim_create_autocmd('WinEnter', { callback = function()
  if vim.api.nvim_get_current_win() == win then acp_test.entered = acp_test.entered + 1 end
end })
"""


def test_what_arrives_in_insert_mode_closes_when_it_ends_and_stays_closed_when_the_chat_is_shown_again(
    chat: Nvim,
) -> None:
    """What arrives while the user types a prompt stays open until Insert mode ends, then closes, the folds
    the user opened before staying open; open only for that while, it is not taken for the user's choice
    when the chat window is passed through meanwhile (:AcpChat from Insert mode): shown anew, the chat has
    it closed."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    go_to(chat, win, "  ✓ Read")
    typed(chat, "zo")
    typed(chat, "<C-w>j")
    chat.api.input("inext prompt")
    chat.wait_mode("i")
    apply(chat, {"op": "add", "item": tool_call("c4", "  ✓ Edit", "    → /p/c")})
    assert not closed(chat, win, "    → /p/c")
    # A mapping of the user's that runs :AcpChat while they type: the chat window is entered and left.
    chat.lua("vim.keymap.set('i', '<C-g>c', '<Cmd>AcpChat<CR>')")
    chat.lua(ENTERED, win)
    chat.api.input("<C-g>c")
    chat.wait("acp_test.entered == 1 and vim.bo.filetype == 'acp_nvim_prompt'")
    assert chat.api.api.get_mode()["mode"] == "i"
    chat.api.input("<Esc>")
    chat.wait_mode("n")
    assert closed(chat, win, "    → /p/c") and not closed(chat, win, "    → /p/b")
    chat.lua("vim.api.nvim_win_close(..., false)", win)
    win = reopen(chat)
    assert closed(chat, win, "    → /p/c") and not closed(chat, win, "    → /p/b")


def test_keys_that_make_or_delete_folds_are_refused_in_the_chat(chat: Nvim) -> None:
    """zf, zF, zd, zD and zE would make or delete folds that last only until the chat draws them again: each
    says so and changes nothing (zf's motion is taken, Visual mode ends), as the errors under the old
    'foldexpr' did."""
    apply(chat, *FIRST_ITEMS)
    win = chat_window(chat)
    before = folds(chat, win)
    for keys in ("zfj", "zF", "zd", "zD", "zE", "Vjzf", "Vjzd", "VjzD"):
        go_to(chat, win, "hi")
        chat.lua("acp_test.notes = {}")
        typed(chat, keys)
        chat.wait("#acp_test.notes > 0")
        assert [n["msg"] for n in chat.notes()] == [
            "acp.nvim: the chat makes its own folds: zf, zF, zd, zD and zE do nothing in it (open and close"
            " them with <CR>, za, zo, zc, zR, zM)"
        ], keys
        assert chat.notes()[0]["level"] == 3
        assert folds(chat, win) == before, keys
        if not keys.startswith("V"):
            assert chat.lua("return vim.api.nvim_win_get_cursor(0)[1]") == row_of(chat, "hi"), keys
        assert chat.api.api.get_mode()["mode"] == "n", keys
    # Opening and closing are the user's, as always.
    go_to(chat, win, "  ✓ Run")
    typed(chat, "za")
    assert not closed(chat, win, "    ok")

"""What a big chat keeps after it is drawn (issue 31): its folds are manual folds, made as its items are drawn
(Neovim asks no Lua function per line, not even when Insert mode ends after a replay), and its Lua heap stays
small: a chat of 10,000 updates (the flood agent's history, turned into ops by the host's own view code)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from acp_nvim.app.chat.view import ops_for
from acp_nvim.client.session.state import SessionState
from acp_nvim.protocol import codec
from bench.flood_agent import history
from tests.nvim.conftest import Nvim
from tests.nvim.test_chat import apply, chat_window, create_shown, message


@pytest.fixture
def chat(nvim: Nvim) -> Nvim:
    create_shown(nvim)
    return nvim


APPLY = "require('acp_nvim.ui.chat').apply('s1', ...)"
IDLE = (
    "not require('acp_nvim.ui.chat').pending('s1') and not require('acp_nvim.ui.chat_highlight')"
    ".pending(require('acp_nvim.ui.chat').chats.s1.buf)"
)
HEAP = "collectgarbage('collect'); collectgarbage('collect'); return collectgarbage('count')"
# Each line's fold level in the chat window, and the level the host gave it.
LEVELS = """
local m = require('acp_nvim.ui.chat')
return vim.api.nvim_win_call(..., function()
  local out = {}
  for lnum = 1, vim.fn.line('$') do
    out[lnum] = { vim.fn.foldlevel(lnum), tonumber((m.foldexpr(lnum):gsub('>', ''))) }
  end
  return out
end)
"""


def history_batches(count: int, per_batch: int = 200) -> list[list[dict[str, Any]]]:
    """The ops the host sends for a replay of the flood agent's `history count`, a batch per `per_batch`
    updates, as Lua decodes them."""
    state = SessionState("s1")
    breaks: dict[Any, Any] = {}
    batches: list[list[dict[str, Any]]] = []
    lines = history("s1", count)
    for start in range(0, len(lines), per_batch):
        for line in lines[start : start + per_batch]:
            params = msgspec.json.decode(line)["params"]
            notification = codec.decode_session_update(msgspec.Raw(msgspec.json.encode(params)))
            assert notification is not None
            state.apply(notification.update)
        ops = ops_for(state, state.take_changes(), "flood", breaks)
        batches.append(msgspec.json.decode(msgspec.json.encode(ops)))
    return batches


def draw(nvim: Nvim, batches: list[list[dict[str, Any]]]) -> None:
    for ops in batches:
        nvim.lua(APPLY, ops)
    nvim.wait(IDLE, timeout=120)


def test_a_10000_update_chat_keeps_under_1_25_mib_of_lua_heap(chat: Nvim) -> None:
    """Issue 31: the chat keeps no table per item (an item is its mark's id, what is known of it in the chat's
    arrays) and the host's numbered ids as numbers. Drawn through `chat.apply` as here, 10,000 updates grew
    the heap by 2.1 MiB with a table per item, 1.6 MiB with two-field tables, less than 1 MiB now; the bound
    has margin for what a collection leaves behind (the benchmark `lua_heap` shows it against its target)."""
    batches = history_batches(10_000)
    # A first small chat pays for what is loaded once (modules, compiled queries).
    draw(chat, history_batches(100))
    chat.lua("require('acp_nvim.ui.chat').reset('s1', {agent = 'a', display_name = 'Agent'})")
    before = chat.lua(HEAP)
    draw(chat, batches)
    assert chat.lua("return vim.api.nvim_buf_line_count(require('acp_nvim.ui.chat').chats.s1.buf)") > 10_000
    grown_kib = chat.lua(HEAP) - before
    assert grown_kib < 1280, f"the Lua heap grew {grown_kib:.0f} KiB for 10,000 updates"


def test_folds_are_manual_made_as_drawn_and_closed_when_insert_mode_ends(chat: Nvim) -> None:
    """The folds are Neovim's manual folds (no 'foldexpr'): drawn in Insert mode they stay open, and leaving
    it closes them; every line has the level the host gave it, in the chat window and in a split of it, and
    again when the chat is shown anew in a window."""
    win = chat_window(chat)
    assert chat.lua("return vim.wo[...].foldmethod", win) == "manual"
    assert chat.lua("return vim.wo[...].foldexpr", win) in ("0", "")
    prompt_win = chat.lua("return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.prompt_buf)[1]")
    chat.lua("vim.api.nvim_set_current_win(...)", prompt_win)
    chat.api.input("inext")
    assert chat.lua("return vim.api.nvim_get_mode().mode") == "i"
    draw(chat, history_batches(200))
    levels = chat.lua(LEVELS, win)
    assert sum(1 for _, want in levels if want > 0) >= 40
    assert [have for have, _ in levels] == [want for _, want in levels]
    # Open while the user types: nothing folded away under them.
    assert (
        chat.lua("return vim.api.nvim_win_call(..., function() return vim.fn.foldclosedend(1) end)", win)
        == -1
    )
    closed = """
      return vim.api.nvim_win_call(..., function()
        local n = 0
        for lnum = 1, vim.fn.line('$') do
          if vim.fn.foldclosed(lnum) == lnum then n = n + 1 end
        end
        return n
      end)
    """
    assert chat.lua(closed, win) == 0
    chat.api.input("<Esc>")
    chat.wait("vim.api.nvim_get_mode().mode == 'n'")
    thoughts = sum(1 for n, (_, want) in enumerate(levels) if want > 0 and (n == 0 or levels[n - 1][1] == 0))
    assert chat.lua(closed, win) == thoughts
    # A split of the chat window, and the chat shown again in a window after another buffer.
    chat.lua("vim.api.nvim_set_current_win(...); vim.cmd('split')", win)
    split = chat.lua("return vim.api.nvim_get_current_win()")
    assert [have for have, _ in chat.lua(LEVELS, split)] == [want for _, want in levels]
    # Drawn into both: the split follows too.
    apply(chat, {"op": "add", "item": message("x1", "thought", "one", "two")})
    chat.wait(IDLE)
    levels = chat.lua(LEVELS, win)
    assert levels[-3:] == [[1, 1], [1, 1], [1, 1]]
    assert chat.lua(LEVELS, split) == levels
    assert chat.lua(closed, split) == chat.lua(closed, win) == thoughts + 1
    chat.lua(
        "vim.wo.winfixbuf = false; vim.cmd('enew'); vim.cmd('buffer ' .. ...)",
        chat.lua("return require('acp_nvim.ui.chat').chats.s1.buf"),
    )
    assert [have for have, _ in chat.lua(LEVELS, split)] == [want for _, want in levels]
    assert chat.lua(closed, split) == thoughts + 1

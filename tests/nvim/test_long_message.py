"""A message of any size is readable to its end: past what the chat shows of its beginning, the chat shows a
note where it is cut and the message's end after it; the key on the note opens it whole, read-only."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nvim.agent_io import start_scenario
from tests.nvim.conftest import Nvim

# 40 chunks of 64 KiB: 2.5 MiB, past the 512 KiB shown of the beginning and the 1 MiB of the end at most.
CHUNKS = 40
LINE = "lorem ipsum dolor sit amet " * 3


def chunk_text(n: int) -> str:
    lines = [f"chunk {n} line {k}: {LINE}" for k in range(64 * 1024 // (len(LINE) + 20))]
    return "\n".join(lines) + "\n"


def start(nvim: Nvim, tmp_path: Path, **opts: object) -> str:
    texts = ["THE OPENING LINE\n", *(chunk_text(n) for n in range(CHUNKS)), "THE CONCLUSION"]
    scenario = {"echo": False, "turns": [[{"text": text} for text in texts]]}
    start_scenario(nvim, tmp_path, scenario, **opts)
    nvim.api.command("AcpChat")
    assert nvim.lua("return require('acp_nvim').prompt('go')")
    nvim.wait_chat("THE CONCLUSION", timeout=60)
    nvim.wait_state("ready")
    nvim.wait("not require('acp_nvim.ui.chat').pending(require('acp_nvim.ui.chat').current)")
    return "".join(texts)


def open_note(nvim: Nvim, key: str) -> None:
    lines = nvim.chat_lines()
    (row,) = [n for n, line in enumerate(lines) if line.endswith("cut here")]
    nvim.lua(
        "local chat = require('acp_nvim.ui.chat')"
        " local win = vim.fn.win_findbuf(chat.chats[chat.current].buf)[1]"
        " vim.api.nvim_set_current_win(win) vim.api.nvim_win_set_cursor(win, { ... + 1, 0 })",
        row,
    )
    nvim.lua("vim.api.nvim_feedkeys(vim.keycode(...), 'x', false)", key)


@pytest.mark.parametrize("key", ["<CR>", "go"])
def test_a_huge_message_shows_its_beginning_a_cut_and_its_end_and_opens_whole(
    nvim: Nvim, tmp_path: Path, key: str
) -> None:
    opts = {} if key == "<CR>" else {"keymaps": {"open_message": key}}
    whole = start(nvim, tmp_path, **opts)
    lines = nvim.chat_lines()
    first = lines.index("THE OPENING LINE")
    (note,) = [n for n, line in enumerate(lines) if "cut here" in line]
    assert lines[note].startswith("… ") and lines[note].endswith("MiB cut here"), lines[note]
    # The message's end is the chat's last line, after the cut; the beginning before it.
    assert first < note and lines[-1] == "THE CONCLUSION"
    assert lines[first + 1] == whole.split("\n")[1]
    # What the chat holds stays bounded: at most the beginning and twice the tail's bound.
    assert sum(len(line) + 1 for line in lines) < (512 + 1024 + 64) * 1024
    # Shown: what is cut and the key that opens it (virtual text at the note's end).
    hint = nvim.lua(
        "local buf = require('acp_nvim.ui.chat').chats[require('acp_nvim.ui.chat').current].buf"
        " local ns = require('acp_nvim.ui.chat_message').ns"
        " local m = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })"
        " return #m == 1 and m[1][4].virt_text[1][1] or #m"
    )
    assert hint == f"  {key}: the whole message"
    open_note(nvim, key)
    name = nvim.lua("return vim.api.nvim_buf_get_name(0)")
    assert name.startswith("acp://message/"), name
    opened = nvim.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert opened == whole.split("\n")
    assert nvim.lua("return { vim.bo.modifiable, vim.bo.readonly, vim.bo.filetype }") == [False, True, ""]
    # The chat is still there, in its own window.
    assert nvim.chat_lines()[-1] == "THE CONCLUSION"

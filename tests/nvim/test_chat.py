"""The chat buffer: the Lua render path on its own, then end to end with real agents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_nvim.app.chat.line_breaks import broken
from bench.big_chat import day_of_work
from tests.nvim.agent_io import read_journal, scripted_config
from tests.nvim.conftest import Nvim, setup_opts


def seg(text: str, group: str = "") -> dict[str, Any]:
    return {"s": [[text, group]]}


def message(item_id: str, kind: str, *lines: str) -> dict[str, Any]:
    if kind == "thought":
        # A thought is a fold (the host marks its lines' levels as 'foldexpr' gives them).
        folded = [{**seg("  Thinking"), "f": ">1"}, *[{**seg(line), "f": "1"} for line in lines]]
        return {"id": item_id, "kind": kind, "lines": folded}
    return {"id": item_id, "kind": kind, "lines": [seg("▍ " + kind), *[seg(line) for line in lines]]}


def apply(nvim: Nvim, *ops: dict[str, Any]) -> None:
    nvim.lua("require('acp_nvim.ui.chat').apply(...)", "s1", list(ops))


# The chat's windows open a few main-loop ticks after the chat is created (ui/chat/init.lua, M.create).
SHOWN = "vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.prompt_buf or -1)[1] ~= nil"


# A new session as the host makes it: its chat, then a status naming it current (the host decides which is).
CREATE = """
local session_id = ...
require('acp_nvim.ui.chat').create(session_id, {agent = 'a', display_name = 'Agent', cwd = '/'})
local status = require('acp_nvim.ui.status')
status.set(vim.tbl_extend('force', status.get(), { session_id = session_id }))
"""


def create_shown(nvim: Nvim) -> None:
    """Creates chat s1 and waits until it is shown with its prompt window, as a new session's chat is."""
    nvim.lua(CREATE, "s1")
    nvim.wait(SHOWN)


@pytest.fixture
def chat(nvim: Nvim) -> Nvim:
    create_shown(nvim)
    return nvim


# ---- Lua render path (no agent) --------------------------------------------------------------------------


def test_chat_buffer_identity(chat: Nvim) -> None:
    buf = chat.lua("return require('acp_nvim.ui.chat').chats.s1.buf")
    assert chat.lua("return vim.bo[...].filetype", buf) == "acp_nvim_chat"
    assert chat.lua("return vim.api.nvim_buf_get_name(...)", buf) == "acp://a/s1"
    assert chat.lua("return vim.bo[...].modifiable", buf) is False
    # It opened with its prompt window below.
    names = chat.lua(
        "return vim.tbl_map(function(w) return vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w)) end,"
        " vim.api.nvim_tabpage_list_wins(0))"
    )
    assert "acp://a/s1" in names and "acp://a/s1/prompt" in names


def test_reset_drops_what_was_still_queued_for_the_old_session(chat: Nvim) -> None:
    """A reset (the session reloaded after a restart) empties the chat; ops the old session had still
    waiting for a later tick must not be drawn into it."""
    ops = [{"op": "add", "item": message(f"m{n}", "agent", f"old {n}")} for n in range(2000)]
    pending = chat.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        local budget = chat.budget_ns
        chat.budget_ns = 0  -- one run of items per tick: most of them stay queued
        chat.apply('s1', ...)
        local waiting = chat.pending('s1')
        chat.reset('s1', { agent = 'a', display_name = 'Agent', cwd = '/' })
        chat.budget_ns = budget
        return waiting
        """,
        ops,
    )
    assert pending is True
    assert chat.lua("return require('acp_nvim.ui.chat').pending('s1')") is False
    apply(chat, {"op": "add", "item": message("new", "agent", "replayed")})
    assert chat.lua("return require('acp_nvim.ui.chat').lines('s1')") == ["▍ agent", "replayed"]


def test_what_arrives_during_a_long_draw_goes_before_its_next_slice(chat: Nvim) -> None:
    """A long draw (a replayed history) runs a slice per main-loop tick; what arrives meanwhile (a typed key,
    a round trip, here a scheduled callback) is handled before the next slice, not behind it: queued with
    vim.schedule alone, the next slice went first, and a request waited for two slices."""
    ops = [{"op": "add", "item": message(f"m{n}", "agent", f"item {n}")} for n in range(2000)]
    first = chat.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        _G.acp_test_budget = chat.budget_ns
        chat.budget_ns = 2e5  -- a few items per slice
        chat.apply('s1', ...)
        local drawn = #chat.chats.s1.order
        _G.acp_test_seen = nil
        vim.schedule(function() _G.acp_test_seen = #chat.chats.s1.order end)
        return drawn
        """,
        ops,
    )
    chat.wait("_G.acp_test_seen ~= nil")
    assert 0 < first < 2000
    assert chat.lua("return _G.acp_test_seen") == first
    chat.wait("not require('acp_nvim.ui.chat').pending('s1')", 60)
    chat.lua("require('acp_nvim.ui.chat').budget_ns = _G.acp_test_budget")
    assert chat.chat_lines()[-1] == "item 1999"


# What a chat holds, as a user sees it: its lines, the highlights drawn with them, the markdown highlighting
# of the rows in view, every line's fold level.
CHAT_AS_SEEN = """
  local chat = require('acp_nvim.ui.chat')
  local buf = chat.chats[...].buf
  local function marks(name)
    local out = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, vim.api.nvim_get_namespaces()[name], 0, -1,
        { details = true })) do
      out[#out + 1] = { m[2], m[3], m[4].end_row, m[4].end_col, m[4].hl_group, m[4].conceal }
    end
    return out
  end
  local levels = vim.api.nvim_buf_call(buf, function()
    local out = {}
    for lnum = 1, vim.api.nvim_buf_line_count(0) do out[lnum] = chat.foldexpr(lnum) end
    return out
  end)
  return { lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false), hl = marks('acp_nvim_hl'),
    markdown = marks('acp_nvim_markdown'), folds = levels }
"""

REPLAY_IDLE = (
    "not require('acp_nvim.ui.chat').pending(args[1]) and not require('acp_nvim.ui.chat_highlight')"
    ".pending(require('acp_nvim.ui.chat').chats[args[1]].buf)"
)


def replayed_history() -> list[str]:
    """A replayed history as the host sends it: JSON chunks of 128 ops (acp_nvim/nvim/render.py), messages
    with code blocks, tool calls with diffs, thoughts (folds)."""
    ops: list[dict[str, Any]] = []
    for op in day_of_work(150):
        ops.append(op)
        if op["item"]["kind"] == "tool_call":
            step = op["item"]["id"]
            ops.append({"op": "add", "item": message(f"{step}-th", "thought", f"about {step}", "and so on")})
    return [json.dumps(ops[start : start + 128]) for start in range(0, len(ops), 128)]


def test_a_replay_drawn_in_many_short_slices_is_the_chat_drawn_at_once(chat: Nvim) -> None:
    """A replayed history drawn a slice per tick (the garbage collector held in each and paid in the next, the
    highlighting of the last slice on a tick of its own) ends as the same chat, complete, as one drawn in one
    go: the same lines, highlights, markdown in view and folds."""
    chunks = replayed_history()
    slices = chat.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        local budget, long_budget = chat.budget_ns, chat.long_budget_ns
        chat.budget_ns, chat.long_budget_ns = 1e9, 1e9
        chat.apply_json('s1', ...)
        chat.budget_ns, chat.long_budget_ns = budget, long_budget
        return chat.pending('s1')
        """,
        chunks,
    )
    assert slices is False
    chat.wait(REPLAY_IDLE, 60, "s1")
    at_once = chat.lua(CHAT_AS_SEEN, "s1")
    chat.lua(CREATE, "s2")
    chat.wait("vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s2.prompt_buf or -1)[1] ~= nil")
    sliced = chat.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        _G.acp_test_budget = chat.budget_ns
        chat.budget_ns = 3e5  -- a few items per slice
        chat.apply_json('s2', ...)
        return chat.pending('s2')
        """,
        chunks,
    )
    assert sliced is True
    chat.wait(REPLAY_IDLE, 60, "s2")
    chat.lua("require('acp_nvim.ui.chat').budget_ns = _G.acp_test_budget")
    drawn = chat.lua(CHAT_AS_SEEN, "s2")
    assert drawn["lines"][-1] == "and so on" and len(drawn["lines"]) == len(at_once["lines"])
    assert drawn["lines"] == at_once["lines"]
    assert drawn["hl"] == at_once["hl"]
    assert drawn["folds"] == at_once["folds"]
    assert drawn["markdown"] and drawn["markdown"] == at_once["markdown"]


def test_the_garbage_collector_is_held_while_a_long_draw_works_and_runs_again_after(chat: Nvim) -> None:
    """Its steps ran inside a replay's slices (a 19 KB decode took 3-6.5 ms instead of 0.5-1): it is held
    while a slice of a long draw works, what the slice allocated is paid at the start of the next one, and it
    runs again after every slice, one whose op fails too. A stream's frame is left to it."""
    ops = [{"op": "add", "item": message(f"m{n}", "agent", f"item {n}")} for n in range(300)]
    ops.insert(150, {"op": "append", "id": "m1", "text": {"not": "a text"}})
    chunks = [json.dumps(ops[start : start + 128]) for start in range(0, len(ops), 128)]
    seen = chat.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        _G.acp_test_running = {}
        vim.api.nvim_buf_attach(chat.chats.s1.buf, false, { on_lines = function()
          table.insert(acp_test_running, collectgarbage('isrunning'))
        end })
        _G.acp_test_budget = chat.budget_ns
        chat.budget_ns = 2e5
        chat.apply_json('s1', ...)
        return { collectgarbage('isrunning'), require('acp_nvim.ui.gc_pace').owed() > 0 }
        """,
        chunks,
    )
    assert seen == [True, True]
    chat.wait("not require('acp_nvim.ui.chat').pending('s1')", 60)
    chat.lua("require('acp_nvim.ui.chat').budget_ns = _G.acp_test_budget")
    running = chat.lua("return acp_test_running")
    assert len(running) > 2 and not any(running)
    assert chat.lua("return collectgarbage('isrunning')") is True
    assert chat.chat_lines()[-1] == "item 299"
    assert any("chat render error" in note["msg"] for note in chat.notes())
    # A frame of a stream: one small batch, drawn at once.
    apply(chat, {"op": "append", "id": "m299", "text": " and more"})
    assert chat.lua("return acp_test_running[#acp_test_running]") is True
    assert chat.chat_lines()[-1] == "item 299 and more"


def test_a_new_chat_opens_its_windows_after_the_input_that_came_meanwhile(nvim: Nvim) -> None:
    """The chat's buffer, the prompt's buffer and the windows are three ticks (together they were the longest
    tick of a load): what arrived meanwhile (here a scheduled callback) runs before the windows open."""
    shown = nvim.lua(
        """
        require('acp_nvim.ui.chat').create('s1', {agent = 'a', display_name = 'Agent', cwd = '/'})
        _G.acp_test_shown = nil
        vim.schedule(function() _G.acp_test_shown = #vim.api.nvim_tabpage_list_wins(0) end)
        return #vim.api.nvim_tabpage_list_wins(0)
        """
    )
    nvim.wait("_G.acp_test_shown ~= nil")
    assert nvim.lua("return _G.acp_test_shown") == shown
    nvim.wait(SHOWN)
    assert len(nvim.lua("return vim.api.nvim_tabpage_list_wins(0)")) == shown + 2


def test_append_touches_only_the_streamed_lines(chat: Nvim) -> None:
    apply(chat, {"op": "add", "item": message("1", "agent", "Hello")})
    apply(chat, {"op": "add", "item": message("2", "user", "question")})
    chat.lua(
        """
        _G.changes = {}
        vim.api.nvim_buf_attach(require('acp_nvim.ui.chat').chats.s1.buf, false, {
          on_lines = function(_, _, _, first, last_old, last_new)
            table.insert(changes, { first, last_old, last_new })
          end,
        })
        """
    )
    # Streaming into the first (not last) item, with a newline inside the chunk.
    apply(chat, {"op": "append", "id": "1", "text": " world\nsecond line"})
    assert chat.chat_lines() == ["▍ agent", "Hello world", "second line", "", "▍ user", "question"]
    assert chat.lua("return changes") == [[1, 2, 3]]


def test_replace_rewrites_one_item_in_place(chat: Nvim) -> None:
    tool = {"id": "2", "kind": "tool_call", "lines": [seg("  ○ Read  read  pending")]}
    apply(
        chat,
        {"op": "add", "item": message("1", "agent", "before")},
        {"op": "add", "item": tool},
        {"op": "add", "item": message("3", "agent", "after")},
    )
    tool["lines"] = [seg("  ✓ Read  read  completed"), seg("    output 1"), seg("    output 2")]
    apply(chat, {"op": "replace", "item": tool})
    apply(chat, {"op": "append", "id": "3", "text": " and more"})
    assert chat.chat_lines() == [
        "▍ agent",
        "before",
        "",
        "  ✓ Read  read  completed",
        "    output 1",
        "    output 2",
        "",
        "▍ agent",
        "after and more",
    ]
    tool["lines"] = [seg("  ✗ Read  read  failed")]
    apply(chat, {"op": "replace", "item": tool})
    assert chat.chat_lines()[2:5] == ["", "  ✗ Read  read  failed", ""]


def test_diff_is_drawn_as_a_real_diff_with_highlights(chat: Nvim) -> None:
    old = "a\nb\nc\n"
    new = "a\nB\nc\nd\n"
    item = {
        "id": "1",
        "kind": "tool_call",
        "lines": [
            seg("  ? Edit  edit  awaiting permission"),
            {"diff": {"path": "/p/f.txt", "old": old, "new": new}},
        ],
    }
    apply(chat, {"op": "add", "item": item})
    lines = chat.chat_lines()
    assert lines[1:3] == ["    --- /p/f.txt", "    +++ /p/f.txt"]
    assert "    -b" in lines and "    +B" in lines and "    +d" in lines and "     a" in lines
    groups = chat.lua(
        """
        local buf = require('acp_nvim.ui.chat').chats.s1.buf
        local ns = vim.api.nvim_create_namespace('acp_nvim_hl')
        local out = {}
        for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
          out[vim.api.nvim_buf_get_lines(buf, m[2], m[2] + 1, false)[1]] = m[4].hl_group
        end
        return out
        """
    )
    assert groups["    -b"] == "AcpChatDiffDelete"
    assert groups["    +B"] == "AcpChatDiffAdd"


def test_new_file_diff(chat: Nvim) -> None:
    item = {"id": "1", "kind": "tool_call", "lines": [{"diff": {"path": "/p/new.txt", "new": "x\ny"}}]}
    apply(chat, {"op": "add", "item": item})
    assert chat.chat_lines() == ["    new file /p/new.txt", "    @@ -0,0 +1,2 @@", "    +x", "    +y"]


def test_thoughts_are_folded(chat: Nvim) -> None:
    apply(
        chat,
        {"op": "add", "item": message("1", "agent", "hi")},
        {"op": "add", "item": message("2", "thought", "step one")},
    )
    apply(chat, {"op": "append", "id": "2", "text": "\nstep two"})
    chat.lua("vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1])")
    # Thought header is line 4; the fold spans the thought's header and body.
    assert chat.lua("return vim.fn.foldclosed(4)") == 4
    assert chat.lua("return vim.fn.foldclosedend(4)") == 6
    assert chat.lua("return vim.fn.foldclosed(2)") == -1


def test_location_jumps_with_enter(chat: Nvim, tmp_path: Path) -> None:
    target = tmp_path / "code.py"
    target.write_text("one\ntwo\nthree\n")
    line = seg(f"    → {target}:3")
    line["loc"] = {"path": str(target), "lnum": 3}
    apply(chat, {"op": "add", "item": {"id": "1", "kind": "tool_call", "lines": [seg("  ✓ Read"), line]}})
    chat.lua(
        """
        local buf = require('acp_nvim.ui.chat').chats.s1.buf
        vim.api.nvim_set_current_win(vim.fn.win_findbuf(buf)[1])
        vim.api.nvim_win_set_cursor(0, { 2, 0 })
        """
    )
    chat.api.feedkeys(chat.api.replace_termcodes("<CR>", True, False, True), "x", False)
    assert chat.lua("return vim.api.nvim_buf_get_name(0)") == str(target)
    assert chat.lua("return vim.api.nvim_win_get_cursor(0)") == [3, 0]


def test_meta_sets_the_header_and_commands(chat: Nvim) -> None:
    apply(
        chat,
        {
            "op": "meta",
            "header": "Fix bugs │ mode: Code │ 50%",
            "commands": [{"word": "/plan", "menu": "Make a plan", "hint": ""}],
            "modes": [],
            "title": "Fix bugs",
            "mode": "code",
        },
    )
    winbar = chat.lua("return vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.buf)[1]].winbar")
    assert "Fix bugs │ mode: Code │ 50%%" in winbar
    # The prompt's omnifunc offers the agent's commands.
    chat.lua(
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.prompt_buf)[1])"
    )
    chat.api.current.buffer[:] = ["/pl"]
    chat.lua("vim.api.nvim_win_set_cursor(0, {1, 3})")
    assert chat.lua("return require('acp_nvim.ui.prompt').omnifunc(1, '')") == 0
    items = chat.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '/pl')")
    assert [item["abbr"] for item in items] == ["/plan"]


def test_redraw_thresholds_are_options(nvim: Nvim, tmp_path: Path) -> None:
    ok = nvim.lua(
        "return require('acp_nvim').setup(...)", setup_opts(tmp_path, chat={"highlight_max_bytes": "big"})
    )
    # Named by the host, the options' owner, once it runs.
    assert ok is True
    nvim.wait_configured()
    assert "`chat.highlight_max_bytes` must be a number, got string" in nvim.errors()[0]
    opts = setup_opts(tmp_path, chat={"highlight_max_bytes": 300, "long_line_bytes": 100})
    assert nvim.lua("return require('acp_nvim').setup(...)", opts)
    nvim.wait_configured()
    create_shown(nvim)
    # Whether the chat still has markdown highlighting (issue 17: at any size), and its 'linebreak'.
    state = (
        "local c = require('acp_nvim.ui.chat').chats.s1"
        " local hl = require('acp_nvim.ui.chat_highlight')"
        " vim.wait(5000, function() return not hl.pending(c.buf) end, 10)"
        " local marks = vim.api.nvim_buf_get_extmarks(c.buf, hl.ns, 0, -1, {})"
        " return { #marks == 0, vim.wo[vim.fn.win_findbuf(c.buf)[1]].linebreak }"
    )
    apply(nvim, {"op": "add", "item": message("1", "agent", "Hello **you**")})
    assert nvim.lua(state) == [False, True]
    apply(nvim, {"op": "append", "id": "1", "text": "x" * 120})
    assert nvim.lua(state) == [False, False]
    apply(nvim, {"op": "append", "id": "1", "text": "\n" + "y" * 80 + "\n" + "z" * 80 + "\n" + "w" * 80})
    assert nvim.lua(state) == [False, False]


def test_a_long_indented_line_wraps_under_its_indent(nvim: Nvim, tmp_path: Path) -> None:
    opts = setup_opts(tmp_path, chat={"long_line_bytes": 300})
    assert nvim.lua("return require('acp_nvim').setup(...)", opts)
    nvim.wait_configured()
    create_shown(nvim)
    detail = "    " + " ".join(["output"] * 40)
    apply(nvim, {"op": "add", "item": message("1", "agent", "Here is what it printed:", detail)})
    # Where the wrapped part of the tool's line starts on the screen, and the chat window's width.
    where = (
        "local c = require('acp_nvim.ui.chat').chats.s1"
        " local win = vim.fn.win_findbuf(c.buf)[1]"
        " local row = vim.api.nvim_buf_line_count(c.buf)"
        " local width = vim.api.nvim_win_get_width(win)"
        " local first = vim.fn.screenpos(win, row, 1)"
        " for col = 2, #vim.api.nvim_buf_get_lines(c.buf, row - 1, row, true)[1] do"
        "   local pos = vim.fn.screenpos(win, row, col)"
        "   if pos.row > first.row then return { pos.col - first.col, width } end"
        " end"
        " return { -1, width }"
    )
    shift, width = nvim.lua(where)
    assert width < len(detail)
    assert shift == 4
    # Past chat.long_line_bytes, redrawing stays cheap: the line wraps at the window's edge.
    apply(nvim, {"op": "append", "id": "1", "text": " more" * 60})
    shift, _ = nvim.lua(where)
    assert shift == 0


# ---- end to end ------------------------------------------------------------------------------------------


def start_ts(nvim: Nvim) -> None:
    nvim.api.command("AcpStart ts")
    nvim.wait_state("ready")


def test_ts_agent_allow(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("acp_test.answers = { 'allow' }")
    nvim.api.command("AcpPrompt do it")
    nvim.wait_state("running", 5)
    nvim.wait_chat("Perfect! I've successfully updated the configuration.")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    assert "▍ You\ndo it" in text
    assert "▍ ts\nI'll help you with that." in text
    assert "  ✓ Reading project files  read  completed\n    → /project/README.md\n    # My Project" in text
    assert "  ✓ Modifying critical configuration file  edit  completed" in text
    (picker,) = nvim.lua("return acp_test.selects")
    assert picker["prompt"] == "Allow edit: Modifying critical configuration file?"
    assert picker["items"] == ["Allow this change (allow once)", "Skip this change (reject once)"]
    assert "Turn ended" not in text  # end_turn is not announced


def test_ts_agent_reject_and_status_while_asking(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('do it')")
    nvim.wait("acp_test.held ~= nil")
    assert nvim.state() == "awaiting_permission"
    assert "awaiting permission" in nvim.chat_text()
    assert nvim.lua("return require('acp_nvim').statusline()") == "ts awaiting permission"
    nvim.lua("acp_test.held({ id = 'reject' })")
    nvim.wait_chat("I understand you prefer not to make that change.")
    nvim.wait_state("ready")


def test_dismissing_the_picker_rejects(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("acp_test.answers = { 'none' }")  # no matching option: like pressing <Esc>
    nvim.lua("require('acp_nvim').prompt('do it')")
    nvim.wait_chat("I'll skip the configuration update.")
    nvim.wait_state("ready")


def test_cancel_mid_turn(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("require('acp_nvim').prompt('go')")
    nvim.wait_chat("Reading project files  read  pending")
    nvim.api.command("AcpCancel")
    nvim.wait_chat("Turn ended: cancelled")
    nvim.wait_state("ready")
    assert "  ⊘ Reading project files  read  cancelled" in nvim.chat_text()


def test_cancel_answers_the_open_permission_request(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('do it')")
    nvim.wait("acp_test.held ~= nil")
    nvim.api.command("AcpCancel")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    assert "Modifying critical configuration file  edit  cancelled" in text
    assert "Turn ended: cancelled" in text
    # A late pick is ignored, not sent twice.
    nvim.lua("acp_test.held({ id = 'allow' })")
    assert nvim.state() == "ready"


def test_prompt_sent_while_busy_is_queued_and_sent_after_the_turn(nvim: Nvim) -> None:
    start_ts(nvim)
    nvim.lua("acp_test.answers = { 'hold' }")
    nvim.lua("require('acp_nvim').prompt('first')")
    nvim.wait_state("awaiting_permission")
    nvim.lua(
        """
        local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]
        vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.prompt_buf)[1])
        vim.api.nvim_buf_set_lines(chat.prompt_buf, 0, -1, false, { 'second prompt' })
        """
    )
    chat_keys = nvim.api.replace_termcodes("<CR>", True, False, True)
    nvim.api.feedkeys(chat_keys, "x", False)
    # Handed over and queued (tests/nvim/test_prompt_queue.py has the queue itself), never refused.
    assert nvim.api.current.buffer[:] == [""]
    assert not [note for note in nvim.notes() if "still working" in note["msg"]]
    assert "second prompt" not in nvim.chat_text()
    nvim.lua("acp_test.held({ id = 'allow' })")
    nvim.wait_chat("▍ You\nsecond prompt")
    nvim.wait_state("ready")
    # History: <Up> brings the sent prompts back.
    nvim.api.feedkeys(nvim.api.replace_termcodes("<Up>", True, False, True), "x", False)
    assert nvim.api.current.buffer[:] == ["second prompt"]
    nvim.api.feedkeys(nvim.api.replace_termcodes("<Up>", True, False, True), "x", False)
    assert nvim.api.current.buffer[:] == ["first"]
    nvim.api.feedkeys(nvim.api.replace_termcodes("<Down><Down>", True, False, True), "x", False)
    assert nvim.api.current.buffer[:] == [""]
    nvim.wait_state("ready")


def scripted_agent(tmp_path: Path, scenario: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return scripted_config(path, tmp_path / "journal.jsonl")


def journal(tmp_path: Path) -> list[dict[str, Any]]:
    return read_journal(tmp_path / "journal.jsonl")


EVERY_KIND_TURN = [
    {"thought": "Let me think about this"},
    {"text": "Here is my plan"},
    {
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read the code", "priority": "high", "status": "completed"},
                {"content": "Write the fix", "priority": "medium", "status": "in_progress"},
            ],
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit hello.py",
            "kind": "edit",
            "status": "in_progress",
            "locations": [{"path": "/p/hello.py", "line": 2}],
            "content": [{"type": "diff", "path": "/p/hello.py", "oldText": "a\nb\n", "newText": "a\nc\n"}],
        }
    },
    {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}},
    {
        "update": {
            "sessionUpdate": "plan",
            "entries": [
                {"content": "Read the code", "priority": "high", "status": "completed"},
                {"content": "Write the fix", "priority": "medium", "status": "completed"},
            ],
        }
    },
    {
        "update": {
            "sessionUpdate": "available_commands_update",
            "availableCommands": [
                {"name": "review", "description": "Review the diff", "input": {"hint": "file"}}
            ],
        }
    },
    {"update": {"sessionUpdate": "current_mode_update", "currentModeId": "code"}},
    {"update": {"sessionUpdate": "session_info_update", "title": "Fixing hello"}},
    {"update": {"sessionUpdate": "usage_update", "used": 5000, "size": 100000}},
    {"update": {"sessionUpdate": "some_future_kind", "whatever": 1}},
    {"text": " Done."},
    {"stop": "max_tokens"},
]


def test_every_update_kind_renders(nvim: Nvim, tmp_path: Path) -> None:
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Scripted", "version": "1.0"},
        "echo": False,
        "session": {
            "modes": {
                "currentModeId": "ask",
                "availableModes": [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}],
            }
        },
        "turns": [EVERY_KIND_TURN],
    }
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    assert nvim.status()["mode"] == "ask"
    nvim.lua("require('acp_nvim').prompt('fix it')")
    nvim.wait_chat("Turn ended: max tokens")
    nvim.wait_state("ready")
    text = nvim.chat_text()
    expected_in_order = [
        "▍ You\nfix it",
        # One header for the agent's reply: its thought, text, plan and tool call are under it.
        "▍ Scripted\n  Thinking\nLet me think about this",
        "\n\nHere is my plan",
        "\n\n  Plan\n  [x] Read the code  !\n  [x] Write the fix",
        "  ✓ Edit hello.py  edit  completed\n    → /p/hello.py:2\n    --- /p/hello.py\n    +++ /p/hello.py",
        "    -b\n    +c",
        "▍ Commands\n  /review <file>  Review the diff",
        "  Mode: Code",
        "▍ Scripted\n Done.",
        "  Turn ended: max tokens",
    ]
    position = 0
    for part in expected_in_order:
        found = text.find(part, position)
        assert found >= 0, f"{part!r} not found in order in:\n{text}"
        position = found
    # The commands block interrupts the reply: the text after it names the agent again.
    assert text.count("▍ Scripted") == 2, text
    assert nvim.status()["mode"] == "code"
    header = nvim.lua(
        "return vim.wo[vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]].winbar",
        nvim.status()["session_id"],
    )
    assert "Fixing hello │ mode: Code │ ctx 5.0k/100.0k" in header
    assert not nvim.errors()


def test_prompt_with_a_range_attaches_the_selection(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    nvim.lua(
        "require('acp_nvim').setup(...)", setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, {})})
    )
    source = tmp_path / "code.py"
    source.write_text("def f():\n    return 1\n\nprint(f())\n")
    nvim.api.command(f"edit {source}")
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.api.command("1,2AcpPrompt explain this")
    nvim.wait_chat("@code.py:1-2")
    nvim.wait_state("ready")
    (prompt,) = [entry for entry in journal(tmp_path) if entry.get("method") == "session/prompt"]
    blocks = prompt["params"]["prompt"]
    assert blocks[0] == {"type": "text", "text": "explain this"}
    assert blocks[1]["type"] == "resource_link" and blocks[1]["uri"] == source.as_uri() + "#L1-L2"
    assert blocks[2]["type"] == "text" and "def f():\n    return 1" in blocks[2]["text"]
    validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/PromptRequest"})
    validator.validate(prompt["params"])


def test_embedded_context_when_the_agent_accepts_it(nvim: Nvim, tmp_path: Path) -> None:
    scenario = {"agentCapabilities": {"promptCapabilities": {"embeddedContext": True}}}
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    source = tmp_path / "notes.txt"
    source.write_text("alpha\nbeta\n")
    nvim.api.command(f"edit {source}")
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.api.command("2AcpPrompt what")
    # The turn can be over before a "running" state is ever observed: wait for its reply instead.
    nvim.wait_chat("(no scripted turn 1)")
    nvim.wait_state("ready")
    (prompt,) = [entry for entry in journal(tmp_path) if entry.get("method") == "session/prompt"]
    resource = prompt["params"]["prompt"][1]
    assert resource["type"] == "resource"
    assert resource["resource"] == {"uri": source.as_uri() + "#L2-L2", "text": "beta"}


def test_streaming_many_chunks_is_coalesced(nvim: Nvim, tmp_path: Path) -> None:
    count = 3000
    scenario = {"echo": False, "turns": [[{"text": f"w{n} "} for n in range(count)]]}
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua(
        """
        local chat = require('acp_nvim.ui.chat')
        local apply = chat.apply
        _G.apply_calls = 0
        chat.apply = function(...) apply_calls = apply_calls + 1; return apply(...) end
        """
    )
    nvim.lua("require('acp_nvim').prompt('stream')")
    nvim.wait_chat(f"w{count - 1} ", 60)
    nvim.wait_state("ready")
    # As the chat draws it (past LONG_LINE_CHARS the paragraph goes on on new lines), every word in order.
    assert broken("".join(f"w{n} " for n in range(count)))[0] in nvim.chat_text()
    calls = nvim.lua("return apply_calls")
    assert calls < count / 10, calls


def test_demo_agent(nvim: Nvim, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# Demo\n")
    (tmp_path / "hello.py").write_text('print("hi")\n')
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"demo": {"env": {"ACP_DEMO_DELAY_MS": "0"}}}),
    )
    # The client serves fs and terminals: the tour reads, asks to edit (allowed here), writes, runs `ls`.
    nvim.lua("acp_test.answers = { 'allow' }")
    nvim.api.command("AcpStart demo")
    nvim.wait_state("ready")
    status = nvim.status()
    assert status["agent"]["title"] == "acp.nvim demo agent" and status["agent"]["version"]
    nvim.lua("require('acp_nvim').prompt('show me')")
    nvim.wait_state("ready", 30)
    text = nvim.chat_text()
    assert "▍ You\nshow me" in text
    assert "  Plan" in text
    assert text.count("▍ acp.nvim demo agent") == 1, text  # one reply, one header
    assert (tmp_path / "hello.py").read_text().startswith("# Edited by the acp.nvim demo agent")
    assert "⌨ terminal" in text


# ---- folds: thoughts, a tool call's details, long outputs -----------------------------------------------


def chat_window(nvim: Nvim, session_id: str = "s1") -> int:
    return int(
        nvim.lua("return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats[...].buf)[1]", session_id)
    )


def folds(nvim: Nvim, win: int) -> list[tuple[int, int]]:
    """(foldclosed, foldclosedend) of every line of the window, as the user sees its folds."""
    return [
        (first, last)
        for first, last in nvim.lua(
            """
            return vim.api.nvim_win_call(..., function()
              local out = {}
              for lnum = 1, vim.fn.line('$') do
                out[lnum] = { vim.fn.foldclosed(lnum), vim.fn.foldclosedend(lnum) }
              end
              return out
            end)
            """,
            win,
        )
    ]


def test_a_thought_drawn_in_one_go_is_folded(chat: Nvim) -> None:
    """A thought that arrives whole (one chunk, drawn with the items around it) is folded at once: its fold is
    computed once the chat knows the item, not only when more of it streams in."""
    apply(
        chat,
        {"op": "add", "item": message("1", "agent", "hi")},
        {"op": "add", "item": message("2", "thought", "step one", "step two")},
        {"op": "add", "item": message("3", "agent", "after")},
    )
    assert chat.chat_lines()[3:6] == ["  Thinking", "step one", "step two"]
    assert folds(chat, chat_window(chat))[3:7] == [(4, 6), (4, 6), (4, 6), (-1, -1)]


def test_a_thought_drawn_while_typing_a_prompt_folds_when_insert_mode_ends(chat: Nvim) -> None:
    """Neovim does not update folds in Insert mode (the user typing the next prompt): they are updated when it
    ends."""
    prompt_win = chat.lua("return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.prompt_buf)[1]")
    chat.lua("vim.api.nvim_set_current_win(...)", prompt_win)
    chat.api.input("inext prompt")
    assert chat.lua("return vim.api.nvim_get_mode().mode") == "i"
    apply(
        chat,
        {"op": "add", "item": message("1", "agent", "hi")},
        {"op": "add", "item": message("2", "thought", "step one", "step two")},
    )
    chat.api.input("<Esc>")
    chat.wait("vim.api.nvim_get_mode().mode == 'n'")
    assert folds(chat, chat_window(chat))[3:6] == [(4, 6), (4, 6), (4, 6)]
    assert chat.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)") == ["next prompt"]


def test_many_items_drawn_while_typing_a_prompt_fold_as_their_foldexpr_says_when_insert_mode_ends(
    chat: Nvim,
) -> None:
    """The levels for the whole refold are worked out in one pass over the items before Neovim asks for each
    line (a replay's 14,000 lines at once): each line ends up folded as 'foldexpr' itself says, closed."""
    prompt_win = chat.lua("return vim.fn.win_findbuf(require('acp_nvim.ui.chat').chats.s1.prompt_buf)[1]")
    apply(chat, {"op": "add", "item": message("0", "agent", "before")})
    chat.lua("vim.api.nvim_set_current_win(...)", prompt_win)
    chat.api.input("inext prompt")
    assert chat.lua("return vim.api.nvim_get_mode().mode") == "i"
    ops: list[dict[str, Any]] = []
    for n in range(1, 120):
        kind = n % 4
        if kind == 0:
            ops.append({"op": "add", "item": message(f"m{n}", "agent", "a", "b")})
        elif kind == 1:
            ops.append({"op": "add", "item": message(f"t{n}", "thought", "step", "more")})
        elif kind == 2:
            ops.append({"op": "add", "item": tool_call(f"c{n}", "  ✓ Run  execute", "    → /p/a", "    out")})
        else:
            ops.append({"op": "add", "item": {**tool_call(f"x{n}", "  ✓ Read", "    → /p/b"), "tight": True}})
    apply(chat, *ops)
    # One drawn earlier grows: the rows after it move.
    apply(chat, {"op": "replace", "item": tool_call("c2", "  ✓ Run  execute", "    → /p/a", "1", "2", "3")})
    chat.api.input("<Esc>")
    chat.wait("vim.api.nvim_get_mode().mode == 'n'")
    win = chat_window(chat)
    levels = chat.lua(
        """
        local m = require('acp_nvim.ui.chat')
        return vim.api.nvim_win_call(..., function()
          local out = {}
          for lnum = 1, vim.fn.line('$') do
            out[lnum] = { vim.fn.foldlevel(lnum), (m.foldexpr(lnum):gsub('>', '')) }
          end
          return out
        end)
        """,
        win,
    )
    assert [int(level) for _, level in levels] == [have for have, _ in levels]
    assert sum(1 for have, _ in levels if have > 0) > 200
    # The new folds closed, as drawn in Normal mode.
    closed = folds(chat, win)
    assert all(first != -1 for (first, _), (have, _) in zip(closed, levels, strict=True) if have > 0)


OUTPUT = "\n".join(f"line {n}" for n in range(1, 9))
TOOL_CALL_TURN = [
    {"text": "Let me read it.\n\n"},
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "r1",
            "title": "Read notes.txt",
            "kind": "read",
            "status": "completed",
            "locations": [{"path": "/p/notes.txt", "line": 1}],
            "content": [{"type": "content", "content": {"type": "text", "text": OUTPUT}}],
        }
    },
    {
        "update": {
            "sessionUpdate": "tool_call",
            "toolCallId": "e1",
            "title": "Edit notes.txt",
            "kind": "edit",
            "status": "completed",
            "content": [{"type": "diff", "path": "/p/notes.txt", "oldText": "a\n", "newText": "b\n"}],
        }
    },
    {"text": "Done."},
]


def test_tool_calls_are_one_line_until_opened_with_enter(nvim: Nvim, tmp_path: Path) -> None:
    scenario = {
        "agentInfo": {"name": "scripted", "title": "Scripted", "version": "1.0"},
        "echo": False,
        "turns": [TOOL_CALL_TURN],
    }
    nvim.lua(
        "require('acp_nvim').setup(...)",
        setup_opts(tmp_path, agents={"s": scripted_agent(tmp_path, scenario)}),
    )
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")
    nvim.lua("require('acp_nvim').prompt('read it')")
    nvim.wait_chat("Done.")
    nvim.wait_state("ready")
    session_id = nvim.status()["session_id"]
    lines = nvim.chat_lines()
    read = lines.index("  ✓ Read notes.txt  read  completed") + 1
    edit = lines.index("  ✓ Edit notes.txt  edit  completed") + 1
    # One header for the reply; the message's blank lines are held back; the two calls are a list.
    assert lines[: read - 1] == ["▍ You", "read it", "", "▍ Scripted", "Let me read it.", ""]
    # The edit's summary line follows the read's details directly.
    assert lines[read : edit - 1] == ["    → /p/notes.txt:1", *[f"    line {n}" for n in range(1, 9)]]
    assert lines[-2:] == ["", "Done."]
    win = chat_window(nvim, session_id)
    seen = folds(nvim, win)
    # Each call is closed to its summary line, details and all.
    assert seen[read - 1] == (read, edit - 1) and seen[edit - 1][0] == edit
    assert seen[: read - 1] == [(-1, -1)] * (read - 1)
    nvim.lua("vim.api.nvim_set_current_win(...)", win)
    nvim.lua("vim.api.nvim_win_set_cursor(0, { ..., 0 })", read)
    nvim.api.feedkeys(nvim.api.replace_termcodes("<CR>", True, False, True), "x", False)
    seen = folds(nvim, win)
    # Open: the location and the output's first five lines; the rest of a long output is a fold of its own.
    assert seen[read - 1 : read + 6] == [(-1, -1)] * 7
    assert seen[read + 6] == (read + 7, edit - 1)
    assert seen[edit - 1][0] == edit  # the other call stays closed
    nvim.api.feedkeys(nvim.api.replace_termcodes("<CR>", True, False, True), "x", False)
    assert folds(nvim, win)[read - 1] == (read, edit - 1)


def test_fold_thoughts_off_leaves_thoughts_open_and_tool_calls_folded(nvim: Nvim, tmp_path: Path) -> None:
    assert nvim.lua(
        "return require('acp_nvim').setup(...)", setup_opts(tmp_path, chat={"fold_thoughts": False})
    )
    nvim.wait_configured()
    create_shown(nvim)
    tool = {
        "id": "2",
        "kind": "tool_call",
        "lines": [{**seg("  ✓ Read  read  completed"), "f": ">1"}, {**seg("    → /p/a"), "f": "1"}],
    }
    apply(nvim, {"op": "add", "item": message("1", "thought", "step one")}, {"op": "add", "item": tool})
    assert nvim.chat_lines() == ["  Thinking", "step one", "", "  ✓ Read  read  completed", "    → /p/a"]
    assert folds(nvim, chat_window(nvim)) == [(-1, -1), (-1, -1), (-1, -1), (4, 5), (4, 5)]


def tool_call(item_id: str, summary: str, *details: str, folded: bool = True) -> dict[str, Any]:
    lines = [{**seg(summary), "f": ">1"}, *[{**seg(line), "f": "1"} for line in details]]
    if not folded:
        lines = [seg(summary), *[seg(line) for line in details]]
    return {"id": item_id, "kind": "tool_call", "lines": lines}


def test_a_fold_the_user_opened_stays_open_and_new_ones_arrive_closed(chat: Nvim) -> None:
    """Once a fold was opened by hand Neovim creates new folds open: the chat closes each new one itself, and
    leaves alone the one the user opened, however often its tool call is updated."""
    apply(chat, {"op": "add", "item": tool_call("1", "  ◐ Run  execute  in progress", "    → /p/a")})
    win = chat_window(chat)
    assert folds(chat, win) == [(1, 2), (1, 2)]
    chat.lua("vim.api.nvim_win_call(..., function() vim.cmd('1foldopen') end)", win)
    apply(
        chat, {"op": "replace", "item": tool_call("1", "  ✓ Run  execute  completed", "    → /p/a", "    ok")}
    )
    # Asked for permission: its details in view; folded once answered.
    asking = tool_call("2", "  ? Edit  edit  awaiting permission", "    --- /p/b", folded=False)
    apply(chat, {"op": "add", "item": asking})
    assert folds(chat, win) == [(-1, -1)] * 6
    apply(chat, {"op": "replace", "item": tool_call("2", "  ✓ Edit  edit  completed", "    --- /p/b")})
    apply(chat, {"op": "add", "item": tool_call("3", "  ✓ Read  read  completed", "    → /p/c")})
    assert folds(chat, win) == [(-1, -1)] * 3 + [(-1, -1), (5, 6), (5, 6), (-1, -1), (8, 9), (8, 9)]

"""The review that goes back to the agent, through the full stack: comments on a hunk and on lines, a hunk
rejected with a reason, shown as virtual text, listed, edited and removed; `:AcpReview send` puts them in the
prompt window, and the prompt the agent gets holds the notes, the hunks quoted and a `resource_link` to each
note's lines. The notes last until the session ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.schema_check import assert_valid

ORIGINAL = "1\n2\n3\n4\n5\n6\n7\n8\n9\n"
EDITED = "1\nTWO\n3\n4\n5\n6\n7\nEIGHT\n9\n"

# vim.ui.input answers from acp_test.input_answers ("<esc>" dismisses) and records what it was asked.
INPUT = r"""
acp_test.inputs, acp_test.input_answers = {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(acp_test.inputs, { prompt = opts.prompt, default = opts.default or vim.NIL })
  local answer = table.remove(acp_test.input_answers, 1)
  if answer == '<esc>' then answer = nil end
  on_confirm(answer)
end
"""

# The notes' virtual texts in the current buffer, by 1-based line.
SHOWN = """
local out = {}
local ns = require('acp_nvim.editor.review.notes').ns
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
  out[#out + 1] = { m[2] + 1, m[4].virt_text[1][1], m[4].virt_text[1][2] }
end
return out
"""


def keys(nvim: Nvim, text: str) -> None:
    nvim.api.feedkeys(nvim.api.replace_termcodes(text, True, False, True), "mx", False)


def shown(nvim: Nvim) -> list[list[Any]]:
    return nvim.lua(SHOWN)  # type: ignore[no-any-return]


def wait_shown(nvim: Nvim, count: int, text: str = "") -> list[list[Any]]:
    nvim.wait(
        "#vim.api.nvim_buf_get_extmarks(0, require('acp_nvim.editor.review.notes').ns, 0, -1, {}) == args[1]"
        " and (args[2] == '' or vim.inspect(vim.api.nvim_buf_get_extmarks(0,"
        " require('acp_nvim.editor.review.notes').ns, 0, -1, { details = true })):find(args[2], 1, true))",
        10,
        count,
        text,
    )
    return shown(nvim)


def wait_note(nvim: Nvim, message: str) -> None:
    nvim.wait(
        "vim.tbl_contains(vim.tbl_map(function(n) return n.msg end, acp_test.notes), args[1])",
        5,
        "acp.nvim: " + message,
    )


def qf_texts(nvim: Nvim) -> list[tuple[int, str]]:
    return [(e["lnum"], e["text"]) for e in nvim.lua("return vim.fn.getqflist()")]


def agent_edited(nvim: Nvim, agent: Scripted, tmp_path: Path, *later_turns: list[dict[str, Any]]) -> Path:
    """r.txt of a new project, rewritten by the agent's first turn (`later_turns` are its next ones); the
    review's questions answered from `acp_test.inputs`. The file."""
    project = tmp_path / "project"
    project.mkdir()
    r = project / "r.txt"
    r.write_text(ORIGINAL)
    agent.start([[{"write": {"path": str(r), "content": EDITED}}], *later_turns], project)
    agent.turn()
    nvim.lua(INPUT)
    return r


def test_comment_reject_list_edit_remove_and_send(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    r = agent_edited(nvim, agent, tmp_path, [{"text": "noted"}])

    # A comment on the hunk under the cursor, through the key; its words asked.
    nvim.api.command("AcpReview")
    nvim.api.command("cfirst")
    assert nvim.api.current.window.cursor[0] == 2
    nvim.lua("acp_test.input_answers = { 'use a constant here' }")
    keys(nvim, "\\am")
    assert nvim.lua("return acp_test.inputs")[-1]["prompt"] == "Comment on r.txt:2: "
    assert wait_shown(nvim, 1, "use a constant") == [[2, "  💬 use a constant here", "AcpNvimReviewComment"]]

    # The next hunk rejected through the key, with a reason: the old line is back, the reason shown there.
    keys(nvim, "]h")
    assert nvim.api.current.window.cursor[0] == 8
    nvim.lua("acp_test.input_answers = { 'keep the digits' }")
    keys(nvim, "\\ar")
    assert nvim.lua("return acp_test.inputs")[-1]["prompt"] == "Reason for rejecting (optional): "
    assert r.read_text() == "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"
    assert [
        8,
        "  ✗ rejected: keep the digits",
        "AcpNvimReviewRejected",
    ] in wait_shown(nvim, 2, "keep the digits")

    # A comment on lines no hunk holds, from a range, its words given.
    nvim.api.command("4,5AcpReview comment these two belong together")
    assert [4, "  💬 these two belong together", "AcpNvimReviewComment"] in wait_shown(nvim, 3, "belong")

    # Listed; edited (the question starts from its words); removed.
    nvim.api.command("AcpReview comments")
    nvim.wait("#vim.fn.getqflist() == 3")
    assert qf_texts(nvim) == [
        (2, "comment: use a constant here"),
        (4, "comment: these two belong together"),
        (8, "rejection: rejected (the old lines are back): keep the digits"),
    ]
    nvim.api.command("wincmd p")
    nvim.api.current.window.cursor = (5, 0)
    nvim.lua("acp_test.input_answers = { 'lines 4 and 5 go together' }")
    nvim.api.command("AcpReview comment")
    assert nvim.lua("return acp_test.inputs")[-1] == {
        "prompt": "Edit the comment (empty: remove it): ",
        "default": "these two belong together",
    }
    assert [4, "  💬 lines 4 and 5 go together", "AcpNvimReviewComment"] in wait_shown(nvim, 3, "go together")
    nvim.api.command("AcpReview remove")
    assert [row for row, _, _ in wait_shown(nvim, 2)] == [2, 8]
    # A dismissed question rejects nothing.
    nvim.api.current.window.cursor = (2, 0)
    nvim.lua("acp_test.input_answers = { '<esc>' }")
    keys(nvim, "\\ar")
    assert r.read_text() == "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"

    # Sent into the prompt window: the text to edit, the references attached; nothing sent yet.
    before = len(agent.entries())
    nvim.api.command("AcpReview send")
    nvim.wait("vim.bo.filetype == 'acp_nvim_prompt'")
    draft = "\n".join(nvim.api.current.buffer[:])
    assert draft.startswith("Here is my review of your changes.")
    assert "## r.txt" in draft
    assert "r.txt:2: use a constant here\n```diff\n-2\n+TWO\n```" in draft
    assert "r.txt:8: rejected (the old lines are back): keep the digits\n```diff\n-8\n+EIGHT\n```" in draft
    pending = nvim.lua("return require('acp_nvim.ui.prompt').pending()")
    assert pending == [
        {"kind": "reference", "path": str(r.resolve()), "start": 2, "end": 2},
        {"kind": "reference", "path": str(r.resolve()), "start": 8, "end": 8},
    ]
    assert not [e for e in agent.entries()[before:] if e.get("method") == "session/prompt"]

    # The user edits it and sends it: the agent gets the notes and a link to each one's lines.
    nvim.api.current.buffer.append("Thanks!")
    keys(nvim, "<CR>")
    agent.turns_done += 1
    nvim.wait_chat("noted")
    (prompt,) = [e for e in agent.entries()[before:] if e.get("method") == "session/prompt"]
    assert_valid(agent.schema, "PromptRequest", prompt["params"])
    blocks = prompt["params"]["prompt"]
    assert blocks[0]["type"] == "text"
    assert "r.txt:2: use a constant here" in blocks[0]["text"]
    assert blocks[0]["text"].endswith("Thanks!")
    uri = r.resolve().as_uri()
    assert blocks[1:] == [
        {"type": "resource_link", "uri": uri + "#L2-L2", "name": "r.txt:2", "title": "r.txt:2"},
        {"type": "resource_link", "uri": uri + "#L8-L8", "name": "r.txt:8", "title": "r.txt:8"},
    ]

    # Still there after the turn, marked as sent; a new note goes alone in the next prompt.
    nvim.api.command("AcpReview comments")
    nvim.wait("#vim.fn.getqflist() == 2")
    assert [text for _, text in qf_texts(nvim)] == [
        "[sent] comment: use a constant here",
        "[sent] rejection: rejected (the old lines are back): keep the digits",
    ]
    nvim.api.command("cfirst")
    nvim.api.command("6AcpReview comment six too")
    wait_shown(nvim, 3, "six too")
    nvim.api.command("AcpReview send")
    nvim.wait(
        "vim.bo.filetype == 'acp_nvim_prompt' and vim.api.nvim_buf_get_lines(0, 0, -1, false)[3] ~= nil"
    )
    draft = "\n".join(nvim.api.current.buffer[:])
    assert "r.txt:6: six too" in draft
    assert "use a constant" not in draft

    # The session ends: its notes and their marks go.
    nvim.lua("require('acp_nvim').stop()")
    nvim.wait_state("stopped")
    nvim.wait(
        "#vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(args[1]), require('acp_nvim.editor.review.notes').ns,"
        " 0, -1, {}) == 0",
        10,
        str(r.resolve()),
    )
    assert nvim.errors() == []


def test_comment_without_a_hunk_or_a_session_says_so(nvim: Nvim, agent: Scripted, tmp_path: Path) -> None:
    r = agent_edited(nvim, agent, tmp_path)
    nvim.api.command(f"edit {r}")
    nvim.api.current.window.cursor = (4, 0)
    nvim.api.command("AcpReview comment words")
    wait_note(nvim, "no agent hunk here: put the cursor on one, or give lines (a range, Visual mode)")
    # An empty comment is refused by the host, nothing shown.
    nvim.lua("acp_test.input_answers = { '   ' }")
    nvim.api.current.window.cursor = (2, 0)
    nvim.api.command("AcpReview comment")
    wait_note(nvim, "a comment needs words: nothing was added")
    assert shown(nvim) == []
    nvim.api.command("AcpReview send")
    wait_note(
        nvim, "no review notes: comment on the agent's change (:AcpReview comment) or reject a hunk first"
    )
    # With the session gone, a note has nowhere to go: said, nothing shown.
    nvim.lua("require('acp_nvim').stop()")
    nvim.wait_state("stopped")
    nvim.api.command("AcpReview comment on a stopped session")
    wait_note(nvim, "no session to review with: start an agent with :AcpStart")
    assert shown(nvim) == []


def test_a_comment_stays_on_its_lines_when_their_hunk_is_rejected(
    nvim: Nvim, agent: Scripted, tmp_path: Path
) -> None:
    r = agent_edited(nvim, agent, tmp_path)
    nvim.api.command("AcpReview")
    nvim.api.command("clast")
    assert nvim.api.current.window.cursor[0] == 8
    nvim.api.command("AcpReview comment why eight")
    wait_shown(nvim, 1, "why eight")
    # From the command, the reason given: nothing asked.
    nvim.api.command("AcpReview reject eights are digits")
    assert r.read_text() == "1\nTWO\n3\n4\n5\n6\n7\n8\n9\n"
    assert sorted(wait_shown(nvim, 2, "digits")) == [
        [8, "  ✗ rejected: eights are digits", "AcpNvimReviewRejected"],
        [8, "  💬 why eight", "AcpNvimReviewComment"],
    ]
    assert nvim.lua("return acp_test.inputs") == []

    # From Visual mode, the key comments on the lines selected.
    nvim.api.current.window.cursor = (3, 0)
    nvim.lua("acp_test.input_answers = { 'three to five' }")
    keys(nvim, "Vjj\\am")
    assert nvim.lua("return acp_test.inputs")[-1]["prompt"] == "Comment on r.txt:3-5: "
    assert [3, "  💬 three to five", "AcpNvimReviewComment"] in wait_shown(nvim, 3, "three to five")
    assert nvim.lua("return vim.api.nvim_get_mode().mode") == "n"

    # Wiped out, then read again: the notes show again where they were.
    before = sorted(shown(nvim))
    nvim.api.command("enew")
    nvim.api.command(f"bwipeout! {r.resolve()}")
    nvim.api.command(f"edit {r}")
    assert sorted(wait_shown(nvim, 3, "three to five")) == before

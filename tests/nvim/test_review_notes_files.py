"""The review's notes on whole files, through the full stack: the reject-file key asks a reason, as the reject
key does, and notes it for each hunk it rejects; a note follows its buffer renamed (`:saveas`, a file
manager's rename by `nvim_buf_set_name`) into the next prompt, and a note whose file the agent moved away
says so there instead of linking to a path that leads nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.nvim.agent_io import Scripted
from tests.nvim.conftest import Nvim
from tests.nvim.test_review_notes import EDITED, INPUT, ORIGINAL, agent_edited, keys, qf_texts, wait_shown
from tests.schema_check import assert_valid

REJECTED = "rejected (the old lines are back)"


def draft(nvim: Nvim, needle: str) -> str:
    """`:AcpReview send`'s prompt, once the prompt window holds `needle`."""
    nvim.api.command("AcpReview send")
    nvim.wait(
        "vim.bo.filetype == 'acp_nvim_prompt'"
        " and table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n'):find(args[1], 1, true)",
        10,
        needle,
    )
    return "\n".join(nvim.api.current.buffer[:])


def send(nvim: Nvim, agent: Scripted, answer: str) -> dict[str, Any]:
    """The prompt in the prompt window sent: what the agent got."""
    before = len(agent.entries())
    keys(nvim, "<CR>")
    agent.turns_done += 1
    nvim.wait_chat(answer)
    (prompt,) = [e for e in agent.entries()[before:] if e.get("method") == "session/prompt"]
    assert_valid(agent.schema, "PromptRequest", prompt["params"])
    return prompt["params"]  # type: ignore[no-any-return]


def test_the_reject_file_key_asks_a_reason_and_notes_it_for_each_hunk(
    nvim: Nvim, agent: Scripted, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    r, q = project / "r.txt", project / "q.txt"
    r.write_text(ORIGINAL)
    q.write_text("a\nb\n")
    writes = [
        {"write": {"path": str(r), "content": EDITED}},
        {"write": {"path": str(q), "content": "a\nB\n"}},
    ]
    agent.start([writes, [{"text": "noted"}]], project)
    agent.turn()
    nvim.lua(INPUT)
    nvim.api.command(f"edit {r}")
    nvim.api.current.window.cursor = (5, 0)

    # Dismissed: nothing rejected, nothing noted.
    nvim.lua("acp_test.input_answers = { '<esc>' }")
    keys(nvim, "\\aR")
    assert (
        nvim.lua("return acp_test.inputs")[-1]["prompt"]
        == "Reason for rejecting every hunk of r.txt (optional): "
    )
    assert r.read_text() == EDITED
    assert nvim.lua("return #require('acp_nvim.editor.review').hunks()") == 3

    # Answered: every hunk of the file rejected, the reason on each.
    nvim.lua("acp_test.input_answers = { 'keep the digits' }")
    keys(nvim, "\\aR")
    assert sorted(wait_shown(nvim, 2, "digits")) == [
        [2, "  ✗ rejected: keep the digits", "AcpNvimReviewRejected"],
        [8, "  ✗ rejected: keep the digits", "AcpNvimReviewRejected"],
    ]
    assert r.read_text() == ORIGINAL
    # An empty answer rejects without a reason.
    nvim.api.command(f"edit {q}")
    nvim.lua("acp_test.input_answers = { '' }")
    keys(nvim, "\\aR")
    assert wait_shown(nvim, 1, "rejected") == [[2, "  ✗ rejected", "AcpNvimReviewRejected"]]
    assert q.read_text() == "a\nb\n"
    assert nvim.lua("return #require('acp_nvim.editor.review').hunks()") == 0

    nvim.api.command("AcpReview comments")
    nvim.wait("#vim.fn.getqflist() == 3")
    assert qf_texts(nvim) == [
        (2, f"rejection: {REJECTED}"),
        (2, f"rejection: {REJECTED}: keep the digits"),
        (8, f"rejection: {REJECTED}: keep the digits"),
    ]
    nvim.api.command("wincmd p")
    text = draft(nvim, "q.txt")
    assert f"r.txt:2: {REJECTED}: keep the digits\n```diff\n-2\n+TWO\n```" in text
    assert f"r.txt:8: {REJECTED}: keep the digits\n```diff\n-8\n+EIGHT\n```" in text
    assert f"q.txt:2: {REJECTED}\n```diff\n-b\n+B\n```" in text
    params = send(nvim, agent, "noted")
    assert f"r.txt:8: {REJECTED}: keep the digits" in params["prompt"][0]["text"]
    assert [b["uri"] for b in params["prompt"][1:]] == [
        r.resolve().as_uri() + "#L2-L2",
        r.resolve().as_uri() + "#L8-L8",
        q.resolve().as_uri() + "#L2-L2",
    ]
    assert nvim.errors() == []


def test_a_note_follows_its_buffer_renamed_into_the_prompt(
    nvim: Nvim, agent: Scripted, tmp_path: Path
) -> None:
    r = agent_edited(nvim, agent, tmp_path, [{"text": "noted"}])
    project = r.parent
    nvim.api.command(f"edit {r}")
    nvim.api.current.window.cursor = (2, 0)
    nvim.api.command("AcpReview comment use a constant")
    wait_shown(nvim, 1, "constant")

    # :saveas: the buffer is s.txt now, and so is the note's file.
    s = project / "s.txt"
    nvim.api.command(f"saveas {s}")
    nvim.api.command("AcpReview comments")
    nvim.wait("#vim.fn.getqflist() == 1")
    (item,) = nvim.lua(
        "return vim.tbl_map(function(e) return vim.api.nvim_buf_get_name(e.bufnr) end, vim.fn.getqflist())"
    )
    assert Path(item).resolve() == s.resolve()
    nvim.api.command("wincmd p")

    # A file manager's rename: the file moved, the buffer given its new name.
    t = project / "t.txt"
    s.rename(t)
    nvim.lua("vim.api.nvim_buf_set_name(0, ...)", str(t))
    text = draft(nvim, "## ")
    # Still shown on its lines, now marked as in a prompt.
    nvim.wait(
        "vim.deep_equal(vim.tbl_map(function(m) return { m[2] + 1, m[4].virt_text[1][1] } end,"
        " vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(args[1]), require('acp_nvim.editor.review.notes').ns,"
        " 0, -1, { details = true })), { { 2, '  💬 use a constant (in a prompt)' } })",
        10,
        str(t),
    )
    assert "## t.txt\n\nt.txt:2: use a constant\n```diff\n-2\n+TWO\n```" in text
    assert "r.txt" not in text and "s.txt" not in text
    params = send(nvim, agent, "noted")
    assert params["prompt"][1:] == [
        {
            "type": "resource_link",
            "uri": t.resolve().as_uri() + "#L2-L2",
            "name": "t.txt:2",
            "title": "t.txt:2",
        }
    ]
    assert nvim.errors() == []


def test_a_note_on_a_file_the_agent_moved_says_it_is_not_there(
    nvim: Nvim, agent: Scripted, tmp_path: Path
) -> None:
    move = {"shell": {"command": "mv r.txt moved.txt", "toolCallId": "m1", "kind": "move"}}
    r = agent_edited(nvim, agent, tmp_path, [move], [{"text": "noted"}])
    nvim.api.command(f"edit {r}")
    nvim.api.current.window.cursor = (2, 0)
    nvim.api.command("AcpReview comment use a constant")
    wait_shown(nvim, 1, "constant")
    agent.turn()
    assert not r.exists() and (r.parent / "moved.txt").exists()

    nvim.api.command("AcpReview comments")
    nvim.wait("#vim.fn.getqflist() == 1")
    assert qf_texts(nvim) == [(2, "comment: use a constant (not on disk now)")]
    nvim.api.command("wincmd p")
    text = draft(nvim, "## ")
    assert "## r.txt (not on disk now)\n\nr.txt:2: use a constant" in text
    # No link to a path that leads nowhere.
    assert nvim.lua("return require('acp_nvim.ui.prompt').pending()") == []
    params = send(nvim, agent, "noted")
    assert "## r.txt (not on disk now)" in params["prompt"][0]["text"]
    assert [b["type"] for b in params["prompt"]] == ["text"]
    assert nvim.errors() == []

"""The @-mentions of what Neovim knows made blocks (no Neovim): bounds, what lies outside the session's
folders, the words when there is nothing, and `@diff` taken from a real git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from acp_nvim.app.sessions import git_diff
from acp_nvim.app.sessions.context_mentions import (
    MAX_TEXT_CHARS,
    BufferInfo,
    BuffersMention,
    Diagnostic,
    DiagnosticsMention,
    DiffMention,
    MissingMention,
    QuickfixItem,
    QuickfixMention,
    Skipped,
    SymbolMention,
    bounded,
    render,
)
from acp_nvim.app.sessions.prompt_content import parse_attachments, prompt_content
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s
from tests.schema_check import assert_valid


def wire(blocks: list[s.ContentBlock], schema: dict[str, Any]) -> list[Any]:
    out = codec.to_builtins(blocks)
    for block in out:
        assert_valid(schema, "ContentBlock", block)
    return out  # type: ignore[no-any-return]


def test_bounded_cuts_at_a_line_end_and_says_how_much() -> None:
    text = "".join(f"line {i}\n" for i in range(20000))
    cut = bounded(text)
    assert len(cut) < MAX_TEXT_CHARS + 100
    head, note = cut.rsplit("\n", 1)
    assert head.endswith(("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"))
    assert note.startswith("[cut: ") and note.endswith("more lines not sent, over 64 KiB]")
    assert bounded("short") == "short"


def test_diagnostics_outside_the_folders_are_left_out_and_named(
    tmp_path: Path, schema: dict[str, Any]
) -> None:
    inside = str(tmp_path / "a.py")
    mention = DiagnosticsMention(
        scope="all",
        items=[
            Diagnostic(path=inside, lnum=3, col=1, severity="error", message="bad\nsecond line"),
            Diagnostic(path="/etc/passwd", lnum=1, col=1, severity="error", message="SECRET"),
        ],
        skipped=[Skipped(path=inside, count=5), Skipped(path="/etc/shadow", count=3)],
    )
    rendered = render(mention, [str(tmp_path)], embedded=False)
    blocks = wire(rendered.blocks, schema)
    assert "SECRET" not in str(blocks)
    assert "a.py:3:1: error: bad\n    second line" in blocks[1]["text"]
    assert "[5 more diagnostics not gathered]" in blocks[1]["text"]
    assert rendered.shown == (
        "@diagnostics:all: 6 in a.py; left out, outside the session's folders: /etc/passwd, /etc/shadow"
    )


def test_the_current_buffer_outside_the_folders_sends_nothing(tmp_path: Path) -> None:
    mention = DiagnosticsMention(
        path="/etc/hosts", items=[Diagnostic(path="/etc/hosts", lnum=1, col=1, message="SECRET")]
    )
    rendered = render(mention, [str(tmp_path)], embedded=True)
    assert "SECRET" not in str(rendered.blocks)
    assert rendered.shown == "@diagnostics: none (left out, outside the session's folders: /etc/hosts)"


def test_each_kind_is_valid_both_ways(tmp_path: Path, schema: dict[str, Any]) -> None:
    path = str(tmp_path / "m.py")
    mentions = [
        BuffersMention(
            items=[BufferInfo(path=path, modified=True, filetype="python", lines=3), BufferInfo(path="")]
        ),
        QuickfixMention(
            title="grep", items=[QuickfixItem(text="plain line"), QuickfixItem(path=path, lnum=2)]
        ),
        SymbolMention(name="f", path=path, start_line=2, end_line=4, text="def f():\n    ```\n    pass"),
        DiffMention(text="diff --git a/m.py b/m.py\n", fact=""),
        MissingMention(name="symbol:g", fact="no_language_server"),
    ]
    for embedded in (False, True):
        for mention in mentions:
            assert wire(render(mention, [str(tmp_path)], embedded).blocks, schema)
    # A fence inside the text gets a longer fence.
    link_and_text = render(mentions[2], [str(tmp_path)], embedded=False).blocks
    assert "````\n" in wire(link_and_text, schema)[1]["text"]
    assert render(mentions[0], [str(tmp_path)], False).shown == "@buffers: 2, 1 unsaved"
    assert render(mentions[4], [str(tmp_path)], False).shown == "@symbol:g: none (no language server)"


def test_lua_attachments_parse_and_a_bad_one_is_refused() -> None:
    raw = [
        {"kind": "diagnostics", "mention": True, "scope": "buffer", "path": "/p/a.py", "items": []},
        {"kind": "missing", "mention": True, "name": "selection", "fact": "no_selection"},
    ]
    parsed = parse_attachments(raw)
    built = prompt_content("@diagnostics @selection", parsed, s.PromptCapabilities(), roots=["/p"])
    assert (
        built.shown
        == "@diagnostics @selection\n@diagnostics: none (a.py)\n@selection: none (no visual selection)"
    )
    with pytest.raises(Exception, match="items"):
        parse_attachments([{"kind": "quickfix", "items": "nope"}])


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=cwd, check=True, env=env, capture_output=True)


@pytest.mark.anyio
@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
async def test_git_diff_of_the_folder_only(tmp_path: Path) -> None:
    assert (await git_diff.unstaged_diff(str(tmp_path))).fact == "not_a_repository"
    git(tmp_path, "init", "-q")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "in.txt").write_text("a\n")
    (tmp_path / "out.txt").write_text("a\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "one")
    assert (await git_diff.unstaged_diff(str(tmp_path))).text == ""
    (tmp_path / "sub" / "in.txt").write_text("b\n")
    (tmp_path / "out.txt").write_text("b\n")
    taken = await git_diff.unstaged_diff(str(tmp_path / "sub"))
    assert taken.fact == "" and "+b" in taken.text and "out.txt" not in taken.text
    raw = await git_diff.with_diffs([{"kind": "diff", "mention": True}, {"kind": "file"}], [str(tmp_path)])
    assert (
        isinstance(raw, list)
        and raw[0]["kind"] == "diff"
        and raw[0]["fact"] == ""
        and raw[1] == {"kind": "file"}
    )

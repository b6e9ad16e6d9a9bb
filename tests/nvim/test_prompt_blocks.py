"""Rich prompts end to end: what the user types and attaches in Neovim, and the exact blocks the agent gets.

The agent is the scripted SDK agent advertising one prompt capability at a time (or none); its journal holds
the `session/prompt` request as received, checked against the official schema.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.nvim.conftest import Nvim, setup_opts
from tests.nvim.test_chat import journal, scripted_agent
from tests.schema_check import assert_valid

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
PNG_B64 = base64.b64encode(PNG).decode()


def start(nvim: Nvim, tmp_path: Path, caps: dict[str, bool] | None, **scenario: Any) -> None:
    if caps is not None:
        scenario["agentCapabilities"] = {"promptCapabilities": caps}
    scenario.setdefault("echo", False)
    agents = {"s": scripted_agent(tmp_path, scenario)}
    nvim.lua("require('acp_nvim').setup(...)", setup_opts(tmp_path, agents=agents))
    nvim.api.command("AcpStart s")
    nvim.wait_state("ready")


def prompts(tmp_path: Path, schema: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Every prompt the agent received, each validated as a PromptRequest."""
    path = tmp_path / "journal.jsonl"
    if not path.exists():
        return []
    found = []
    for entry in journal(tmp_path):
        if entry.get("method") == "session/prompt":
            assert_valid(schema, "PromptRequest", entry["params"])
            for block in entry["params"]["prompt"]:
                assert_valid(schema, "ContentBlock", block)
            found.append(entry["params"]["prompt"])
    return found


def prompt_buf(nvim: Nvim) -> int:
    return int(
        nvim.lua(
            "local chat = require('acp_nvim.ui.chat').chats[require('acp_nvim').status().session_id]\n"
            "return chat.prompt_buf"
        )
    )


def type_and_send(nvim: Nvim, text: str) -> None:
    """Writes `text` in the chat's prompt window and presses the send key, as a user would."""
    buf = prompt_buf(nvim)
    nvim.lua(
        "local buf, text = ...\n"
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(buf)[1])\n"
        "vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\\n'))",
        buf,
        text,
    )
    nvim.api.feedkeys(nvim.api.replace_termcodes("<CR>", True, False, True), "x", False)


def sent(nvim: Nvim, tmp_path: Path, schema: dict[str, Any], count: int = 1) -> list[dict[str, Any]]:
    nvim.wait(
        "(function() local f = io.open(args[1]) if not f then return false end"
        " local n = 0 for l in f:lines() do if l:find('\"turn_end\"', 1, true) then n = n + 1 end end"
        " f:close() return n >= args[2] end)()",
        20,
        str(tmp_path / "journal.jsonl"),
        count,
    )
    nvim.wait_state("ready")
    return prompts(tmp_path, schema)[count - 1]


def test_text_and_mentions_become_resource_links(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    (tmp_path / "src").mkdir()
    app = tmp_path / "src" / "app.py"
    app.write_text("print('hi')\n")
    start(nvim, tmp_path, None)
    type_and_send(nvim, "explain @src/app.py, not @nobody.py or me@example.com")
    blocks = sent(nvim, tmp_path, schema)
    assert blocks == [
        {"type": "text", "text": "explain @src/app.py, not @nobody.py or me@example.com"},
        {"type": "resource_link", "uri": app.as_uri(), "name": "src/app.py", "mimeType": "text/x-python"},
    ]
    # The prompt emptied; the chat shows what was written.
    assert nvim.lua("return vim.api.nvim_buf_get_lines(...)", prompt_buf(nvim), 0, -1, False) == [""]
    nvim.wait_chat("explain @src/app.py")


def test_at_completion_lists_project_files(nvim: Nvim, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "memo.wav").write_bytes(b"RIFF")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "secret.py").write_text("")
    start(nvim, tmp_path, None)
    buf = prompt_buf(nvim)
    nvim.lua(
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])\n"
        "vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'look at @sr' })\n"
        "vim.api.nvim_win_set_cursor(0, { 1, 11 })",
        buf,
    )
    assert nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(1, '')") == 8
    items = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@sr')")
    assert [(i["word"], i["menu"]) for i in items] == [("@src/app.py", "[file]")]
    every = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '@')")
    # The mentions of what Neovim knows come first (tests/nvim/test_context_mentions.py), then the files.
    words = [i["word"] for i in every if i["menu"] != "[neovim]"]
    assert words == sorted(words) and "@src/app.py" in words
    assert not [w for w in words if "secret" in w]  # hidden folders are skipped
    assert [i["menu"] for i in every if i["word"] == "@shot.png"] == ["[image]"]
    assert [i["menu"] for i in every if i["word"] == "@memo.wav"] == ["[audio]"]
    # Typing "@" at the start of a word opens the completion (the mapping returns <C-x><C-o>).
    assert nvim.lua("return vim.fn.maparg('@', 'i', false, true).expr") == 1


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_at_completion_in_a_git_repository_skips_ignored_files(nvim: Nvim, tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.py").write_text("")
    (tmp_path / "main.py").write_text("")
    start(nvim, tmp_path, None)
    words = nvim.lua(
        "return vim.tbl_map(function(i) return i.word end, require('acp_nvim.ui.prompt').omnifunc(0, '@'))"
    )
    assert "@main.py" in words and "@.gitignore" in words and "@build/out.py" not in words


def test_attached_buffer_is_embedded_when_accepted(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    source = tmp_path / "notes.md"
    source.write_text("alpha\nbeta\n")
    start(nvim, tmp_path, {"embeddedContext": True})
    nvim.api.command(f"edit {source}")
    nvim.api.command("call setline(2, 'beta (unsaved)')")
    nvim.api.command("AcpAttach")
    assert nvim.lua("return require('acp_nvim.ui.prompt').pending()[1].whole") is True
    type_and_send(nvim, "summarize")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "summarize"},
        {"type": "resource", "resource": {"uri": source.as_uri(), "text": "alpha\nbeta (unsaved)"}},
    ]
    assert nvim.lua("return require('acp_nvim.ui.prompt').pending()") == []
    nvim.wait_chat("summarize\n@notes.md")


def test_whole_buffer_falls_back_to_link_and_text(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    source = tmp_path / "a.py"
    source.write_text("x = 1\n")
    start(nvim, tmp_path, {"image": True, "audio": True})
    nvim.api.command(f"edit {source}")
    nvim.api.command("%AcpPrompt why")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "why"},
        {"type": "resource_link", "uri": source.as_uri(), "name": "a.py", "title": "a.py"},
        {"type": "text", "text": "a.py:\n```python\nx = 1\n```"},
    ]


def test_images_from_a_file_and_a_mention(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    shot = tmp_path / "shot.png"
    shot.write_bytes(PNG)
    (tmp_path / "pics").mkdir()
    other = tmp_path / "pics" / "b.PNG"
    other.write_bytes(PNG)
    start(nvim, tmp_path, {"image": True})
    nvim.api.command(f"AcpAttachImage {shot}")
    type_and_send(nvim, "compare with @pics/b.PNG")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "compare with @pics/b.PNG"},
        {"type": "image", "data": PNG_B64, "mimeType": "image/png", "uri": shot.as_uri()},
        {"type": "image", "data": PNG_B64, "mimeType": "image/png", "uri": other.as_uri()},
    ]
    nvim.wait_chat("compare with @pics/b.PNG\n[image shot.png]")


def test_images_are_refused_without_the_capability(
    nvim: Nvim, tmp_path: Path, schema: dict[str, Any]
) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    start(nvim, tmp_path, {"embeddedContext": True, "audio": True})
    nvim.api.command("AcpAttachImage shot.png")
    type_and_send(nvim, "what is this")
    nvim.wait(
        "#vim.tbl_filter(function(n) return n.msg:find(args[1], 1, true) end, acp_test.notes) > 0",
        15,
        "does not accept images",
    )
    nvim.wait_state("ready")
    (note,) = [n for n in nvim.notes() if "does not accept images" in n["msg"]]
    assert note["level"] == 3
    assert "Scripted" not in note["msg"] and "(shot.png); nothing was sent" in note["msg"]
    # Nothing reached the agent; the text and the image are back for the next try.
    assert prompts(tmp_path, schema) == []
    assert nvim.lua("return vim.api.nvim_buf_get_lines(...)", prompt_buf(nvim), 0, -1, False) == [
        "what is this"
    ]
    assert [a["name"] for a in nvim.lua("return require('acp_nvim.ui.prompt').pending()")] == ["shot.png"]
    # Dropping it lets the prompt through.
    nvim.api.command("AcpAttachClear")
    type_and_send(nvim, "what is this")
    assert sent(nvim, tmp_path, schema) == [{"type": "text", "text": "what is this"}]


def test_audio_from_a_command_and_a_mention(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    (tmp_path / "note.wav").write_bytes(b"RIFF-wav")
    (tmp_path / "song.mp3").write_bytes(b"ID3-mp3")
    start(nvim, tmp_path, {"audio": True})
    nvim.api.command("AcpAttachAudio note.wav")
    type_and_send(nvim, "transcribe @song.mp3")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "transcribe @song.mp3"},
        {"type": "audio", "data": base64.b64encode(b"RIFF-wav").decode(), "mimeType": "audio/wav"},
        {"type": "audio", "data": base64.b64encode(b"ID3-mp3").decode(), "mimeType": "audio/mpeg"},
    ]
    nvim.wait_chat("transcribe @song.mp3\n[audio note.wav]")


def test_audio_is_refused_without_the_capability(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    (tmp_path / "note.wav").write_bytes(b"RIFF-wav")
    start(nvim, tmp_path, {"image": True})
    type_and_send(nvim, "transcribe @note.wav")
    nvim.wait(
        "#vim.tbl_filter(function(n) return n.msg:find(args[1], 1, true) end, acp_test.notes) > 0",
        15,
        "does not accept audio (note.wav); nothing was sent",
    )
    assert prompts(tmp_path, schema) == []
    nvim.api.command("AcpAttachAudio notes.txt")
    assert "is not a WAV, MP3, Ogg, FLAC, M4A or AAC file" in nvim.notes()[-1]["msg"]
    nvim.api.command("AcpAttachImage note.wav")
    assert "note.wav is not a PNG, JPEG, GIF or WebP image" in nvim.notes()[-1]["msg"]


def test_clipboard_image(nvim: Nvim, tmp_path: Path, schema: dict[str, Any]) -> None:
    start(nvim, tmp_path, {"image": True})
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    nvim.lua("vim.env.PATH = ...", str(empty))
    nvim.api.command("AcpAttachImage")
    assert "no clipboard tool for images found" in nvim.notes()[-1]["msg"]
    # A stand-in wl-paste that prints a PNG (the real one needs a Wayland session).
    fake = tmp_path / "bin"
    fake.mkdir()
    (tmp_path / "clip.png").write_bytes(PNG)
    tool = fake / "wl-paste"
    tool.write_text(f"#!/bin/sh\ncat {tmp_path / 'clip.png'}\n")
    tool.chmod(0o755)
    nvim.lua("vim.env.PATH = ...", f"{fake}:/usr/bin:/bin")
    nvim.api.command("AcpAttachImage")
    nvim.api.command("AcpPrompt pasted")
    assert sent(nvim, tmp_path, schema) == [
        {"type": "text", "text": "pasted"},
        {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
    ]


def test_slash_commands_complete_with_their_hint(nvim: Nvim, tmp_path: Path) -> None:
    commands = [
        {"name": "review", "description": "Review the diff", "input": {"hint": "file to review"}},
        {"name": "plan", "description": "Make a plan"},
    ]
    turn = [{"update": {"sessionUpdate": "available_commands_update", "availableCommands": commands}}]
    start(nvim, tmp_path, None, turns=[turn])
    nvim.api.command("AcpPrompt hi")
    nvim.wait_chat("/review <file to review>")
    nvim.wait_state("ready")
    buf = prompt_buf(nvim)
    nvim.lua(
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(...)[1])\n"
        "vim.api.nvim_buf_set_lines(0, 0, -1, false, { '/re' })\n"
        "vim.api.nvim_win_set_cursor(0, { 1, 3 })",
        buf,
    )
    assert nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(1, '')") == 0
    (item,) = nvim.lua("return require('acp_nvim.ui.prompt').omnifunc(0, '/re')")
    assert item["word"] == "/review " and item["abbr"] == "/review <file to review>"
    assert item["menu"] == "Review the diff" and item["info"] == "file to review"
    hint = (
        "local buf = ...\n"
        "vim.api.nvim_exec_autocmds('TextChanged', { buffer = buf })\n"
        "local ns = vim.api.nvim_create_namespace('acp_nvim_prompt_hint')\n"
        "local marks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })\n"
        "return marks[1] and marks[1][4].virt_text[1][1] or vim.NIL"
    )
    # The completed command shows what it expects until the user types it.
    nvim.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { '/review ' })", buf)
    assert nvim.lua(hint, buf) == "<file to review>"
    nvim.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { '/review main.py' })", buf)
    assert nvim.lua(hint, buf) is None
    nvim.lua("vim.api.nvim_buf_set_lines(..., 0, -1, false, { '/plan ' })", buf)
    assert nvim.lua(hint, buf) is None

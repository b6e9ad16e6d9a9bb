"""Prompt blocks from text and attachments, gated by the agent's prompt capabilities (no Neovim)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_nvim.app.sessions.prompt_content import (
    MAX_MEDIA_BYTES,
    AudioAttachment,
    FileAttachment,
    ImageAttachment,
    PromptRefused,
    SelectionAttachment,
    parse_attachments,
    prompt_content,
)
from acp_nvim.protocol import codec
from acp_nvim.protocol import schema as s
from tests.schema_check import assert_valid

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
ALL = s.PromptCapabilities(image=True, audio=True, embedded_context=True)
NONE = s.PromptCapabilities()


def wire(blocks: list[s.ContentBlock], schema: dict[str, Any]) -> list[Any]:
    out = codec.to_builtins(blocks)
    for block in out:
        assert_valid(schema, "ContentBlock", block)
    return out  # type: ignore[no-any-return]


def test_untagged_items_are_selections() -> None:
    (item,) = parse_attachments([{"path": "/p/a.py", "start": 1, "end": 2, "text": "x"}])
    assert isinstance(item, SelectionAttachment)
    kinds = parse_attachments(
        [{"kind": "file", "path": "/p/a", "name": "a"}, {"kind": "image", "name": "c", "data": "AA=="}]
    )
    assert [type(k) for k in kinds] == [FileAttachment, ImageAttachment]


def test_mention_becomes_a_resource_link(tmp_path: Path, schema: dict[str, Any]) -> None:
    path = tmp_path / "src" / "main.py"
    built = prompt_content("look at @src/main.py", [FileAttachment(path=str(path), name="src/main.py")], NONE)
    assert wire(built.blocks, schema) == [
        {"type": "text", "text": "look at @src/main.py"},
        {"type": "resource_link", "uri": path.as_uri(), "name": "src/main.py", "mimeType": "text/x-python"},
    ]
    assert built.shown == "look at @src/main.py"


def test_a_file_mentioned_twice_is_linked_once() -> None:
    mention = FileAttachment(path="/p/README", name="README")
    built = prompt_content("@README and @README", [mention, mention], NONE)
    assert [b.__class__ for b in built.blocks] == [s.ContentBlockText, s.ContentBlockResourceLink]


def test_selection_embedded_or_linked(schema: dict[str, Any]) -> None:
    sel = SelectionAttachment(path="/p/a.py", start=3, end=4, text="x = 1\ny = 2", filetype="python")
    embedded = wire(prompt_content("why", [sel], ALL).blocks, schema)
    assert embedded[1] == {
        "type": "resource",
        "resource": {"uri": "file:///p/a.py#L3-L4", "text": "x = 1\ny = 2"},
    }
    linked = wire(prompt_content("why", [sel], NONE).blocks, schema)
    assert linked[1] == {
        "type": "resource_link",
        "uri": "file:///p/a.py#L3-L4",
        "name": "a.py:3-4",
        "title": "a.py:3-4",
    }
    assert linked[2] == {"type": "text", "text": "a.py:3-4:\n```python\nx = 1\ny = 2\n```"}


def test_whole_buffer_has_no_line_range(schema: dict[str, Any]) -> None:
    sel = SelectionAttachment(path="/p/a.py", start=1, end=9, text="...", whole=True)
    built = prompt_content("", [sel], ALL)
    assert wire(built.blocks, schema) == [
        {"type": "resource", "resource": {"uri": "file:///p/a.py", "text": "..."}}
    ]
    assert built.shown == "@a.py"


@given(st.text())
def test_quoted_selection_never_breaks_its_fence(text: str) -> None:
    sel = SelectionAttachment(path="/p/a", start=1, end=1, text=text)
    quoted = prompt_content("", [sel], NONE).blocks[1]
    assert isinstance(quoted, s.ContentBlockText)
    body = quoted.text.split("\n", 1)[1]
    fence = body.split("\n", 1)[0]
    assert body.endswith("\n" + fence) and fence not in text


def test_image_from_a_file(tmp_path: Path, schema: dict[str, Any]) -> None:
    path = tmp_path / "shot.PNG"
    path.write_bytes(PNG)
    built = prompt_content("see", [ImageAttachment(name="shot.PNG", path=str(path))], ALL)
    assert wire(built.blocks, schema)[1] == {
        "type": "image",
        "data": base64.b64encode(PNG).decode(),
        "mimeType": "image/png",
        "uri": path.as_uri(),
    }
    assert built.shown == "see\n[image shot.PNG]"


def test_image_from_the_clipboard(schema: dict[str, Any]) -> None:
    image = ImageAttachment(name="clipboard", data="AAAA", mime_type="image/png")
    built = prompt_content("", [image], ALL)
    assert wire(built.blocks, schema) == [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]


def test_images_refused_without_the_capability(tmp_path: Path) -> None:
    path = tmp_path / "a.png"
    path.write_bytes(PNG)
    with pytest.raises(PromptRefused, match=r"Agent X does not accept images \(a.png\); nothing was sent"):
        prompt_content("x", [ImageAttachment(name="a.png", path=str(path))], NONE, "Agent X")


def test_audio_from_a_file(tmp_path: Path, schema: dict[str, Any]) -> None:
    path = tmp_path / "note.MP3"
    path.write_bytes(b"ID3 audio")
    built = prompt_content("listen", [AudioAttachment(name="note.MP3", path=str(path))], ALL)
    assert wire(built.blocks, schema)[1] == {
        "type": "audio",
        "data": base64.b64encode(b"ID3 audio").decode(),
        "mimeType": "audio/mpeg",
    }
    assert built.shown == "listen\n[audio note.MP3]"


def test_audio_refused_without_the_capability(tmp_path: Path) -> None:
    path = tmp_path / "a.wav"
    path.write_bytes(b"RIFF")
    caps = s.PromptCapabilities(image=True)
    with pytest.raises(PromptRefused, match=r"Agent X does not accept audio \(a.wav\); nothing was sent"):
        prompt_content("x", [AudioAttachment(name="a.wav", path=str(path))], caps, "Agent X")
    with pytest.raises(PromptRefused, match="is not an audio"):
        prompt_content("x", [AudioAttachment(name="a.png", path=str(tmp_path / "a.png"))], ALL)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.png", None, "cannot read image missing.png"),
        ("notes.txt", b"x", "is not an image"),
        ("big.png", b"\0" * (MAX_MEDIA_BYTES + 1), "too large"),
    ],
)
def test_bad_images_are_refused(tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(PromptRefused, match=message):
        prompt_content("x", [ImageAttachment(name=name, path=str(path))], ALL)


def test_a_reference_is_a_link_to_its_lines_whatever_the_capabilities(schema: dict[str, Any]) -> None:
    (ref,) = parse_attachments([{"kind": "reference", "path": "/p/a.py", "start": 3, "end": 5}])
    for caps in (ALL, NONE):
        built = prompt_content("see", [ref], caps)
        assert wire(built.blocks, schema)[1:] == [
            {"type": "resource_link", "uri": "file:///p/a.py#L3-L5", "name": "a.py:3-5", "title": "a.py:3-5"}
        ]
        assert built.shown == "see\n@a.py:3-5"

"""Prompt content: what the user typed plus what is attached to it, as ACP content blocks.

Lua sends the text and a list of attachments, each tagged by `kind`:
- `selection`: lines of a buffer (`:AcpPrompt` with a range, `:AcpAttach` for a whole buffer);
- `file`: an `@path` mention in the text, already resolved by Lua to an existing file;
- `image`: an image file (`:AcpAttachImage {path}`, an `@shot.png` mention) or clipboard data (base64);
- `audio`: an audio file (`:AcpAttachAudio {path}`, an `@note.wav` mention);
- `reference`: lines of a file named without their text, a `resource_link` to them (the review's notes, which
  quote the lines in the prompt's text: `app/review/compose.py`).

Nothing leaves here that the agent's `promptCapabilities` do not allow: a selection falls back to a
`resource_link` plus its text when embedded context is not accepted, and an image or audio the agent cannot
take refuses the whole prompt with a message, before anything is sent (the client's own check would only give
a bare error after the user's text was gone).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from pathlib import Path

import msgspec

from acp_nvim.app.sessions.media_types import AUDIO_TYPES, IMAGE_TYPES
from acp_nvim.client.agent.connection import AgentConnection
from acp_nvim.jsonrpc.wire import JsonValue
from acp_nvim.protocol import schema as s

#: Images and audio bigger than this are refused: agents reject them anyway, and base64 makes them a third
#: larger.
MAX_MEDIA_BYTES = 10 * 1024 * 1024


class SelectionAttachment(msgspec.Struct, kw_only=True, tag="selection", tag_field="kind"):
    """A range of lines from a buffer (or the whole buffer), as Lua sends it."""

    path: str
    start: int
    end: int
    text: str
    filetype: str = ""
    whole: bool = False

    @property
    def label(self) -> str:
        return lines_label(self.path, self.start, self.end, whole=self.whole)

    @property
    def uri(self) -> str:
        return lines_uri(self.path, self.start, self.end, whole=self.whole)


def lines_label(path: str, start: int, end: int, *, whole: bool = False) -> str:
    """How lines of a file are named to the agent and in the chat: `name:3-5`, `name:3`, `name` for all."""
    name = os.path.basename(path) or path
    if whole:
        return name
    return f"{name}:{start}-{end}" if end != start else f"{name}:{start}"


def lines_uri(path: str, start: int, end: int, *, whole: bool = False) -> str:
    """The URI of lines of a file: `file:///...#L3-L5` (the fragment GitHub and editors read)."""
    if not os.path.isabs(path):
        return path
    uri = Path(path).as_uri()
    return uri if whole else uri + f"#L{start}-L{end}"


def fenced(text: str, info: str = "") -> str:
    """`text` in a Markdown code fence longer than any run of backticks in it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{info}\n{text}\n{fence}"


#: The name prompts used before attachments had kinds.
Selection = SelectionAttachment


class ReferenceAttachment(msgspec.Struct, kw_only=True, tag="reference", tag_field="kind"):
    """Lines of a file named without their text: a `resource_link` to them, as a selection's link."""

    path: str
    start: int
    end: int

    @property
    def label(self) -> str:
        return lines_label(self.path, self.start, self.end)


class FileAttachment(msgspec.Struct, kw_only=True, tag="file", tag_field="kind"):
    """An `@path` mention: `path` absolute, `name` as written (relative to the session's directory)."""

    path: str
    name: str


class MediaAttachment(msgspec.Struct, kw_only=True):
    """Media from a file (`path`) or given inline (`data` in base64 with its `mime_type`)."""

    name: str
    path: str = ""
    data: str = ""
    mime_type: str = ""


class ImageAttachment(MediaAttachment, kw_only=True, tag="image", tag_field="kind"):
    """An image: a file, or the clipboard's."""


class AudioAttachment(MediaAttachment, kw_only=True, tag="audio", tag_field="kind"):
    """An audio file."""


Attachment = SelectionAttachment | ReferenceAttachment | FileAttachment | ImageAttachment | AudioAttachment


class PromptRefused(Exception):
    """The prompt cannot be sent as it is; the message says why, for the user."""


class BuiltPrompt(msgspec.Struct, kw_only=True):
    blocks: list[s.ContentBlock]
    #: How the prompt appears in the chat.
    shown: str


def parse_attachments(raw: object) -> list[Attachment]:
    """Attachments from Lua; an item without `kind` is a selection (what older callers send)."""
    items = raw if isinstance(raw, list) else []
    tagged = [
        {"kind": "selection", **item} if isinstance(item, dict) and "kind" not in item else item
        for item in items
    ]
    return msgspec.convert(tagged, list[Attachment])


def file_uri(path: str) -> str:
    return Path(path).as_uri()


def _media_payload(media: MediaAttachment, noun: str, types: dict[str, str]) -> tuple[str, str]:
    """The base64 data and mime type of `media`, read from its file when it has one."""
    if not media.path:
        if not media.data or not media.mime_type:
            raise PromptRefused(f"{noun} {media.name} has no data")
        return media.data, media.mime_type
    mime_type = media.mime_type or types.get(os.path.splitext(media.path)[1].lower())
    if mime_type is None:
        kinds = ", ".join(sorted(types))
        raise PromptRefused(f"{media.name} is not an {noun} acp.nvim can send ({kinds})")
    try:
        size = os.path.getsize(media.path)
        if size > MAX_MEDIA_BYTES:
            limit = MAX_MEDIA_BYTES // 1024
            raise PromptRefused(f"{noun} {media.name} is too large ({size // 1024} KiB, at most {limit} KiB)")
        data = Path(media.path).read_bytes()
    except OSError as err:
        raise PromptRefused(f"cannot read {noun} {media.name}: {err.strerror or err}") from None
    return base64.b64encode(data).decode("ascii"), mime_type


def _media_block(media: MediaAttachment) -> s.ContentBlock:
    if isinstance(media, AudioAttachment):
        data, mime_type = _media_payload(media, "audio file", AUDIO_TYPES)
        return s.ContentBlockAudio(data=data, mime_type=mime_type)
    data, mime_type = _media_payload(media, "image", IMAGE_TYPES)
    uri = file_uri(media.path) if media.path else None
    return s.ContentBlockImage(data=data, mime_type=mime_type, uri=uri)


def _selection_blocks(selection: SelectionAttachment, embedded_context: bool) -> list[s.ContentBlock]:
    if embedded_context:
        resource = s.TextResourceContents(uri=selection.uri, text=selection.text)
        return [s.ContentBlockResource(resource=resource)]
    # `resource_link` is always allowed; the text follows so the agent sees the lines either way.
    link = s.ContentBlockResourceLink(uri=selection.uri, name=selection.label, title=selection.label)
    quoted = f"{selection.label}:\n{fenced(selection.text, selection.filetype)}"
    return [link, s.ContentBlockText(text=quoted)]


def _file_link(mention: FileAttachment) -> s.ContentBlockResourceLink:
    import mimetypes

    mime_type, _ = mimetypes.guess_type(mention.path, strict=False)
    return s.ContentBlockResourceLink(uri=file_uri(mention.path), name=mention.name, mime_type=mime_type)


def prompt_content(
    text: str, attachments: list[Attachment], caps: s.PromptCapabilities, agent_name: str = "the agent"
) -> BuiltPrompt:
    """The user's text first (the `@path` mentions stay in it, so the agent reads where the user pointed),
    then one block (or two) per attachment in order. Raises `PromptRefused` for content the agent does
    not accept: images without `promptCapabilities.image`, audio without `promptCapabilities.audio`."""
    blocks: list[s.ContentBlock] = []
    refs: list[str] = []
    if text:
        blocks.append(s.ContentBlockText(text=text))
    for kind, accepted, noun, one in (
        (ImageAttachment, caps.image, "images", "image"),
        (AudioAttachment, caps.audio, "audio", "audio file"),
    ):
        refused = [a for a in attachments if isinstance(a, kind)]
        if refused and not accepted:
            names = ", ".join(media.name for media in refused)
            raise PromptRefused(
                f"{agent_name} does not accept {noun} ({names}); nothing was sent. "
                f"Remove the {one} (:AcpAttachClear) or mention the file without @."
            )
    seen: set[str] = set()
    for attachment in attachments:
        if isinstance(attachment, SelectionAttachment):
            blocks.extend(_selection_blocks(attachment, caps.embedded_context))
            refs.append("@" + attachment.label)
        elif isinstance(attachment, ReferenceAttachment):
            uri = lines_uri(attachment.path, attachment.start, attachment.end)
            label = attachment.label
            blocks.append(s.ContentBlockResourceLink(uri=uri, name=label, title=label))
            refs.append("@" + label)
        elif isinstance(attachment, FileAttachment):
            # The same file mentioned twice is linked once.
            if attachment.path in seen:
                continue
            seen.add(attachment.path)
            blocks.append(_file_link(attachment))
        else:
            blocks.append(_media_block(attachment))
            # Mentioned media already show as @name in the text; clipboard and :AcpAttach* ones do not.
            if "@" + attachment.name not in text:
                noun = "audio" if isinstance(attachment, AudioAttachment) else "image"
                refs.append(f"[{noun} {attachment.name}]")
    shown = "\n".join(part for part in [text, " ".join(refs)] if part)
    return BuiltPrompt(blocks=blocks, shown=shown)


def build_prompt(
    text: str,
    raw_attachments: object,
    agent: AgentConnection,
    refused: Callable[[str, str, list[JsonValue]], None],
) -> BuiltPrompt | None:
    """The one call a turn makes: the blocks to send, or None when there is nothing to send or the prompt
    was refused — then `refused(why, text, attachments)` tells the user and gives both back in the prompt."""
    try:
        attachments = parse_attachments(raw_attachments)
    except msgspec.ValidationError as err:
        refused(f"invalid attachment: {err}", text, given_back(raw_attachments))
        return None
    caps = agent.capabilities.prompt_capabilities or s.PromptCapabilities()
    try:
        built = prompt_content(text, attachments, caps, agent.display_name)
    except PromptRefused as err:
        refused(str(err), text, given_back(raw_attachments))
        return None
    return built if built.blocks else None


def given_back(raw_attachments: object) -> list[JsonValue]:
    """The attachments of a refused prompt as Lua sent them, to go back to its list: only its tables, since
    anything else in it was never an attachment."""
    items = raw_attachments if isinstance(raw_attachments, list) else []
    return [item for item in items if isinstance(item, dict)]

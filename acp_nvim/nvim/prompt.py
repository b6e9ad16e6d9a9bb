"""Prompt content from what the user typed plus the selections attached to it (`:AcpPrompt` with a range)."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from acp_nvim.protocol import schema as s


class Selection(msgspec.Struct, kw_only=True):
    """A range of lines from a buffer, as Lua sends it."""

    path: str
    start: int
    end: int
    text: str
    filetype: str = ""

    @property
    def label(self) -> str:
        name = os.path.basename(self.path) or self.path
        return f"{name}:{self.start}-{self.end}" if self.end != self.start else f"{name}:{self.start}"

    @property
    def uri(self) -> str:
        if os.path.isabs(self.path):
            return Path(self.path).as_uri() + f"#L{self.start}-L{self.end}"
        return self.path


def prompt_blocks(text: str, selections: list[Selection], embedded_context: bool) -> list[s.ContentBlock]:
    """The user's text, then each selection: an embedded `resource` when the agent accepts embedded context,
    else a `resource_link` (always allowed) followed by the text itself, so the agent sees it either way."""
    blocks: list[s.ContentBlock] = []
    if text:
        blocks.append(s.ContentBlockText(text=text))
    for selection in selections:
        if embedded_context:
            resource = s.TextResourceContents(uri=selection.uri, text=selection.text)
            blocks.append(s.ContentBlockResource(resource=resource))
            continue
        blocks.append(
            s.ContentBlockResourceLink(uri=selection.uri, name=selection.label, title=selection.label)
        )
        fence = "```"
        while fence in selection.text:
            fence += "`"
        quoted = f"{selection.label}:\n{fence}{selection.filetype}\n{selection.text}\n{fence}"
        blocks.append(s.ContentBlockText(text=quoted))
    return blocks


def shown_prompt(text: str, selections: list[Selection]) -> str:
    """How the prompt appears in the chat: the text and a reference per attached selection."""
    refs = [f"@{selection.label}" for selection in selections]
    return "\n".join([part for part in [text, " ".join(refs)] if part])

"""The stream's bulk read by its bytes (issue 31): consecutive plain text chunks of one session, decoded to
their texts alone.

A streaming agent writes each chunk of a message as the same bytes around its text (`{"jsonrpc":"2.0",
"method":"session/update","params":{"sessionId":"…","update":{"sessionUpdate":"agent_message_chunk",
"content":{"type":"text","text":` … `}}}}`). Once one such line has been decoded the typed way, its bytes
before and after the text's JSON string are a template: a later line that starts and ends with them and
holds exactly one JSON string in between is that notification with that text, nothing else; only the string
is decoded (msgspec checks its escapes and its UTF-8), and no Structs are made per line. A read whose lines
all fit one template is one `TextRun`; any other read, or one whose middle is not one string, takes the
typed decode (`jsonrpc/wire.py`'s `route_leading`), which also learns the templates.

Exactness: a template is learned only from a line whose decoded notification is the plain chunk alone (no
message id, `_meta` or annotations) whose text's JSON appears once in the line, and only once a probe line
(the template around a string of its own) decodes the typed way to the same notification with the probe's
text: the slot is then the text's value token, so any JSON string there decodes to that text and the rest
to what the template's line decoded to. `bench/stream_paths.py` and its test compare every update kind
through both paths.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from itertools import repeat
from operator import itemgetter
from typing import TypeAlias

import msgspec

from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

TextChunk: TypeAlias = s.SessionUpdateAgentMessageChunk | s.SessionUpdateAgentThoughtChunk
TEXT_CHUNKS: tuple[type[TextChunk], ...] = (
    s.SessionUpdateAgentMessageChunk,
    s.SessionUpdateAgentThoughtChunk,
)
# Templates kept per connection: an agent's message and thought chunks, a subagent's, a second session's.
MAX_TEMPLATES = 4
# Decoded as the probe's text: not likely in any line, and escapes that msgspec must resolve.
PROBE = '\x00acp.nvim probe "\u2028'

_text_of = msgspec.json.Decoder(str).decode
log = logging.getLogger("acp_nvim.client")


class TextRun(msgspec.Struct, gc=False):
    """`texts` as `session_id`'s consecutive `kind` chunks, each the plain text block alone: the same as
    `notifications()`, which is what the typed decode would have made of their lines."""

    session_id: str
    kind: type[TextChunk]
    texts: list[str]

    def notifications(self) -> list[u.SessionNotification]:
        kind, session_id = self.kind, self.session_id
        return [
            u.SessionNotification(session_id=session_id, update=kind(content=s.ContentBlockText(text=text)))
            for text in self.texts
        ]


class _Template(msgspec.Struct, frozen=True):
    head: bytes
    tail: bytes
    session_id: str
    kind: type[TextChunk]


class TextRunReader:
    """A connection's route's `leading`: a read of template lines as one `TextRun`, any other read typed."""

    def __init__(
        self,
        typed: Callable[[list[bytes]], list[object]],
        decode_line: Callable[[bytes], object],
    ) -> None:
        # `typed`: the route's batched typed decode of a read's leading lines; `decode_line`: one line's.
        self._typed = typed
        self._decode_line = decode_line
        self._templates: list[_Template] = []

    def leading(self, lines: list[bytes]) -> tuple[list[object], int]:
        """The params of the read's leading lines of the route and how many lines they are."""
        try:
            for template in self._templates:
                run = _run(template, lines)
                if run is not None:
                    return [run], len(lines)
        except Exception:
            # A bug of ours must not cost the stream: the typed decode takes the read.
            log.exception("text template reader failed; the read is decoded the typed way")
        params = self._typed(lines)
        if params and len(self._templates) < MAX_TEMPLATES:
            try:
                self._learn(lines[0], params[0])
                if len(params) > 1:
                    self._learn(lines[len(params) - 1], params[-1])
            except Exception:
                log.exception("text template not learned")
        return list(params), len(params)

    def _learn(self, line: bytes, notification: object) -> None:
        if not isinstance(notification, u.SessionNotification):
            return
        update = notification.update
        if not isinstance(update, TEXT_CHUNKS) or type(update) not in TEXT_CHUNKS:
            return
        kind, block, session_id = type(update), update.content, notification.session_id
        if type(block) is not s.ContentBlockText or notification != _chunk(session_id, kind, block.text):
            return
        encoded = msgspec.json.encode(block.text)
        if line.count(encoded) != 1:
            return
        at = line.index(encoded)
        head, tail = line[:at], line[at + len(encoded) :]
        template = _Template(head, tail, session_id, kind)
        if not tail or template in self._templates:
            return
        try:
            probed = self._decode_line(head + msgspec.json.encode(PROBE) + tail)
        except Exception:
            return
        # The probe's line is the same notification with the probe's text, and no request: the slot is the
        # text's value, whatever string it holds.
        expected = _chunk(session_id, kind, PROBE)
        if getattr(probed, "id", None) is msgspec.UNSET and getattr(probed, "params", None) == expected:
            self._templates.append(template)


def _chunk(session_id: str, kind: type[TextChunk], text: str) -> u.SessionNotification:
    return u.SessionNotification(session_id=session_id, update=kind(content=s.ContentBlockText(text=text)))


def _run(template: _Template, lines: list[bytes]) -> TextRun | None:
    """`lines` as a run of `template`'s chunk, or None when any of them is not one (C-level loops)."""
    head, tail = template.head, template.tail
    if not (
        all(map(bytes.startswith, lines, repeat(head))) and all(map(bytes.endswith, lines, repeat(tail)))
    ):
        return None
    # A line shorter than head and tail together gives a slice that is no JSON string: refused below.
    middle = itemgetter(slice(len(head), -len(tail)))
    try:
        texts = list(map(_text_of, map(middle, lines)))
    except msgspec.DecodeError:
        return None
    return TextRun(template.session_id, template.kind, texts)

"""The image and audio types acp.nvim sends to agents, by file extension: the one table of them.

It is data (`media_types.json` beside this module) because both halves need it at once: the host builds the
content blocks from it, and Lua (`lua/acp_nvim/ui/prompt/mentions.lua`) reads the same file to tell an
`@mention` of an image from a file link and to refuse `:AcpAttachImage` of something else right away, before
any host runs.
Nothing else lists media types.
"""

from __future__ import annotations

from pathlib import Path

import msgspec


class MediaTypes(msgspec.Struct, frozen=True):
    image: dict[str, str]
    audio: dict[str, str]


TABLE_PATH = Path(__file__).with_name("media_types.json")
_TABLE = msgspec.json.decode(TABLE_PATH.read_bytes(), type=MediaTypes)

#: Extension with its dot (".png") -> mime type.
IMAGE_TYPES = {f".{ext}": mime for ext, mime in _TABLE.image.items()}
AUDIO_TYPES = {f".{ext}": mime for ext, mime in _TABLE.audio.items()}

"""Media types have one owner, `acp_nvim/app/sessions/media_types.json`: what Lua calls an image or audio file
(an @mention, `:AcpAttachImage`) is exactly what the host sends as one, with the same mime type."""

from __future__ import annotations

from typing import Any

from acp_nvim.app.sessions.media_types import AUDIO_TYPES, IMAGE_TYPES

MEDIA_TYPE = "return { require('acp_nvim.ui.prompt').media_type(...) }"


def test_lua_and_the_host_name_the_same_media(nvim_clean: Any) -> None:
    for kind, table in (("image", IMAGE_TYPES), ("audio", AUDIO_TYPES)):
        for ext, mime in table.items():
            assert nvim_clean.exec_lua(MEDIA_TYPE, f"/x/shot{ext.upper()}") == [kind, mime]
    assert nvim_clean.exec_lua(MEDIA_TYPE, "/x/notes.txt") == []
    # Nothing Lua knows beyond the host's table.
    lua_table = nvim_clean.exec_lua(
        "local p = require('acp_nvim.ui.prompt') return { p.image_types, p.audio_types }"
    )
    assert lua_table == [
        {ext[1:]: mime for ext, mime in IMAGE_TYPES.items()},
        {ext[1:]: mime for ext, mime in AUDIO_TYPES.items()},
    ]

"""The options of the Neovim editor services, as `lua/acp_nvim/editor/init.lua` sends them from `setup()`.

They reach the host before every `acp_start` (same channel, so in order), which is what lets
`client_capabilities()` stay synchronous and still advertise exactly what the user left enabled.
"""

from __future__ import annotations

from typing import Literal

import msgspec

DEFAULT_MAX_READ_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_BUFFER_BYTES = 4 * 1024 * 1024


class EditorOptions(msgspec.Struct, kw_only=True, frozen=True):
    fs_read: bool = True
    fs_write: bool = True
    terminal: bool = True
    # Jump to what the agent reads or writes (in the last non-chat window).
    follow: bool = False
    max_read_bytes: int = DEFAULT_MAX_READ_BYTES
    # Largest write that loads a hidden buffer for a file no buffer holds; larger ones go straight to disk.
    max_buffer_bytes: int = DEFAULT_MAX_BUFFER_BYTES
    # Run BufWritePre/BufWritePost (formatters) on the agent's writes.
    autocmds: bool = False
    outside: Literal["ask", "deny", "allow"] = "ask"
    allow: list[str] = []
    deny: list[str] = []

"""The options of the Neovim editor services, as `lua/acp_nvim/services.lua` sends them from `setup()`.

Their names, types, allowed values and defaults have one owner: the declarative `defaults` and `rules` of
`lua/acp_nvim/config.lua`, which validates them at `setup()` and names a bad one there (before any host
runs). This Struct only types what crosses: it holds no defaults of the user's options, and what it has
before Lua's first message is closed (nothing advertised, nothing readable), which no agent ever sees since
the options reach the host before every `acp_start` (same channel, so in order). That is also what lets
`client_capabilities()` stay synchronous and still advertise exactly what the user left enabled.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class EditorOptions(msgspec.Struct, kw_only=True, frozen=True):
    fs_read: bool = False
    fs_write: bool = False
    terminal: bool = False
    # Jump to what the agent reads or writes (in the last non-chat window).
    follow: bool = False
    max_read_bytes: int = 0
    # Largest write that loads a hidden buffer for a file no buffer holds; larger ones go straight to disk.
    max_buffer_bytes: int = 0
    # Run BufWritePre/BufWritePost (formatters) on the agent's writes.
    autocmds: bool = False
    outside: Literal["ask", "deny", "allow"] = "deny"
    allow: list[str] = []
    deny: list[str] = []

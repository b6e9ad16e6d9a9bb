"""The options of the Neovim editor services, as `lua/acp_nvim/editor/init.lua` sends them from `setup()`: the
`capabilities`, `fs`, `sandbox` and `follow` parts of the normalized configuration, in its own shape.

Their names, types, allowed values and defaults have one owner: the declarative `defaults` and `rules` of
`lua/acp_nvim/config.lua`, which validates them at `setup()` and names a bad one there (before any host
runs). These Structs only type what crosses: they hold no defaults of the user's options, and what they have
before Lua's first message is closed (nothing advertised, nothing readable), which no agent ever sees since
the options reach the host before every `acp_start` (same channel, so in order). That is also what lets
`client_capabilities()` stay synchronous and still advertise exactly what the user left enabled.
"""

from __future__ import annotations

from typing import Literal

import msgspec


class CapabilityOptions(msgspec.Struct, frozen=True):
    fs_read: bool = False
    fs_write: bool = False
    terminal: bool = False


class FsOptions(msgspec.Struct, frozen=True):
    max_read_bytes: int = 0
    # Largest write that loads a hidden buffer for a file no buffer holds; larger ones go straight to disk.
    max_buffer_bytes: int = 0
    # Run BufWritePre/BufWritePost (formatters) on the agent's writes.
    autocmds: bool = False


class SandboxOptions(msgspec.Struct, frozen=True):
    outside: Literal["ask", "deny", "allow"] = "deny"
    # Absolute (expanded by Lua against Neovim's cwd when it sends them).
    allow: list[str] = []
    deny: list[str] = []


class EditorOptions(msgspec.Struct, kw_only=True, frozen=True):
    capabilities: CapabilityOptions = CapabilityOptions()
    fs: FsOptions = FsOptions()
    sandbox: SandboxOptions = SandboxOptions()
    # Jump to what the agent reads or writes (in the last non-chat window).
    follow: bool = False

    # The names the services read.

    @property
    def fs_read(self) -> bool:
        return self.capabilities.fs_read

    @property
    def fs_write(self) -> bool:
        return self.capabilities.fs_write

    @property
    def terminal(self) -> bool:
        return self.capabilities.terminal

    @property
    def max_read_bytes(self) -> int:
        return self.fs.max_read_bytes

    @property
    def max_buffer_bytes(self) -> int:
        return self.fs.max_buffer_bytes

    @property
    def autocmds(self) -> bool:
        return self.fs.autocmds

    @property
    def outside(self) -> Literal["ask", "deny", "allow"]:
        return self.sandbox.outside

    @property
    def allow(self) -> list[str]:
        return self.sandbox.allow

    @property
    def deny(self) -> list[str]:
        return self.sandbox.deny

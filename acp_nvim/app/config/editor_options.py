"""The options of the Neovim editor services (files, terminals, the sandbox, follow): the `capabilities`,
`fs`, `sandbox` and `follow` parts of the normalized configuration (`app/config/options.py`), the sandbox's
paths made absolute against Neovim's cwd when an agent starts (`for_start`).

What the services hold before the first start is closed (nothing advertised, nothing readable); no agent ever
sees it, since the options are set before every launch. That is also what lets `client_capabilities()` stay
synchronous and still advertise exactly what the user left enabled.
"""

from __future__ import annotations

import msgspec

from acp_nvim.app.config.options import CapabilityOptions, Config, FsOptions, SandboxOptions
from acp_nvim.app.config.presets import absolute
from acp_nvim.app.editor.sandbox_rules import OutsidePolicy

CLOSED_CAPABILITIES = CapabilityOptions(fs_read=False, fs_write=False, terminal=False)
CLOSED_FS = FsOptions(max_read_bytes=0, max_buffer_bytes=0, autocmds=False)
CLOSED_SANDBOX = SandboxOptions(outside="deny")


class EditorOptions(msgspec.Struct, kw_only=True, frozen=True):
    capabilities: CapabilityOptions = CLOSED_CAPABILITIES
    fs: FsOptions = CLOSED_FS
    sandbox: SandboxOptions = CLOSED_SANDBOX
    # Jump to what the agent reads or writes (in the last non-chat window).
    follow: bool = False

    @classmethod
    def for_start(cls, config: Config, cwd: str) -> EditorOptions:
        sandbox = config.sandbox
        return cls(
            capabilities=config.capabilities,
            fs=config.fs,
            sandbox=SandboxOptions(
                outside=sandbox.outside,
                allow=[absolute(path, cwd) for path in sandbox.allow],
                deny=[absolute(path, cwd) for path in sandbox.deny],
            ),
            follow=config.follow,
        )

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
        return int(self.fs.max_read_bytes)

    @property
    def max_buffer_bytes(self) -> int:
        return int(self.fs.max_buffer_bytes)

    @property
    def autocmds(self) -> bool:
        return self.fs.autocmds

    @property
    def outside(self) -> OutsidePolicy:
        return self.sandbox.outside

    @property
    def allow(self) -> list[str]:
        return self.sandbox.allow

    @property
    def deny(self) -> list[str]:
        return self.sandbox.deny

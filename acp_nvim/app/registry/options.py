"""The ACP Registry as one start, picker or :AcpAgents uses it: `opts.registry` as the host validated it
(`RegistrySettings` of `app/config/options.py`, the options' one owner) with the folders Neovim keeps it in.

Apart from the registry's code (`catalog.py`, `agents.py` and what they import), which the host loads only
when the registry is used: a start of a configured agent never pays for urllib, ssl and the archive modules.
"""

from __future__ import annotations

from pathlib import Path

import msgspec


class RegistryOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`opts.registry` in force when the request came, with Neovim's stdpath folders (the plugin's own
    subfolder of each)."""

    url: str
    # Seconds after which the cached registry is fetched again.
    max_age: float
    enabled: bool
    # stdpath("cache")/acp_nvim: the cached list.
    cache_dir: str
    # stdpath("data")/acp_nvim: the installed agents (its agents/ folder).
    data_dir: str

    @property
    def agents_dir(self) -> Path:
        return Path(self.data_dir) / "agents"

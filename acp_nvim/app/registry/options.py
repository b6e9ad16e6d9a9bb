"""The ACP Registry as one start, picker or :AcpAgents uses it: `opts.registry` as the host validated it
(`RegistrySettings` of `app/config/options.py`, the options' one owner) with the folders Neovim keeps it in.

Apart from the registry's code (`catalog.py`, `agents.py` and what they import), which the host loads only
when the registry is used: a start of a configured agent never pays for urllib, ssl and the archive modules.
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

_ID = re.compile(r"[a-z][a-z0-9-]{0,63}")


def valid_id(value: str) -> bool:
    """Whether `value` can be a registry agent's id: one path component, lowercase ASCII."""
    return _ID.fullmatch(value) is not None


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
    # The agents (ids) the user runs on their preview channel (`opts.registry.preview`).
    preview: list[str] = []

    def channel(self, agent_id: str) -> str:
        """The release channel the user chose for `agent_id`: "preview" or "stable"."""
        return "preview" if agent_id in self.preview else "stable"

    @property
    def agents_dir(self) -> Path:
        return Path(self.data_dir) / "agents"

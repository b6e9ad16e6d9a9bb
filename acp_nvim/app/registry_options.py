"""`opts.registry` as the host receives it: the options of the ACP Registry, with the folders Lua knows.

Apart from the registry's code (`catalog.py`, `registry_agents.py`), which the host loads only when the
registry is used: a start of a configured agent never pays for urllib, ssl and the archive modules.
"""

from __future__ import annotations

from pathlib import Path

import msgspec


class OptionsError(ValueError):
    """The options Lua sent do not decode (a bug on one side: Lua validated them)."""


class RegistryOptions(msgspec.Struct, frozen=True, kw_only=True):
    """`opts.registry` as Lua validated it (its defaults are the options' own, in lua/acp_nvim/config.lua),
    with the folders Lua knows (stdpath)."""

    url: str
    # Seconds after which the cached registry is fetched again.
    max_age: float
    enabled: bool
    cache_dir: str
    data_dir: str

    @property
    def agents_dir(self) -> Path:
        return Path(self.data_dir) / "agents"


def decode_options(raw: object) -> RegistryOptions:
    try:
        return msgspec.convert(raw, RegistryOptions)
    except msgspec.ValidationError as err:
        raise OptionsError(f"invalid registry options: {err}") from None

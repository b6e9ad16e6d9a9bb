"""The registry as last fetched, in one file with its fetch time (stdpath("cache")/acp_nvim/registry.json).

It is what the plugin uses when the network is not there, and what tells whether a fetch is due. A cache
that cannot be read (removed, truncated, from an older format) is as good as none: the next fetch rewrites it.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import msgspec

from acp_nvim.client.acp_registry import Registry

log = logging.getLogger("acp_nvim.registry_cache")

FILE_NAME = "registry.json"


class Cached(msgspec.Struct, frozen=True, kw_only=True):
    url: str
    # Seconds since the epoch.
    fetched_at: float
    registry: Registry

    def age(self, now: float) -> float:
        return max(0.0, now - self.fetched_at)


_decoder = msgspec.json.Decoder(Cached)


def path(cache_dir: str | Path) -> Path:
    return Path(cache_dir) / FILE_NAME


def read(cache_dir: str | Path) -> Cached | None:
    try:
        return _decoder.decode(path(cache_dir).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError) as err:
        log.warning("the registry cache %s cannot be used: %s", path(cache_dir), err)
        return None


def write(cache_dir: str | Path, cached: Cached) -> None:
    """Replaces the cache at once (a temp file renamed over it): a reader never sees half a file."""
    target = path(cache_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".registry-", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.json.encode(cached))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""The registry as last fetched, in one file with its fetch time (stdpath("cache")/acp_nvim/registry.json).

It is what the plugin uses when the network is not there, and what tells whether a fetch is due. A cache
that cannot be read (removed, truncated, from an older format) is as good as none: the next fetch rewrites it.
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from pathlib import Path

import msgspec

from acp_nvim.app.registry.entries import Registry

log = logging.getLogger("acp_nvim.registry_cache")

FILE_NAME = "registry.json"
# The registry itself is fetched up to 16 MiB (app/registry/catalog.py); its cache holds a little more.
MAX_CACHE_BYTES = 32 * 1024 * 1024


class NotReadable(OSError):
    """Not a regular file, or larger than allowed."""


def read_regular(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`. Opened non-blocking and checked before it is read: a FIFO
    or a device put where a cache or an install record should be must not hold the thread reading it
    (:checkhealth reads them on Neovim's)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotReadable(f"{path} is not a regular file")
        if st.st_size > max_bytes:
            raise NotReadable(f"{path} is larger than {max_bytes} bytes")
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise NotReadable(f"{path} is larger than {max_bytes} bytes")
        return data
    finally:
        os.close(fd)


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
        return _decoder.decode(read_regular(path(cache_dir), MAX_CACHE_BYTES))
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

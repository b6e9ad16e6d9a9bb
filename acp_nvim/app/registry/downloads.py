"""Downloads with the standard library (urllib), for the registry and its agents' archives.

Only HTTPS reaches the network; plain http:// is allowed for loopback addresses only (a local mirror, the
tests), and file:// or a local path reads the disk. A redirect must satisfy the same rule. These functions
block: callers run them in a worker thread (`anyio.to_thread.run_sync`), never on Neovim's loop or the host's.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.client import HTTPMessage
from pathlib import Path
from typing import IO

CHUNK = 64 * 1024
TIMEOUT = 30.0
USER_AGENT = "acp.nvim"

# Bytes so far, and the total when the server said it.
Progress = Callable[[int, int | None], None]


class DownloadError(Exception):
    """A URL that may not be used, or a download that failed: the message says which and why."""


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def checked_url(url: str) -> str:
    """`url` as urllib takes it (a local path becomes a file:// URL); `DownloadError` when it is not HTTPS,
    loopback http://, file:// or a path."""
    if url.startswith(("/", "~")):
        return Path(os.path.expanduser(url)).resolve().as_uri()
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme == "https" and parsed.hostname:
        return url
    if parsed.scheme == "file":
        return url
    if parsed.scheme == "http" and parsed.hostname and _loopback(parsed.hostname):
        return url
    if parsed.scheme == "http":
        raise DownloadError(f"refusing {url}: plain http:// only for loopback addresses (use https://)")
    raise DownloadError(f"refusing {url}: only https://, loopback http://, file:// URLs and paths")


class _CheckedRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        checked_url(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_opener = urllib.request.build_opener(_CheckedRedirects())


def _stream(url: str, sink: Callable[[bytes], None], max_bytes: int, progress: Progress | None) -> int:
    request = urllib.request.Request(checked_url(url), headers={"User-Agent": USER_AGENT})
    try:
        with _opener.open(request, timeout=TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if total is not None and total > max_bytes:
                raise DownloadError(f"{url} is {total} bytes, more than the {max_bytes} allowed")
            received = 0
            while True:
                chunk = response.read(CHUNK)
                if not chunk:
                    break
                received += len(chunk)
                if received > max_bytes:
                    raise DownloadError(f"{url} is more than the {max_bytes} bytes allowed")
                sink(chunk)
                if progress is not None:
                    progress(received, total)
            if total is not None and received != total:
                raise DownloadError(f"download of {url} was cut short: {received} of {total} bytes")
            return received
    except DownloadError:
        raise
    except urllib.error.HTTPError as err:
        raise DownloadError(f"cannot fetch {url}: HTTP {err.code} {err.reason}") from None
    except urllib.error.URLError as err:
        raise DownloadError(f"cannot fetch {url}: {err.reason}") from None
    except (OSError, ValueError) as err:
        # http.client's IncompleteRead (a ValueError's cousin under OSError-less types) lands here too.
        raise DownloadError(f"cannot fetch {url}: {err}") from None
    except Exception as err:
        raise DownloadError(f"download of {url} failed: {type(err).__name__}: {err}") from None


def fetch(url: str, max_bytes: int) -> bytes:
    """The whole body at `url` (at most `max_bytes`)."""
    parts: list[bytes] = []
    _stream(url, parts.append, max_bytes, None)
    return b"".join(parts)


def download(url: str, dest: Path, max_bytes: int, progress: Progress | None = None) -> tuple[int, str]:
    """Writes the body at `url` to `dest`; its size and SHA-256 (hex)."""
    digest = hashlib.sha256()
    with dest.open("wb") as out:

        def sink(chunk: bytes) -> None:
            digest.update(chunk)
            out.write(chunk)

        size = _stream(url, sink, max_bytes, progress)
    return size, digest.hexdigest()

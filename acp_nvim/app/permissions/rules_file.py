"""The file the project rules are kept in (`stdpath("data")/acp_nvim/permissions.json`), by project root.

Read afresh before each use (another Neovim may have changed it), off the host's event loop, and only if it
is a regular file of at most MAX_FILE_BYTES: a FIFO, a device, a symlink or a huge file is "a bad file" (one
message, no rules), never a wait. Written through the host's atomic writer (`client/files/disk.py`): a temp
file of an unpredictable name created exclusively, a rename over the file; a symlink in the file's place is
refused, never written through.
"""

from __future__ import annotations

import os

import anyio
import msgspec

from acp_nvim.app.permissions.rules import Rule, RuleError, check
from acp_nvim.client.files import disk

FILE_VERSION = 1
# Thousands of rules fit; more is not a file this plugin wrote.
MAX_FILE_BYTES = 1024 * 1024


class _File(msgspec.Struct, forbid_unknown_fields=True):
    version: int
    # Project root (resolved) -> its rules.
    projects: dict[str, list[Rule]] = {}


_decoder = msgspec.json.Decoder(_File)


def decode(data: bytes) -> dict[str, list[Rule]]:
    try:
        parsed = _decoder.decode(data)
    except msgspec.ValidationError as err:
        raise RuleError(f"not a rules file: {err}") from None
    except msgspec.DecodeError as err:
        raise RuleError(f"not valid JSON: {err}") from None
    if parsed.version != FILE_VERSION:
        raise RuleError(f"unknown version {parsed.version} (expected {FILE_VERSION})")
    return {root: [check(rule, stored=True) for rule in rules] for root, rules in parsed.projects.items()}


def encode(projects: dict[str, list[Rule]]) -> bytes:
    kept = {root: rules for root, rules in sorted(projects.items()) if rules}
    return msgspec.json.format(msgspec.json.encode(_File(version=FILE_VERSION, projects=kept)), indent=2)


def _read(path: str) -> dict[str, list[Rule]]:
    try:
        text = disk.read_text(path, MAX_FILE_BYTES)
    except disk.ReadRefused as err:
        if not os.path.lexists(path):
            return {}
        if os.path.islink(path):
            raise RuleError(f"{path} is a symlink, not a regular file") from None
        raise RuleError(err.message) from None
    try:
        return decode(text.encode())
    except RuleError as err:
        raise RuleError(f"{path}: {err}") from None


def _write(path: str, data: bytes) -> None:
    folder, name = os.path.split(path)
    # The data folder may be reached through the user's own symlinks; from its real path on, nothing is
    # followed.
    try:
        os.makedirs(folder, exist_ok=True)
        disk.write_atomically(os.path.join(os.path.realpath(folder), name), data)
    except (disk.PathChanged, disk.NotRegular) as err:
        raise RuleError(str(err)) from None
    except OSError as err:
        raise RuleError(f"cannot write {path}: {err.strerror}") from None


class RuleFile:
    def __init__(self, path: str | None = None) -> None:
        self.path = path

    async def load(self) -> dict[str, list[Rule]]:
        if self.path is None:
            return {}
        return await anyio.to_thread.run_sync(_read, self.path)

    async def save(self, projects: dict[str, list[Rule]]) -> None:
        if self.path is None:
            raise RuleError("no place to keep project rules (the host was not told Neovim's data directory)")
        await anyio.to_thread.run_sync(_write, self.path, encode(projects))

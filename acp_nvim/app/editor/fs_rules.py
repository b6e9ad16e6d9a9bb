"""What an agent's `fs/*` request may ask, and the error it gets otherwise: the one owner of these decisions.

The editor carries the requests out and reports facts (no buffer holds the file, the path changed since the
check, a FIFO is there, the buffer's file changed on disk, ...); this module decides which of them are the
agent's errors, with which JSON-RPC code, message and data. Paths are validated by `sandbox_rules.validate`
(the same rules as the sandbox's), text by the rules here: exactly valid UTF-8, no NUL byte, within the byte
limit. Neovim-free: the editor's facts arrive as plain values.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from acp_nvim.app.editor.sandbox_rules import PathRefused, validate
from acp_nvim.client.files.disk import NotRegular, PathChanged
from acp_nvim.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError

# The facts the editor reports (`lua/acp_nvim/editor/fs/init.lua` names them).
PATH_CHANGED = "path_changed"
TOO_LARGE = "too_large"
NOT_REGULAR = "not_regular"
CHANGED_ON_DISK = "changed_on_disk"
NOT_MODIFIABLE = "not_modifiable"
READONLY = "readonly"
LOAD_FAILED = "load_failed"
WRITE_FAILED = "write_failed"
CHANGED_SINCE_CHECK = "changed_since_check"


def uri_of(path: str) -> str:
    return Path(path).as_uri()


def checked_path(path: object) -> str:
    """The path of a request to the editor, or the agent's -32602: the sandbox's own rules."""
    try:
        return validate(path)
    except PathRefused as refused:
        raise RpcError(INVALID_PARAMS, refused.message, {"reason": refused.reason}) from None


def check_slice(line: object, limit: object) -> None:
    """`line` >= 1 and `limit` >= 0 when given (the generated types accept any integer)."""
    for name, value, least in (("line", line, 1), ("limit", limit, 0)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise RpcError(INVALID_PARAMS, f"{name} must be an integer >= {least}")


def content_bytes(path: str, content: str) -> bytes:
    """The bytes an agent's write puts in `path`: text without NUL bytes, exactly encodable as UTF-8."""
    if "\0" in content:
        raise RpcError(INVALID_PARAMS, f"refusing to write binary content (NUL byte) to {path}")
    try:
        return content.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (JSON allows "\ud800"): no file holds that as UTF-8.
        raise RpcError(INVALID_PARAMS, f"the content for {path} is not valid UTF-8 text") from None


def too_large(path: str, size: int, max_bytes: int) -> RpcError:
    return RpcError(INVALID_PARAMS, f"{path} is too large to read: {size} bytes, the limit is {max_bytes}")


def buffer_text(path: str, value: object) -> str:
    """A buffer's text as the agent gets it: exactly valid UTF-8 without NUL bytes, never half-decoded."""
    text: str | None = None
    if isinstance(value, bytes):
        with contextlib.suppress(UnicodeDecodeError):
            text = value.decode("utf-8")
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
            text = value
        except UnicodeEncodeError:
            # pynvim decodes with surrogateescape: a surrogate means the bytes were not UTF-8.
            pass
    if text is None:
        raise RpcError(INVALID_PARAMS, f"{path} is not valid UTF-8 text")
    if "\0" in text:
        raise RpcError(INVALID_PARAMS, f"{path} is binary (contains NUL bytes)")
    return text


def _path_changed(path: str, action: str, detail: str | None) -> RpcError:
    # The sandbox refuses a path leading elsewhere with -32602; a path that leads elsewhere since is the same.
    why = detail or "it no longer leads where it was checked"
    return RpcError(
        INVALID_PARAMS,
        f"refusing to {action} {path}: {why}",
        {"uri": uri_of(path), "reason": "path_changed"},
    )


def read_refusal(
    path: str, fact: str | None, detail: str | None, size: int | None, max_bytes: int
) -> RpcError:
    """The agent's error for a read the editor did not answer, from the fact it reported."""
    if fact == PATH_CHANGED:
        return _path_changed(path, "read", detail)
    if fact == TOO_LARGE:
        return too_large(path, size or 0, max_bytes)
    return RpcError(INTERNAL_ERROR, f"cannot read {path}: {detail or fact or 'no answer from Neovim'}")


def changed_on_disk_message(path: str, detail: str | None) -> str:
    why = detail or "changed on disk"
    return f"{path} {why}; not overwriting it with the agent's write. Reload (:e) or save (:w) it first."


def write_refusal(path: str, fact: str | None, detail: str | None, kind: str | None) -> RpcError:
    """The agent's error for a write the editor did not carry out, from the fact it reported."""
    uri = {"uri": uri_of(path)}
    if fact == PATH_CHANGED:
        return _path_changed(path, "write", detail)
    if fact == NOT_REGULAR:
        if kind == "directory":
            return RpcError(INVALID_PARAMS, f"{path} is a directory")
        return RpcError(INVALID_PARAMS, f"{path} is not a regular file ({kind}); refusing to write it")
    if fact == CHANGED_ON_DISK:
        return RpcError(
            INTERNAL_ERROR, changed_on_disk_message(path, detail), {**uri, "reason": "changed_on_disk"}
        )
    if fact == NOT_MODIFIABLE:
        return RpcError(INTERNAL_ERROR, f"the buffer of {path} is not modifiable")
    if fact == READONLY:
        return RpcError(INTERNAL_ERROR, f"the buffer of {path} is read-only")
    if fact == CHANGED_SINCE_CHECK:
        # Found right before the temp file or the rename: refused like a path the check refuses.
        return RpcError(INVALID_PARAMS, detail or f"cannot write {path}", {**uri, "reason": "path_changed"})
    if fact in (LOAD_FAILED, WRITE_FAILED):
        return RpcError(INTERNAL_ERROR, detail or f"cannot write {path}", uri)
    return RpcError(INTERNAL_ERROR, f"cannot write {path}: {detail or fact or 'no answer from Neovim'}", uri)


def disk_write_refusal(path: str, err: OSError | PathChanged | NotRegular) -> RpcError:
    """The agent's error for a write the host itself did not carry out (`disk.write_atomically`)."""
    uri = {"uri": uri_of(path)}
    if isinstance(err, PathChanged):
        return RpcError(INVALID_PARAMS, str(err), {**uri, "reason": "path_changed"})
    if isinstance(err, NotRegular):
        return RpcError(INVALID_PARAMS, str(err), uri)
    return RpcError(INTERNAL_ERROR, f"cannot write {path}: {err.strerror or err}", uri)

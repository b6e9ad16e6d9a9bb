"""The host's decisions on an agent's fs requests (`app/editor/fs_rules.py`): what is refused before Neovim is
asked, and the JSON-RPC error each fact Lua reports becomes."""

from __future__ import annotations

import pytest

from acp_nvim.app.editor import fs_rules
from acp_nvim.jsonrpc import RpcError


def refused(call: object, *args: object) -> RpcError:
    with pytest.raises(RpcError) as err:
        call(*args)  # type: ignore[operator]
    return err.value


def test_requests_are_validated_before_neovim_is_asked() -> None:
    assert refused(fs_rules.checked_path, "rel.txt").data == {"reason": "invalid_path"}
    assert "NUL" in refused(fs_rules.checked_path, "/a\0b").message
    assert refused(fs_rules.check_slice, 0, None).message == "line must be an integer >= 1"
    assert refused(fs_rules.check_slice, None, -1).message == "limit must be an integer >= 0"
    assert refused(fs_rules.check_slice, True, None).code == -32602
    fs_rules.check_slice(1, 0)
    assert "NUL byte" in refused(fs_rules.content_bytes, "/f", "a\0b").message
    # JSON can carry a lone surrogate ("\ud800"); no file holds that as UTF-8.
    assert "not valid UTF-8" in refused(fs_rules.content_bytes, "/f", "a\ud800").message
    assert fs_rules.content_bytes("/f", "caf\u00e9") == "caf\u00e9".encode()


def test_a_buffer_text_is_exactly_utf8_without_nul() -> None:
    assert fs_rules.buffer_text("/f", "caf\u00e9\n") == "caf\u00e9\n"
    assert fs_rules.buffer_text("/f", "caf\u00e9".encode()) == "caf\u00e9"
    # pynvim's surrogate escape of a byte that was not UTF-8.
    assert "not valid UTF-8" in refused(fs_rules.buffer_text, "/f", "caf\udce9").message
    assert "binary" in refused(fs_rules.buffer_text, "/f", "a\0b").message


@pytest.mark.parametrize(
    ("fact", "kind", "code", "words"),
    [
        ("path_changed", None, -32602, "refusing to write /p/f: swapped"),
        ("not_regular", "directory", -32602, "/p/f is a directory"),
        ("not_regular", "fifo", -32602, "is not a regular file (fifo)"),
        ("changed_on_disk", None, -32603, "not overwriting it"),
        ("not_modifiable", None, -32603, "not modifiable"),
        ("readonly", None, -32603, "read-only"),
        ("changed_since_check", None, -32602, "swapped"),
        ("write_failed", None, -32603, "swapped"),
        ("something new", None, -32603, "cannot write /p/f"),
    ],
)
def test_each_write_fact_has_its_error(fact: str, kind: str | None, code: int, words: str) -> None:
    err = fs_rules.write_refusal("/p/f", fact, "swapped", kind)
    assert err.code == code and words in err.message, err.message
    if fact in ("path_changed", "changed_since_check"):
        assert err.data == {"uri": "file:///p/f", "reason": "path_changed"}


def test_each_read_fact_has_its_error() -> None:
    changed = fs_rules.read_refusal("/p/f", "path_changed", "now a symlink", None, 10)
    assert (changed.code, changed.data["reason"]) == (-32602, "path_changed")
    assert changed.message == "refusing to read /p/f: now a symlink"
    large = fs_rules.read_refusal("/p/f", "too_large", None, 20, 10)
    assert (large.code, large.message) == (-32602, "/p/f is too large to read: 20 bytes, the limit is 10")

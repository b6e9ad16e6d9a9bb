"""The one way the generators write their files or, with `--check`, say which are stale (`scripts/test` runs
every generator so; a stale file fails the test command)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path


def write_or_check(outputs: Mapping[Path, str], check: bool, stale: Callable[[Path], str]) -> int:
    """Writes each file's text; with `check`, writes nothing and prints `stale(path)` for each file whose text
    differs (or that is missing), returning 1 when there is one."""
    if check:
        behind = [
            path for path, text in outputs.items() if not path.exists() or path.read_text("utf-8") != text
        ]
        for path in behind:
            print(stale(path), file=sys.stderr)
        return 1 if behind else 0
    for path, text in outputs.items():
        path.write_text(text, encoding="utf-8")
    return 0

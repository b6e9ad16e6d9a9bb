"""A clone with nothing beside it is the whole project: no file of the repository reaches outside it for the
workspace's shared notes (``../shared``), which someone who clones the project does not have."""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.conftest import ROOT

# A relative path up into a sibling folder, a path join with a "shared" component (ROOT.parent / "shared"),
# or the absolute path of the workspace's copy.
OUTSIDE = re.compile(r"\.\./shared\b|[\"']shared[\"']|/work/shared\b")

# Not the project's files: dependencies, caches and build output that set-up and tests create.
IGNORED_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}

THIS_FILE = Path(__file__).resolve().relative_to(ROOT)  # names the patterns it looks for


def repository_files() -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(ROOT):
        # Pruned in place so the walk never descends into the virtual environment or node_modules.
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and not d.endswith(".egg-info")]
        files.extend(Path(folder, name).relative_to(ROOT) for name in names)
    return sorted(files)


def test_no_file_of_the_repository_reads_the_workspace_beside_it() -> None:
    files = repository_files()
    scanned = {file.parts[0] for file in files}
    # The scan must see the code it guards, or it would pass by finding nothing.
    assert {"acp_nvim", "lua", "tests", "scripts", "tools", "bench", ".ci"} <= scanned, scanned
    offenders = []
    for relative in files:
        if relative == THIS_FILE:
            continue
        text = (ROOT / relative).read_bytes().decode("utf-8", "replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{relative}:{number}: {line.strip()}")
    assert offenders == []

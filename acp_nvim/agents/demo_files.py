"""What the demo agent reads and writes of the project: the file it reads, the one it edits, and how."""

from __future__ import annotations

from pathlib import Path

# Larger files are not worth a demo read (and would flood the chat).
MAX_DEMO_FILE_BYTES = 256 * 1024
EDIT_CANDIDATES = ("hello.py", "main.py")
COMMENT_PREFIX = {".py": "#", ".sh": "#", ".toml": "#", ".yaml": "#", ".yml": "#", ".lua": "--"}
COMMENT_PREFIX |= {".js": "//", ".ts": "//", ".c": "//", ".rs": "//", ".go": "//"}


def excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _visible_files(cwd: Path) -> list[Path]:
    try:
        entries = sorted(cwd.iterdir())
    except OSError:
        return []
    return [p for p in entries if not p.name.startswith(".") and p.is_file()]


def pick_read_target(cwd: Path) -> Path | None:
    readme = cwd / "README.md"
    if readme.is_file():
        return readme
    for path in _visible_files(cwd):
        if path.stat().st_size <= MAX_DEMO_FILE_BYTES:
            return path
    return None


def pick_edit_target(cwd: Path, read_target: Path | None) -> Path:
    for name in EDIT_CANDIDATES:
        if (cwd / name).is_file():
            return cwd / name
    for path in _visible_files(cwd):
        if path != read_target and path.suffix in COMMENT_PREFIX:
            return path
    # Nothing suitable: the demo proposes a new file rather than touching the user's documents.
    return cwd / "acp_demo.txt"


def edited(path: Path, old: str | None, prompt: str) -> str:
    note = f'Edited by the acp.nvim demo agent (you said: "{excerpt(prompt, 40)}")'
    if old is None:
        return note + "\n"
    prefix = COMMENT_PREFIX.get(path.suffix)
    if prefix is None:
        return old + ("" if old.endswith("\n") or not old else "\n") + note + "\n"
    return f"{prefix} {note}\n{old}"

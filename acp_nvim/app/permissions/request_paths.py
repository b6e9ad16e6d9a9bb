"""What a permission request names, read from its `rawInput` as the agents send it, for the permission rules:
the paths (every one a rule must check), whether some may be hidden from us, and the command it runs.

The shapes seen in the agents' sources: claude-agent-acp's tool inputs (`file_path`, `notebook_path`, `path`,
`command`, `run_in_background`, …), codex-acp's approval events (`changes`: a map of path to change with an
optional `move_path`; `grant_root`; `command` as argv with `cwd`, `additional_permissions`,
`network_approval_context`), opencode's permission metadata (`filepath`/`filePath`, `files[]` with `filePath`
and `movePath`, `parentDir`, `directories`, `workdir`, `diff`), and patches (`*** Update File: …`, unified
diff headers) inside any text. What is not understood is never taken as "names nothing": an unknown key whose
value looks like a path is a path to check, and a shape that cannot be read is `unseen`.
"""

from __future__ import annotations

import re

from acp_nvim.client.session import shell

# Keys whose string values are paths (relative ones against the session's cwd), alone or in lists.
PATH_KEYS = frozenset(
    {
        "file_path", "filePath", "filepath", "path", "paths", "notebook_path", "notebookPath", "target",
        "target_file", "source", "destination", "dest", "dst", "src", "old_path", "new_path", "oldPath",
        "newPath", "from", "to", "move_path", "movePath", "grant_root", "parentDir", "directories",
        "directory", "dir", "files", "file", "cwd", "workdir", "relativePath", "relative_path",
    }
)  # fmt: skip
# Other keys whose names say they hold a path.
_PATHISH_KEY = re.compile(r"path|file|dir|folder|root|dest|target|cwd|location", re.IGNORECASE)
# Maps from path to what is done there (codex-acp's `changes`).
PATH_MAP_KEYS = frozenset({"changes"})
# Text that is a file's content or a message, never a path, and not a patch naming files.
TEXT_KEYS = frozenset(
    {
        "content", "old_string", "new_string", "oldString", "newString", "old_text", "new_text", "oldText",
        "newText", "new_source", "newSource", "file_text", "old_str", "new_str", "insert_text",
        "description", "prompt", "query", "pattern", "reason", "title", "explanation", "message", "plan",
        "justification", "text", "activeForm",
    }
)  # fmt: skip
URL_KEYS = frozenset({"url", "uri"})
# A command's rawInput: what names the command, and the keys that change nothing of how it runs (any other
# key with a value, `run_in_background`, `env`, `additional_permissions`, … means the rule cannot judge it).
COMMAND_KEYS = ("command", "cmd")
HARMLESS_COMMAND_KEYS = frozenset(
    {
        "description", "timeout", "timeout_ms", "timeoutMs", "call_id", "callId", "turn_id", "approval_id",
        "reason", "parsed_cmd", "available_decisions", "proposed_execpolicy_amendment",
        "proposed_network_policy_amendments", "justification", "title", "cwd", "workdir",
    }
)  # fmt: skip
MAX_DEPTH = 32
MAX_PATHS = 1000
MAX_TEXT_CHARS = 1024 * 1024

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.MULTILINE)
_GIT_HEADER = re.compile(r"^diff --git (\S+) (\S+)$|^(?:rename|copy) (?:from|to) (.+)$", re.MULTILINE)
_UNIFIED_HEADER = re.compile(r"^--- ([^\t\n]+)[^\n]*\n\+\+\+ ([^\t\n]+)[^\n]*\n@@", re.MULTILINE)


class Named:
    """The paths a request names (as written) and why some may be unseen (None: all were read)."""

    __slots__ = ("paths", "unseen")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.unseen: str | None = None

    def add(self, path: str) -> None:
        if len(self.paths) >= MAX_PATHS:
            self.unseen = f"more than {MAX_PATHS} paths"
        elif path and path != "/dev/null":
            self.paths.append(path.removeprefix("file://"))


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and (
        text.startswith(("/", "~", "./", "../", "file:")) or text == ".." or "/../" in text
    )


def _patch_paths(text: str, named: Named) -> None:
    if "\n" not in text:
        return
    for match in _PATCH_FILE.finditer(text):
        named.add((match.group(1) or match.group(2)).strip())
    headers = [group for match in _GIT_HEADER.finditer(text) for group in match.groups() if group is not None]
    headers += [group for match in _UNIFIED_HEADER.finditer(text) for group in match.groups()]
    for header in headers:
        path = header.strip()
        named.add(path)
        if path.startswith(("a/", "b/")):
            # git's a/ and b/ prefixes: the path without them is checked too.
            named.add(path[2:])


def _path_value(value: object, named: Named, depth: int) -> None:
    if isinstance(value, str):
        named.add(value)
    elif isinstance(value, list):
        for entry in value:
            _path_value(entry, named, depth + 1)
    elif isinstance(value, dict):
        before = len(named.paths)
        _walk(value, "", named, depth + 1)
        if len(named.paths) == before:
            named.unseen = f"a path of an unknown shape: {value!r}"[:200]
    elif value is not None and not isinstance(value, bool):
        named.unseen = f"a path of an unknown shape: {value!r}"[:200]


def _walk(value: object, key: str, named: Named, depth: int) -> None:
    if depth > MAX_DEPTH:
        named.unseen = "nested too deeply"
    elif isinstance(value, dict):
        for name, entry in value.items():
            if name in TEXT_KEYS or name in COMMAND_KEYS:
                # A command's paths are its words (permission_rules.facts_of).
                continue
            if name in PATH_MAP_KEYS and isinstance(entry, dict):
                for path, change in entry.items():
                    named.add(path)
                    _walk(change, "", named, depth + 1)
            elif name in PATH_KEYS or _PATHISH_KEY.search(name):
                _path_value(entry, named, depth)
            else:
                _walk(entry, name, named, depth + 1)
    elif isinstance(value, list):
        for entry in value:
            _walk(entry, key, named, depth + 1)
    elif isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            named.unseen = "a text too large to read for paths"
        elif key in URL_KEYS:
            if value.startswith("file:"):
                named.add(value)
        else:
            _patch_paths(value, named)
            if _looks_like_path(value):
                named.add(value)


def named_paths(raw_input: object) -> Named:
    """The paths `raw_input` names; `unseen` says why some cannot be read (a shape that is not an object)."""
    named = Named()
    if raw_input is None:
        return named
    if not isinstance(raw_input, dict):
        named.unseen = "rawInput of an unknown shape"
        return named
    _walk(raw_input, "", named, 0)
    return named


def names_command(raw_input: object) -> bool:
    return isinstance(raw_input, dict) and any(raw_input.get(key) is not None for key in COMMAND_KEYS)


def command_trouble(raw_input: object) -> str | None:
    """Why a command's rawInput says more than its command line (a rule then cannot judge it), else None."""
    if not isinstance(raw_input, dict):
        return None
    given = [key for key in COMMAND_KEYS if raw_input.get(key) is not None]
    if len(given) > 1:
        return "both `command` and `cmd`"
    for key, value in raw_input.items():
        if (
            key not in COMMAND_KEYS
            and key not in HARMLESS_COMMAND_KEYS
            and value not in (None, False, "", [], {})
        ):
            return f"`{key}` is set"
    return None


def command_line(raw_input: object) -> str | None:
    """The command line a request runs, exactly as sent (an argv as `shell.command_of` joins it), or None."""
    if not isinstance(raw_input, dict):
        return None
    value = next((raw_input[key] for key in COMMAND_KEYS if raw_input.get(key) is not None), None)
    if isinstance(value, str):
        return value if value.strip() else None
    return shell.command_of({"command": value})

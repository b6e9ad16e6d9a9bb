"""Which paths the agent may touch without asking.

A `Sandbox` knows the session's roots (its cwd and additional directories), explicit allow and deny lists, the
answers the user gave "always" for a path and an action, and a policy for everything else. Every decision is
made on the *real* path, resolved once by `resolve`; the caller then opens exactly that path, never the
agent's spelling, so what was checked is what is opened.

`resolve(path)` first refuses, before any file system call, what no file system call should see: a path that
is not absolute text, has a NUL byte, is longer than PATH_MAX, has a component longer than NAME_MAX or an
absurd number of components. It then walks the path one component at a time as the kernel does: a symlink is
replaced by its target before the next component, and `..` goes to the parent of what was resolved so far (so
`proj/link/..` is the link target's parent, not `proj`). Nothing is expanded (`$VAR`, `~` are plain
characters). A component that does not exist (yet) is kept as written, and the walk goes on (a `..` after it
takes it away again), as `os.path.realpath` does. Process-relative paths (`/proc/self`, `/proc/thread-self`,
`/proc/<pid>`, and what leads there, such as `/dev/fd`) are refused: they mean one thing in this process and
another in the editor that opens the file (its own cwd, its own descriptors), and they reach files through
links that are not paths at all.

Order of decision for `decide(written, real, action)`:

1. the path written inside a root but really outside every root (an escape through a symlink or `..`) ->
   DENY; a remembered "always" never lifts that, and only an entry of the configured allow list that covers
   the real path lifts it for a symlink (never for `..`: the agent can name the real path instead);
2. the most specific rule from the allow/deny lists and the remembered answers for this action that covers
   the real path (a rule on a folder covers everything under it; at equal specificity a remembered answer
   beats the configured lists, and deny beats allow) -> its verdict;
3. the real path inside a root -> ALLOW;
4. otherwise the `outside` policy: ``"ask"`` -> ASK, ``"deny"`` -> DENY, ``"allow"`` -> ALLOW.

Pure Python, no I/O beyond `lstat` and `readlink` of the path's components; not thread-safe (the client uses
it from one task at a time).
"""

from __future__ import annotations

import enum
import os
import stat
from collections.abc import Iterable
from typing import Literal

OutsidePolicy = Literal["ask", "deny", "allow"]

# Linux's limits: a longer path or name could never be opened, and checking one costs before it fails.
PATH_MAX = 4096
NAME_MAX = 255
# Real trees are a few dozen levels deep (pnpm's node_modules included); more is a denial of service.
MAX_COMPONENTS = 256
# The kernel's own limit of symlinks followed in one lookup (ELOOP beyond it).
MAX_SYMLINKS = 40

# Under /proc, these first components name a process: the caller's (self, thread-self) or any by its pid.
_PROCESS_DIRS = ("self", "thread-self")


class Verdict(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class PathRefused(ValueError):
    """A path refused before the sandbox could judge it; `reason` is a short stable word for the agent."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason


def shown(path: str, limit: int = 120) -> str:
    """The path for a message: a very long one is cut, so an error never echoes 100 KB back."""
    return path if len(path) <= limit else path[:limit] + f"… ({len(path)} characters)"


def validate(path: object) -> str:
    """The path, or PathRefused for what must be refused before any file system call."""
    if not isinstance(path, str) or not path:
        raise PathRefused("path must be a non-empty string", "invalid_path")
    if "\0" in path:
        raise PathRefused(f"path contains a NUL byte: {shown(path)!r}", "invalid_path")
    if not path.startswith("/"):
        raise PathRefused(f"path must be absolute: {shown(path)!r}", "invalid_path")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise PathRefused(f"path is not valid UTF-8: {shown(path)!r}", "invalid_path") from None
    if size > PATH_MAX:
        raise PathRefused(
            f"path is too long: {size} bytes, the limit is {PATH_MAX} (PATH_MAX): {shown(path)}",
            "path_too_long",
        )
    names = [name for name in path.split("/") if name]
    if len(names) > MAX_COMPONENTS:
        raise PathRefused(
            f"path has {len(names)} components, the limit is {MAX_COMPONENTS}: {shown(path)}",
            "path_too_long",
        )
    for name in names:
        if len(name.encode("utf-8")) > NAME_MAX:
            raise PathRefused(
                f"a path component is {len(name.encode('utf-8'))} bytes, the limit is {NAME_MAX} "
                f"(NAME_MAX): {shown(path)}",
                "path_too_long",
            )
    return path


def _process_relative(parts: list[str]) -> bool:
    return len(parts) >= 2 and parts[0] == "proc" and (parts[1] in _PROCESS_DIRS or parts[1].isdigit())


def resolve(path: object) -> str:
    """The real absolute path, resolved once as described above; PathRefused for a path that is refused
    whatever the sandbox says."""
    path = validate(path)
    done: list[str] = []
    # Components still to walk, the next one last.
    todo = [name for name in reversed(path.split("/")) if name not in ("", ".")]
    links = 0
    while todo:
        name = todo.pop()
        if name == "..":
            if done:
                done.pop()
            continue
        done.append(name)
        if _process_relative(done):
            raise PathRefused(
                f"{shown(path)} leads into /proc/{done[1]}, which is relative to a process "
                "(its cwd, root or descriptors) and means another file in the editor: use the file's "
                "real path",
                "process_relative",
            )
        current = "/" + "/".join(done)
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            # Missing or unreachable: kept as written (it holds no symlink), and the walk goes on.
            continue
        if not stat.S_ISLNK(mode):
            continue
        links += 1
        if links > MAX_SYMLINKS:
            raise PathRefused(f"{shown(path)}: too many levels of symbolic links", "symlink_loop")
        try:
            target = os.readlink(current)
        except OSError:
            continue
        done.pop()
        if target.startswith("/"):
            done.clear()
        todo.extend(name for name in reversed(target.split("/")) if name not in ("", "."))
    real = "/" + "/".join(done)
    if len(real.encode("utf-8", "surrogateescape")) > PATH_MAX:
        raise PathRefused(
            f"{shown(path)} leads to a path longer than {PATH_MAX} bytes (PATH_MAX)", "path_too_long"
        )
    return real


def _parts(path: str) -> tuple[str, ...]:
    """Components of an absolute path without empty and `.` components; `..` is kept (not resolved)."""
    return tuple(p for p in path.split(os.sep) if p not in ("", "."))


def _lexical(path: str) -> tuple[str, ...]:
    """Components with `..` folded as written (only to tell a `..` escape from a symlink one)."""
    return _parts(os.path.normpath(path))


def _within(parts: tuple[str, ...], base: tuple[str, ...]) -> bool:
    return parts[: len(base)] == base


class Sandbox:
    def __init__(
        self,
        roots: Iterable[str],
        *,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        outside: OutsidePolicy = "ask",
    ) -> None:
        if outside not in ("ask", "deny", "allow"):
            raise ValueError(f"outside policy must be 'ask', 'deny' or 'allow', not {outside!r}")
        self.outside: OutsidePolicy = outside
        self._roots: list[str] = []
        # Written spellings of the roots, as well as their real paths: an escape is judged against both.
        self._root_spellings: list[tuple[str, ...]] = []
        # real path parts -> allow?; configured and remembered kept apart so remembered answers win ties.
        self._configured: dict[tuple[str, ...], bool] = {}
        # (real path parts, action or None for every action) -> allow?
        self._remembered: dict[tuple[tuple[str, ...], str | None], bool] = {}
        for root in roots:
            self.add_root(root)
        for p in allow:
            self._configured[self._key(p)] = True
        for p in deny:
            self._configured[self._key(p)] = False

    @staticmethod
    def _key(path: str) -> tuple[str, ...]:
        if not os.path.isabs(path):
            raise ValueError(f"path must be absolute: {path!r}")
        return _parts(resolve(path))

    @property
    def roots(self) -> list[str]:
        """The real paths of the roots, in the order added."""
        return list(self._roots)

    def add_root(self, root: str) -> None:
        """Add a root (the session cwd or an additional directory); it must be absolute."""
        if not os.path.isabs(root):
            raise ValueError(f"root must be absolute: {root!r}")
        real = resolve(root)
        if real not in self._roots:
            self._roots.append(real)
        for spelling in (_parts(os.path.normpath(root)), _parts(real)):
            if spelling not in self._root_spellings:
                self._root_spellings.append(spelling)

    def remember(self, path: str, allow: bool, action: str | None = None) -> None:
        """Record an "always" answer for `path` (and, for a folder, everything under it), for `action` only
        (None: every action)."""
        self._remembered[(self._key(path), action)] = allow

    def forget(self, path: str, action: str | None = None) -> None:
        """Drop a remembered answer for exactly `path` and `action`."""
        self._remembered.pop((self._key(path), action), None)

    def is_inside(self, path: str) -> bool:
        """Whether the real path is inside one of the roots."""
        return self._inside(_parts(resolve(path)))

    def _inside(self, real: tuple[str, ...]) -> bool:
        return any(_within(real, _parts(r)) for r in self._roots)

    def written_inside(self, path: str) -> bool:
        """Whether the path as written (`..` not folded) starts inside a root, in its real or written form."""
        written = _parts(path)
        return any(_within(written, spelling) for spelling in self._root_spellings)

    def _rule(self, real: tuple[str, ...], action: str | None, remembered: bool = True) -> bool | None:
        best_rank: tuple[int, int, int] | None = None
        best: bool | None = None
        candidates: list[tuple[int, tuple[str, ...], bool]] = [
            (0, base, allow) for base, allow in self._configured.items()
        ]
        if remembered:
            candidates += [
                (1, base, allow)
                for (base, for_action), allow in self._remembered.items()
                if for_action is None or for_action == action
            ]
        for source_rank, base, allow in candidates:
            if _within(real, base):
                # Longer base first, then remembered over configured, then deny over allow.
                rank = (len(base), source_rank, 0 if allow else 1)
                if best_rank is None or rank > best_rank:
                    best_rank, best = rank, allow
        return best

    def check(self, path: str, action: str | None = None) -> Verdict:
        """Decide whether the agent may `action` `path` (resolving it here)."""
        try:
            real = resolve(path)
        except PathRefused:
            return Verdict.DENY
        return self.decide(path, real, action)

    def decide(self, written: str, real: str, action: str | None = None) -> Verdict:
        """Decide for a path already resolved: `written` as the agent spelled it, `real` from `resolve`."""
        real_parts = _parts(real)
        if not self._inside(real_parts) and self.written_inside(written):
            lexical = _lexical(written)
            dotdot = not any(_within(lexical, spelling) for spelling in self._root_spellings)
            if dotdot or self._rule(real_parts, action, remembered=False) is not True:
                return Verdict.DENY
        rule = self._rule(real_parts, action)
        if rule is not None:
            return Verdict.ALLOW if rule else Verdict.DENY
        if self._inside(real_parts):
            return Verdict.ALLOW
        return {"ask": Verdict.ASK, "deny": Verdict.DENY, "allow": Verdict.ALLOW}[self.outside]

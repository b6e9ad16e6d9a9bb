"""Which paths the agent may touch without asking.

A `Sandbox` knows the session's roots (its cwd and additional directories), explicit allow and deny lists, the
answers the user gave "always" for a path, and a policy for everything else. Every decision is made on the
*real* path: `..` and symlinks are resolved first (for a path that does not exist yet, its nearest existing
parent is resolved and the rest appended), so a path that only looks inside a root cannot reach outside it.

Order of decision for `check(path)`:

1. not absolute, or containing a NUL byte -> DENY;
2. the most specific rule from the allow/deny lists and remembered answers that covers the real path (a rule
   on a folder covers everything under it; at equal specificity a remembered answer beats the configured
   lists, and deny beats allow) -> its verdict;
3. the real path inside a root -> ALLOW;
4. the path written inside a root but really outside (escape through a symlink or `..`) -> DENY;
5. otherwise the `outside` policy: ``"ask"`` -> ASK, ``"deny"`` -> DENY, ``"allow"`` -> ALLOW.

Pure Python, no I/O beyond `os.path.realpath`; not thread-safe (the client uses it from one task at a time).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from typing import Literal

OutsidePolicy = Literal["ask", "deny", "allow"]


class Verdict(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


def resolve(path: str) -> str:
    """The real absolute path: symlinks and `..` resolved, for a missing path through its nearest existing
    parent (a dangling symlink resolves to where it points)."""
    return os.path.realpath(path)


def _parts(path: str) -> tuple[str, ...]:
    """Components of an absolute path without empty and `.` components; `..` is kept (not resolved)."""
    return tuple(p for p in path.split(os.sep) if p not in ("", "."))


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
        self._remembered: dict[tuple[str, ...], bool] = {}
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

    def remember(self, path: str, allow: bool) -> None:
        """Record an "always" answer for `path` (and, for a folder, everything under it)."""
        self._remembered[self._key(path)] = allow

    def forget(self, path: str) -> None:
        """Drop a remembered answer for exactly `path`."""
        self._remembered.pop(self._key(path), None)

    def is_inside(self, path: str) -> bool:
        """Whether the real path is inside one of the roots."""
        real = _parts(resolve(path))
        return any(_within(real, _parts(r)) for r in self._roots)

    def _rule(self, real: tuple[str, ...]) -> bool | None:
        best_rank: tuple[int, int, int] | None = None
        best: bool | None = None
        for source_rank, rules in ((0, self._configured), (1, self._remembered)):
            for base, allow in rules.items():
                if _within(real, base):
                    # Longer base first, then remembered over configured, then deny over allow.
                    rank = (len(base), source_rank, 0 if allow else 1)
                    if best_rank is None or rank > best_rank:
                        best_rank, best = rank, allow
        return best

    def check(self, path: str) -> Verdict:
        """Decide whether the agent may touch `path`."""
        if not isinstance(path, str) or "\0" in path or not os.path.isabs(path):
            return Verdict.DENY
        real = _parts(resolve(path))
        rule = self._rule(real)
        if rule is not None:
            return Verdict.ALLOW if rule else Verdict.DENY
        if any(_within(real, _parts(r)) for r in self._roots):
            return Verdict.ALLOW
        written = _parts(path)
        if any(_within(written, spelling) for spelling in self._root_spellings):
            return Verdict.DENY
        return {"ask": Verdict.ASK, "deny": Verdict.DENY, "allow": Verdict.ALLOW}[self.outside]

"""The words of a command line when it is exactly one simple command, for the permission rules: a small,
deliberately narrow reading of POSIX shell syntax that answers None ("ask the user") for anything it does not
fully understand.

Understood: words of plain characters (letters, digits, `_-./,:@%+=`), separated by spaces and tabs, quoted
with '…' (anything printable but a control character) or "…" (no `$`, `` ` ``, `\\`, `!` inside).
Everything else is refused, wherever it stands, quoted or not where it matters: newlines, carriage returns,
NUL and every other control, format or unicode space/line separator character (U+0085, U+2028, U+00A0, …);
`;`, `&`, `|`, `<`, `>`, `(`, `)`, `{`, `}`, `` ` ``, `$` (variables, `$(…)`, `$'…'`), `\\` escapes, `#`
(comments), `*?[]` (globs), `~`, `!`, `^`; a word starting with `=` (zsh's `=(…)` and `=cmd`); a first word
that assigns a variable (`FOO=1 npm test`); an unclosed quote.

`command_words` also looks through `sh -c SCRIPT` (bash, zsh, dash, ksh and their `-lc`/`-ic` forms, with
exactly one script): the script must itself be one simple command, and its words are the command's. Every
other wrapper (`env`, `eval`, `exec`, `sudo`, `xargs`, …) stays the first word, which no rule may start with.
"""

from __future__ import annotations

import os
import re
import unicodedata

_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:@%+=")
_BLANKS = frozenset(" \t")
# Inside "…", these still expand or escape: refused.
_DOUBLE_QUOTE_ACTIVE = frozenset('$`\\!"')
# Unicode categories never allowed anywhere: controls, format characters (bidi overrides, zero-width), unused
# and private code points, surrogates, and every separator but the ASCII space (which is handled first).
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Zl", "Zp"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
SCRIPT_FLAGS = frozenset({"-c", "-lc", "-ic", "-lic", "-cl", "-ci"})
# Commands that run another command (or a script) given in their arguments: a rule must not start with one,
# or it would allow whatever they run.
RUNNERS = frozenset(
    {
        *SHELLS,
        "fish",
        "csh",
        "tcsh",
        "env",
        "eval",
        "exec",
        "source",
        ".",
        "command",
        "builtin",
        "sudo",
        "doas",
        "su",
        "xargs",
        "nohup",
        "nice",
        "time",
        "timeout",
        "stdbuf",
        "setsid",
        "chroot",
        "watch",
        "script",
        "parallel",
        "coproc",
        "trap",
        "alias",
        "function",
        "if",
        "for",
        "while",
        "until",
        "case",
        "select",
    }
)
# Scripts inside scripts (`sh -c "sh -c '…'"`): deeper than this is asked.
MAX_NESTING = 4


def _allowed_char(char: str) -> bool:
    if char == " ":
        return True
    if char.isascii():
        return char.isprintable()
    return unicodedata.category(char) not in _REFUSED_CATEGORIES


def simple_command(text: str) -> list[str] | None:
    """The words of `text` (quotes removed) when it is one simple command as described above, else None."""
    if not all(_allowed_char(char) or char == "\t" for char in text):
        return None
    words: list[str] = []
    raw_first = ""
    word: list[str] | None = None
    i, end = 0, len(text)
    while i < end:
        char = text[i]
        if char in _BLANKS:
            if word is not None:
                words.append("".join(word))
                word = None
            i += 1
            continue
        start = i
        if word is None:
            word = []
            if char == "=":
                return None
        if char == "'":
            close = text.find("'", i + 1)
            if close < 0 or "\t" in text[i + 1 : close]:
                return None
            word.append(text[i + 1 : close])
            i = close + 1
        elif char == '"':
            close = text.find('"', i + 1)
            if close < 0:
                return None
            quoted = text[i + 1 : close]
            if any(c in _DOUBLE_QUOTE_ACTIVE or c == "\t" for c in quoted):
                return None
            word.append(quoted)
            i = close + 1
        elif char in _PLAIN:
            word.append(char)
            i += 1
        else:
            return None
        if not words:
            raw_first += text[start:i]
    if word is not None:
        words.append("".join(word))
    if not words or _ASSIGNMENT.match(raw_first):
        return None
    return words


def command_words(text: str, nesting: int = 0) -> list[str] | None:
    """The words of the one simple command `text` runs, looking through `sh -c SCRIPT`; None: ask."""
    words = simple_command(text)
    if words is None:
        return None
    if len(words) == 3 and os.path.basename(words[0]) in SHELLS and words[1] in SCRIPT_FLAGS:
        if nesting >= MAX_NESTING:
            return None
        return command_words(words[2], nesting + 1)
    return words


def starts_with_runner(words: list[str]) -> bool:
    return os.path.basename(words[0]) in RUNNERS or words[0] in RUNNERS


_NEEDS_NO_QUOTES = re.compile(r"[A-Za-z0-9_\-./,:@%+][A-Za-z0-9_\-./,:@%+=]*")


def _quoted(word: str, first: bool) -> str:
    if _NEEDS_NO_QUOTES.fullmatch(word) and not (first and _ASSIGNMENT.match(word)):
        return word
    # A ' cannot stand inside '…': it is closed, the ' given in "…", and opened again.
    return "'" + word.replace("'", "'\"'\"'") + "'"


def join(words: list[str]) -> str:
    """Words as one command line that `simple_command` reads back to the same words."""
    return " ".join(_quoted(word, n == 0) for n, word in enumerate(words))

"""The @-mentions of what Neovim knows (issue 28): `@diagnostics`, `@diagnostics:all`, `@symbol:NAME`,
`@buffers`, `@quickfix` and `@diff` (`@selection` is a selection attachment, `prompt_content.py`).

Lua gathers the facts only Neovim has (`lua/acp_nvim/ui/prompt/context.lua`); the host runs `git diff` itself
(`git_diff.py`). Here it is decided what the agent gets: a `resource` with the text where the agent accepts
embedded context, else a `resource_link` and a text block; what lies outside the session's folders is left out
and named; every text is bounded; and a mention with nothing behind it says so ("@diagnostics: none") rather
than failing the prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import msgspec

from acp_nvim.app.editor.sandbox_rules import PathRefused, Sandbox
from acp_nvim.protocol import schema as s

#: The most text one mention sends; the rest is cut with a note (an agent's context is not a dump).
MAX_TEXT_CHARS = 64 * 1024

#: Where a mention that is not a file points: a URI of the plugin's own (an agent never takes it for a file).
URI_BASE = "acp-nvim:///"


class Diagnostic(msgspec.Struct, kw_only=True):
    path: str
    lnum: int
    col: int
    severity: str = ""
    source: str = ""
    code: str = ""
    message: str = ""


class Skipped(msgspec.Struct, kw_only=True):
    """How many diagnostics of a buffer Lua counted but did not gather (past its limit)."""

    path: str
    count: int


class DiagnosticsMention(msgspec.Struct, kw_only=True, tag="diagnostics", tag_field="kind"):
    """`@diagnostics` (`scope` "buffer": the buffer the user came from, `path`) or `@diagnostics:all`."""

    scope: Literal["buffer", "all"] = "buffer"
    path: str = ""
    items: list[Diagnostic] = []
    skipped: list[Skipped] = []


class BufferInfo(msgspec.Struct, kw_only=True):
    path: str
    modified: bool = False
    filetype: str = ""
    lines: int = 0


class BuffersMention(msgspec.Struct, kw_only=True, tag="buffers", tag_field="kind"):
    items: list[BufferInfo] = []


class QuickfixItem(msgspec.Struct, kw_only=True):
    path: str = ""
    lnum: int = 0
    col: int = 0
    type: str = ""
    text: str = ""


class QuickfixMention(msgspec.Struct, kw_only=True, tag="quickfix", tag_field="kind"):
    title: str = ""
    items: list[QuickfixItem] = []
    more: int = 0


class SymbolMention(msgspec.Struct, kw_only=True, tag="symbol", tag_field="kind"):
    """`@symbol:NAME`: where a language server says the symbol is, and the text of that range."""

    name: str
    path: str
    start_line: int
    start_col: int = 1
    end_line: int
    end_col: int = 1
    symbol_kind: str = ""
    container: str = ""
    text: str = ""
    filetype: str = ""


class DiffMention(msgspec.Struct, kw_only=True, tag="diff", tag_field="kind"):
    """`@diff`: Lua only names it; the host fills `text` (or `fact`) before the prompt is built."""

    text: str = ""
    #: "" (taken), "pending" (not run yet), "not_a_repository", "no_git", "failed".
    fact: str = "pending"
    detail: str = ""
    #: The diff was longer than what was read.
    cut: bool = False
    total_bytes: int = 0


class MissingMention(msgspec.Struct, kw_only=True, tag="missing", tag_field="kind"):
    """A mention Lua found nothing behind: `fact` says why ("no_buffer", "no_selection", "no_language_server",
    "not_found")."""

    name: str
    fact: str


ContextMention = (
    DiagnosticsMention | BuffersMention | QuickfixMention | SymbolMention | DiffMention | MissingMention
)

MISSING_WORDS = {
    "no_buffer": "no file buffer",
    "no_selection": "no visual selection",
    "no_language_server": "no language server",
    "not_found": "no such symbol",
    "not_a_repository": "not a git repository",
    "no_git": "git is not installed",
    "failed": "git diff failed",
    "pending": "not taken",
}


class Scope:
    """The session's folders: what may be sent, and paths as the agent and the user read them."""

    def __init__(self, roots: list[str]) -> None:
        self.cwd = roots[0] if roots else ""
        self._box = Sandbox([root for root in roots if os.path.isabs(root)])

    def inside(self, path: str) -> bool:
        if not path:
            return False
        try:
            return self._box.is_inside(path)
        except (PathRefused, ValueError):
            return False

    def relative(self, path: str) -> str:
        if self.cwd and (path == self.cwd or path.startswith(self.cwd.rstrip("/") + "/")):
            return os.path.relpath(path, self.cwd)
        return path


def bounded(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """`text`, cut at a line's end before `limit` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    kept = text[: cut if cut > 0 else limit]
    left = text.count("\n", len(kept)) + (0 if text.endswith("\n") else 1)
    return f"{kept}\n[cut: {left} more lines not sent, over {limit // 1024} KiB]"


def fenced(label: str, body: str, language: str = "") -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{label}:\n{fence}{language}\n{body}\n{fence}"


def left_out(paths: list[str]) -> str:
    shown = ", ".join(sorted(set(paths))[:5])
    more = len(set(paths)) - 5
    return f"left out, outside the session's folders: {shown}" + (f" and {more} more" if more > 0 else "")


class Rendered(msgspec.Struct, kw_only=True):
    """A mention ready to send: its blocks and how the chat shows it."""

    blocks: list[s.ContentBlock]
    shown: str


def _text_blocks(
    name: str, body: str, embedded: bool, *, uri: str, language: str = "", title: str | None = None
) -> list[s.ContentBlock]:
    body = bounded(body)
    if embedded:
        mime = "text/x-diff" if language == "diff" else "text/plain"
        return [s.ContentBlockResource(resource=s.TextResourceContents(uri=uri, text=body, mime_type=mime))]
    link = s.ContentBlockResourceLink(uri=uri, name=name, title=title or name)
    return [link, s.ContentBlockText(text=fenced("@" + name, body, language))]


def nothing(name: str, why: str = "") -> Rendered:
    said = f"@{name}: none" + (f" ({why})" if why else "")
    return Rendered(blocks=[s.ContentBlockText(text=said)], shown=said)


def _diagnostic_line(d: Diagnostic, scope: Scope) -> str:
    source = f" [{d.source}{': ' + d.code if d.code else ''}]" if d.source or d.code else ""
    message = d.message.replace("\n", "\n    ")
    return f"{scope.relative(d.path)}:{d.lnum}:{d.col}: {d.severity or 'note'}: {message}{source}"


def _diagnostics(mention: DiagnosticsMention, scope: Scope, embedded: bool) -> Rendered:
    name = "diagnostics" if mention.scope == "buffer" else "diagnostics:all"
    if mention.scope == "buffer" and mention.path and not scope.inside(mention.path):
        return nothing(name, left_out([mention.path]))
    kept = [d for d in mention.items if scope.inside(d.path)]
    more = sum(skip.count for skip in mention.skipped if scope.inside(skip.path))
    outside = [d.path or "[No Name]" for d in mention.items if not scope.inside(d.path)]
    outside += [skip.path or "[No Name]" for skip in mention.skipped if not scope.inside(skip.path)]
    notes = [left_out(outside)] if outside else []
    if not kept:
        where = scope.relative(mention.path) if mention.scope == "buffer" and mention.path else ""
        return nothing(name, "; ".join([w for w in [where] if w] + notes))
    lines = [_diagnostic_line(d, scope) for d in kept]
    if more:
        lines.append(f"[{more} more diagnostics not gathered]")
    files = len({d.path for d in kept})
    where = scope.relative(kept[0].path) if files == 1 else f"{files} files"
    total = len(kept) + more
    shown = f"@{name}: {total} in {where}" + "".join(f"; {note}" for note in notes)
    uri = URI_BASE + ("diagnostics" if mention.scope == "buffer" else "diagnostics/all")
    header = f"Diagnostics (file:line:column: severity: message [source]), {total} in {where}:\n"
    return Rendered(blocks=_text_blocks(name, header + "\n".join(lines), embedded, uri=uri), shown=shown)


def _buffers(mention: BuffersMention, scope: Scope, embedded: bool) -> Rendered:
    kept = [b for b in mention.items if not b.path or scope.inside(b.path)]
    outside = [b.path for b in mention.items if b.path and not scope.inside(b.path)]
    notes = [left_out(outside)] if outside else []
    if not kept:
        return nothing("buffers", "; ".join(notes))
    lines = []
    for b in kept:
        # A loaded buffer has at least one line: none is one listed but not loaded.
        size = f"{b.lines} lines" if b.lines else "not loaded"
        facts = [b.filetype or "no filetype", size] + (["modified, unsaved"] if b.modified else [])
        lines.append(f"{scope.relative(b.path) if b.path else '[No Name]'} ({', '.join(facts)})")
    unsaved = sum(b.modified for b in kept)
    shown = (
        f"@buffers: {len(kept)}"
        + (f", {unsaved} unsaved" if unsaved else "")
        + "".join(f"; {n}" for n in notes)
    )
    body = "Buffers open in Neovim (a modified one differs from the file on disk):\n" + "\n".join(lines)
    return Rendered(blocks=_text_blocks("buffers", body, embedded, uri=URI_BASE + "buffers"), shown=shown)


def _quickfix(mention: QuickfixMention, scope: Scope, embedded: bool) -> Rendered:
    kept = [q for q in mention.items if not q.path or scope.inside(q.path)]
    outside = [q.path for q in mention.items if q.path and not scope.inside(q.path)]
    notes = [left_out(outside)] if outside else []
    if not kept:
        return nothing("quickfix", "; ".join(notes) or "the list is empty")
    lines = []
    for q in kept:
        where = f"{scope.relative(q.path)}:{q.lnum}:{q.col}: " if q.path else ""
        kind = {"E": "error: ", "W": "warning: ", "I": "info: ", "N": "note: "}.get(q.type.upper(), "")
        lines.append(f"{where}{kind}{q.text}")
    if mention.more:
        lines.append(f"[{mention.more} more entries not gathered]")
    title = f" ({mention.title})" if mention.title else ""
    # Entries past Lua's limit are not known to lie inside the folders: counted apart.
    more = f", {mention.more} more not gathered" if mention.more else ""
    shown = f"@quickfix: {len(kept)} entries{more}" + "".join(f"; {n}" for n in notes)
    body = f"The quickfix list{title}:\n" + "\n".join(lines)
    return Rendered(blocks=_text_blocks("quickfix", body, embedded, uri=URI_BASE + "quickfix"), shown=shown)


def _symbol(mention: SymbolMention, scope: Scope, embedded: bool) -> Rendered:
    name = "symbol:" + mention.name
    if not scope.inside(mention.path):
        return nothing(name, left_out([mention.path]))
    where = f"{scope.relative(mention.path)}:{mention.start_line}"
    span = f"#L{mention.start_line}" + (
        f"-L{mention.end_line}" if mention.end_line != mention.start_line else ""
    )
    uri = Path(mention.path).as_uri() + span
    kind = f"{mention.symbol_kind.lower()} " if mention.symbol_kind else ""
    title = f"{kind}{mention.name} ({where})"
    shown = f"@{name}: {kind}{where}"
    text = bounded(mention.text)
    if embedded:
        resource = s.TextResourceContents(uri=uri, text=text)
        return Rendered(blocks=[s.ContentBlockResource(resource=resource)], shown=shown)
    link = s.ContentBlockResourceLink(uri=uri, name=mention.name, title=title)
    return Rendered(
        blocks=[link, s.ContentBlockText(text=fenced(title, text, mention.filetype))], shown=shown
    )


def _diff(mention: DiffMention, embedded: bool) -> Rendered:
    if mention.fact:
        return nothing(
            "diff",
            MISSING_WORDS.get(mention.fact, mention.fact) + (f": {mention.detail}" if mention.detail else ""),
        )
    if not mention.text.strip():
        return nothing("diff", "no unstaged changes")
    text = mention.text
    files = mention.text.count("\ndiff --git ") + mention.text.startswith("diff --git ")
    if not mention.cut and all(line.startswith("# ") for line in text.splitlines()):
        # Several folders (`git_diff.unstaged_diffs`), none with a change: a line each says why.
        return nothing("diff", "; ".join(line.removeprefix("# ") for line in text.splitlines()))
    if mention.cut:
        text += f"\n[cut: the diff is {mention.total_bytes // 1024} KiB, only the first part is sent]"
    shown = f"@diff: {files} file{'s' if files != 1 else ''}" + (
        " (cut)" if mention.cut or len(text) > MAX_TEXT_CHARS else ""
    )
    body = "The unstaged changes (git diff):\n" + text
    return Rendered(
        blocks=_text_blocks("diff", body, embedded, uri=URI_BASE + "diff", language="diff"), shown=shown
    )


def render(mention: ContextMention, roots: list[str], embedded: bool) -> Rendered:
    """The blocks of one mention and its line in the chat."""
    scope = Scope(roots)
    if isinstance(mention, DiagnosticsMention):
        return _diagnostics(mention, scope, embedded)
    if isinstance(mention, BuffersMention):
        return _buffers(mention, scope, embedded)
    if isinstance(mention, QuickfixMention):
        return _quickfix(mention, scope, embedded)
    if isinstance(mention, SymbolMention):
        return _symbol(mention, scope, embedded)
    if isinstance(mention, DiffMention):
        return _diff(mention, embedded)
    return nothing(mention.name, MISSING_WORDS.get(mention.fact, mention.fact))

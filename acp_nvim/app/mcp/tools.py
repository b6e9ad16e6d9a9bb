"""The Neovim MCP server's tools: what each one takes (its input schema), what it may see, and how its answer
reads to a model (a short text, and the same as `structuredContent`).

Every path is judged by the session's sandbox rules (`app/editor/sandbox_rules.py`, as `fs/*` requests are):
a path argument outside the session's folders is refused with a tool error naming them and nothing of its
content, and whatever Neovim answers about files outside them (diagnostics, buffers, definitions in a
library) is left out and counted. Lines and columns are 1-based, columns in bytes, as Neovim's cursor and
quickfix list count them. Neovim answers facts (`port.py`); no tool changes anything.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import msgspec

from acp_nvim.app.editor.sandbox_rules import PathRefused, Sandbox, Verdict, resolve, shown
from acp_nvim.app.mcp.port import LspAnswer, LspQuestion, NeovimContext, Unreachable
from acp_nvim.app.mcp.schemas import OUTPUT_SCHEMAS
from acp_nvim.mcp.messages import CallToolResult, TextContent, Tool, ToolAnnotations, ToolError

TOOL_NAMES = (
    "diagnostics",
    "definition",
    "references",
    "hover",
    "document_symbols",
    "workspace_symbols",
    "open_buffers",
    "selection",
)
# Past this many items a text answer is cut (the structured one keeps them all).
TEXT_ITEMS = 500

_PATH = {"type": "string", "description": "the file: absolute, or relative to the session's folder"}
_LINE = {"type": "integer", "minimum": 1, "description": "1-based line"}
_COLUMN = {"type": "integer", "minimum": 1, "description": "1-based column, in bytes (as Neovim counts)"}
_AT = {"type": "object", "properties": {"path": _PATH, "line": _LINE, "column": _COLUMN}}
_AT_REQUIRED = {**_AT, "required": ["path", "line", "column"], "additionalProperties": False}


def _tool(name: str, title: str, description: str, schema: dict[str, object]) -> Tool:
    return Tool(
        name=name,
        title=title,
        description=description,
        input_schema=schema,
        output_schema=OUTPUT_SCHEMAS[name],
        annotations=ToolAnnotations(title=title),
    )


CATALOG = {
    tool.name: tool
    for tool in (
        _tool(
            "diagnostics",
            "Diagnostics",
            "The diagnostics Neovim's language servers and linters report (errors, warnings, hints) for one "
            "file, or for every open file when no path is given, as the buffers are now (unsaved changes "
            "included): file, line, column, severity, source, code and message.",
            {
                "type": "object",
                "properties": {
                    "path": _PATH,
                    "severity": {
                        "type": "string",
                        "enum": ["error", "warning", "info", "hint"],
                        "description": "only this severity and worse",
                    },
                },
                "additionalProperties": False,
            },
        ),
        _tool(
            "definition",
            "Go to definition",
            "Where the symbol at a position is defined, as the file's language servers in Neovim say.",
            _AT_REQUIRED,
        ),
        _tool(
            "references",
            "Find references",
            "Every reference to the symbol at a position (its declaration included), from the language "
            "servers in Neovim.",
            _AT_REQUIRED,
        ),
        _tool(
            "hover",
            "Hover",
            "The language servers' hover text at a position: the symbol's type, signature and documentation.",
            _AT_REQUIRED,
        ),
        _tool(
            "document_symbols",
            "Document symbols",
            "The symbols (classes, functions, variables, ...) a file defines, with their lines, from the "
            "language servers in Neovim; the file as its buffer is now.",
            {
                "type": "object",
                "properties": {"path": _PATH},
                "required": ["path"],
                "additionalProperties": False,
            },
        ),
        _tool(
            "workspace_symbols",
            "Workspace symbols",
            "Symbols across the project whose names match a query, from the language servers running in "
            "Neovim.",
            {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "part of a symbol's name"}},
                "required": ["query"],
                "additionalProperties": False,
            },
        ),
        _tool(
            "open_buffers",
            "Open buffers",
            "The files open in Neovim: path, unsaved changes, filetype and the language servers attached.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        ),
        _tool(
            "selection",
            "Selection",
            "What the user has selected in Neovim (Visual mode), or else where the cursor is, with the text "
            "as the buffer holds it now.",
            {"type": "object", "properties": {}, "additionalProperties": False},
        ),
    )
}

INSTRUCTIONS = (
    "Read-only tools backed by the user's Neovim: the diagnostics, language servers, open buffers and "
    "selection of the editor the user works in, with unsaved changes. Lines and columns are 1-based; columns "
    "count bytes, as Neovim does. Only files inside the session's folders can be asked about."
)
_SEVERITY_RANK = {"error": 1, "warning": 2, "info": 3, "hint": 4}
_UNREACHABLE = {
    "not_found": "{path}: no such file",
    "too_large": "{path} is not open in Neovim and too large to load for its language servers: open it first",
    "no_server": "no language server is attached to {path} in Neovim",
    "unsupported": "the language servers attached to {path} do not support {method}",
    "timeout": "the language server did not answer {method} in time",
}


def _int(arguments: dict[str, object], name: str) -> int:
    value = arguments.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"`{name}` must be a whole number, 1 or more (got {value!r})")
    return value


def _lines(items: Sequence[str], noun: str) -> str:
    shown_items = list(items[:TEXT_ITEMS])
    if len(items) > TEXT_ITEMS:
        shown_items.append(
            f"... and {len(items) - TEXT_ITEMS} more {noun} (all of them in structuredContent)"
        )
    return "\n".join(shown_items)


def _result(text: str, structured: object) -> CallToolResult:
    content = msgspec.to_builtins(structured)
    assert isinstance(content, dict)
    return CallToolResult(content=[TextContent(text=text)], structured_content=content)


class NeovimTools:
    """The tools of one session's server: `names` of them, on `roots` (the session's cwd first)."""

    def __init__(
        self, neovim: NeovimContext, roots: Sequence[str], names: Sequence[str] = TOOL_NAMES
    ) -> None:
        self._neovim = neovim
        self._roots = [os.path.abspath(root) for root in roots]
        self._sandbox = Sandbox(self._roots, outside="deny")
        self._names = [name for name in names if name in CATALOG]
        self._inside: dict[str, bool] = {}

    @property
    def tools(self) -> list[Tool]:
        return [CATALOG[name] for name in self._names]

    # ---- paths ---------------------------------------------------------------------------------------

    def path(self, arguments: dict[str, object]) -> str:
        """The real path of the `path` argument, or a tool error when it is outside the session's folders."""
        written = arguments.get("path")
        if not isinstance(written, str) or not written:
            raise ToolError("`path` must be a file's path (absolute, or relative to the session's folder)")
        if not written.startswith("/"):
            written = os.path.join(self._roots[0], written)
        try:
            real = resolve(written)
        except PathRefused as err:
            raise ToolError(err.message) from None
        if self._sandbox.decide(written, real) is not Verdict.ALLOW:
            raise ToolError(
                f"{shown(written)} is outside the session's folders ({', '.join(self._roots)}): refused"
            )
        return real

    def inside(self, path: str) -> bool:
        known = self._inside.get(path)
        if known is None:
            known = bool(path) and path.startswith("/") and self._sandbox.check(path) is Verdict.ALLOW
            self._inside[path] = known
        return known

    # ---- the calls -----------------------------------------------------------------------------------

    async def call(self, name: str, arguments: dict[str, object]) -> CallToolResult:
        if name not in self._names:
            raise ToolError(f"the tool {name!r} is turned off in this Neovim (opts.mcp.tools)")
        if name == "diagnostics":
            return await self._diagnostics(arguments)
        if name == "open_buffers":
            return await self._buffers()
        if name == "selection":
            return await self._selection()
        if name == "workspace_symbols":
            query = arguments.get("query")
            if not isinstance(query, str):
                raise ToolError("`query` must be a string")
            answer = await self._lsp(LspQuestion(method="workspace/symbol", path=None, query=query))
            return self._symbols(answer, None)
        path = self.path(arguments)
        if name == "document_symbols":
            return self._symbols(
                await self._lsp(LspQuestion(method="textDocument/documentSymbol", path=path)), path
            )
        line, column = _int(arguments, "line"), _int(arguments, "column")
        method = {"definition": "definition", "references": "references", "hover": "hover"}[name]
        question = LspQuestion(method=f"textDocument/{method}", path=path, line=line, column=column)
        answer = await self._lsp(question)
        if name == "hover":
            return self._hover(answer)
        return self._locations(answer)

    async def _diagnostics(self, arguments: dict[str, object]) -> CallToolResult:
        severity = arguments.get("severity", "hint")
        if severity not in _SEVERITY_RANK:
            raise ToolError("`severity` must be one of: error, warning, info, hint")
        worst = _SEVERITY_RANK[str(severity)]
        path = self.path(arguments) if arguments.get("path") is not None else None
        found = await self._neovim.diagnostics([path] if path else None)
        kept = [d for d in found if self.inside(d.path) and _SEVERITY_RANK.get(d.severity, 1) <= worst]
        kept.sort(key=lambda d: (d.path, d.line, d.column))
        left_out = sum(1 for d in found if not self.inside(d.path))
        lines = [
            f"{d.path}:{d.line}:{d.column}: {d.severity}: {d.message}"
            + (f" [{d.source}{' ' + d.code if d.code else ''}]" if d.source or d.code else "")
            for d in kept
        ]
        where = path or "the open files"
        head = f"{len(kept)} diagnostic{'s' if len(kept) != 1 else ''} in {where}"
        if left_out:
            head += f" ({left_out} in files outside the session's folders left out)"
        return _result(head + ("\n" + _lines(lines, "diagnostics") if lines else ""), {"diagnostics": kept})

    async def _buffers(self) -> CallToolResult:
        buffers = [b for b in await self._neovim.buffers() if self.inside(b.path)]
        lines = [
            f"{b.path}{' [unsaved changes]' if b.modified else ''} ({b.filetype or 'no filetype'}"
            f"{'; ' + ', '.join(b.language_servers) if b.language_servers else ''})"
            for b in buffers
        ]
        head = f"{len(buffers)} open file{'s' if len(buffers) != 1 else ''}"
        return _result(head + ("\n" + _lines(lines, "files") if lines else ""), {"buffers": buffers})

    async def _selection(self) -> CallToolResult:
        selection = await self._neovim.selection()
        if not selection.path:
            raise ToolError("the window the user works in shows no file")
        if not self.inside(selection.path):
            raise ToolError("the user's cursor is in a file outside the session's folders")
        where = f"{selection.path}:{selection.line}:{selection.column}"
        if selection.mode == "cursor":
            text = f"cursor at {where}; its line:\n{selection.text}"
        else:
            text = f"selection {where} to {selection.end_line}:{selection.end_column}:\n{selection.text}"
        return _result(text, selection)

    async def _lsp(self, question: LspQuestion) -> LspAnswer:
        method, path = question.method, question.path
        try:
            answer = await self._neovim.lsp(question)
        except Unreachable as err:
            words = _UNREACHABLE.get(err.fact, "no language server answered {method} for {path}")
            raise ToolError(words.format(path=path or "the project", method=method)) from None
        if not answer.ok:
            why = (answer.error or "").splitlines()[0] if answer.error else "unknown"
            raise ToolError(f"Neovim could not read the language servers' answer to {method}: {why}")
        return answer

    def _locations(self, answer: LspAnswer) -> CallToolResult:
        kept: list[dict[str, object]] = []
        lines: list[str] = []
        left_out = 0
        errors = [f"{r.server}: {r.error}" for r in answer.results if r.error]
        for result in answer.results:
            for item in result.items or []:
                if not self.inside(item.filename):
                    left_out += 1
                    continue
                location = {
                    "path": item.filename,
                    "line": item.lnum,
                    "column": item.col,
                    "end_line": item.end_lnum,
                    "end_column": item.end_col,
                    "text": item.text,
                    "server": result.server,
                }
                if location not in kept:
                    kept.append(location)
                    lines.append(f"{item.filename}:{item.lnum}:{item.col}: {item.text.strip()}")
        head = f"{len(kept)} location{'s' if len(kept) != 1 else ''}"
        if left_out:
            head += f" ({left_out} outside the session's folders left out)"
        text = "\n".join([head, *([_lines(lines, "locations")] if lines else []), *errors])
        return _result(text, {"locations": kept, "left_out": left_out, "errors": errors})

    def _hover(self, answer: LspAnswer) -> CallToolResult:
        hovers = [{"server": r.server, "text": r.text} for r in answer.results if r.text]
        errors = [f"{r.server}: {r.error}" for r in answer.results if r.error]
        text = "\n\n".join([*(str(h["text"]) for h in hovers), *errors]) or "no hover information here"
        return _result(text, {"hover": hovers, "errors": errors})

    def _symbols(self, answer: LspAnswer, path: str | None) -> CallToolResult:
        kept: list[dict[str, object]] = []
        left_out = 0
        for result in answer.results:
            for item in result.items or []:
                if not self.inside(item.filename or (path or "")):
                    left_out += 1
                    continue
                kept.append(
                    {
                        "path": item.filename or path,
                        "line": item.lnum,
                        "column": item.col,
                        "kind": item.kind,
                        "name": item.text,
                        "server": result.server,
                    }
                )
        lines = [f"{s['path']}:{s['line']}:{s['column']}: {s['name']}" for s in kept]
        errors = [f"{r.server}: {r.error}" for r in answer.results if r.error]
        head = f"{len(kept)} symbol{'s' if len(kept) != 1 else ''}"
        if left_out:
            head += f" ({left_out} outside the session's folders left out)"
        text = "\n".join([head, *([_lines(lines, "symbols")] if lines else []), *errors])
        return _result(text, {"symbols": kept, "left_out": left_out, "errors": errors})

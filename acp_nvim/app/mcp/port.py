"""What the Neovim MCP server's tools need of Neovim, and the facts it answers (decoded from
`lua/acp_nvim/editor/mcp.lua`'s tables). Implemented on Neovim's socket by `acp_nvim/nvim/mcp_link.py`."""

from __future__ import annotations

from typing import Protocol

import msgspec


class Diagnostic(msgspec.Struct, kw_only=True):
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    severity: str
    source: str | None = None
    code: str | None = None
    message: str


class Buffer(msgspec.Struct, kw_only=True):
    path: str
    loaded: bool
    modified: bool
    filetype: str
    language_servers: list[str]
    lines: int | None = None


class Selection(msgspec.Struct, kw_only=True):
    path: str
    modified: bool
    # "cursor", or the Visual mode: "v", "V", or CTRL-V.
    mode: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None
    text: str


class LspQuestion(msgspec.Struct, frozen=True, kw_only=True):
    """A language server request a tool asks through Neovim: `method` for the buffer of `path` (None: the
    project's servers), at `line`, `column` (1-based), or for `query`."""

    method: str
    path: str | None
    line: int | None = None
    column: int | None = None
    query: str | None = None


class LspStarted(msgspec.Struct, kw_only=True):
    ok: bool
    fact: str | None = None


class LspItem(msgspec.Struct, kw_only=True):
    """A location or symbol, as Neovim's `locations_to_items` / `symbols_to_items` give it (quickfix
    items)."""

    filename: str = ""
    lnum: int = 0
    col: int = 0
    end_lnum: int | None = None
    end_col: int | None = None
    text: str = ""
    kind: str | None = None


class LspResult(msgspec.Struct, kw_only=True):
    """One language server's answer: its items, its hover text, or its error."""

    server: str
    items: list[LspItem] | None = None
    text: str | None = None
    error: str | None = None


class LspAnswer(msgspec.Struct, kw_only=True):
    ok: bool
    results: list[LspResult] = []
    # Why the servers' answers could not be read (a Lua error turning them into items).
    error: str | None = None


class Unreachable(Exception):
    """No language server could be asked: the fact ("not_found", "too_large", "no_server", "unsupported",
    "timeout")."""

    def __init__(self, fact: str) -> None:
        super().__init__(fact)
        self.fact = fact


class NeovimContext(Protocol):
    async def diagnostics(self, paths: list[str] | None) -> list[Diagnostic]: ...

    async def buffers(self) -> list[Buffer]: ...

    async def selection(self) -> Selection: ...

    async def lsp(self, question: LspQuestion) -> LspAnswer: ...

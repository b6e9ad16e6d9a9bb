"""The Neovim MCP server's tools on an in-memory Neovim: what a path may be (the session's sandbox), what is
left out of Neovim's answers, and the words of each refusal."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_nvim.app.mcp.port import (
    Buffer,
    Diagnostic,
    LspAnswer,
    LspItem,
    LspQuestion,
    LspResult,
    Selection,
    Unreachable,
)
from acp_nvim.app.mcp.tools import CATALOG, TOOL_NAMES, NeovimTools
from acp_nvim.mcp.messages import ToolError

pytestmark = pytest.mark.anyio


def diagnostic(path: str, line: int, severity: str = "error") -> Diagnostic:
    return Diagnostic(
        path=path, line=line, column=1, end_line=line, end_column=2, severity=severity, message=f"bad {line}"
    )


class FakeNeovim:
    def __init__(self) -> None:
        self.diagnostics_found: list[Diagnostic] = []
        self.asked: list[object] = []
        self.answer: LspAnswer | Unreachable = LspAnswer(ok=True)

    async def diagnostics(self, paths: list[str] | None) -> list[Diagnostic]:
        self.asked.append(paths)
        return self.diagnostics_found

    async def buffers(self) -> list[Buffer]:
        return [
            Buffer(
                path="/elsewhere/x.py", loaded=True, modified=False, filetype="python", language_servers=[]
            ),
        ]

    async def selection(self) -> Selection:
        return Selection(path="/elsewhere/x.py", modified=False, mode="cursor", line=1, column=1, text="x")

    async def lsp(self, question: LspQuestion) -> LspAnswer:
        asked = (question.method, question.path, question.line, question.column, question.query)
        self.asked.append(asked)
        if isinstance(self.answer, Unreachable):
            raise self.answer
        return self.answer


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.py").write_text("TOKEN = 1\n")
    os.symlink(tmp_path / "secret.py", project / "link.py")
    return project


async def test_a_path_outside_the_folders_is_refused_before_neovim_is_asked(root: Path) -> None:
    neovim = FakeNeovim()
    tools = NeovimTools(neovim, [str(root)])
    for path in ["../secret.py", str(root.parent / "secret.py"), "link.py", "/proc/self/environ", ""]:
        with pytest.raises(ToolError) as refused:
            await tools.call("definition", {"path": path, "line": 1, "column": 1})
        assert "outside the session's folders" in str(refused.value) or "path" in str(refused.value)
    assert neovim.asked == []


async def test_relative_paths_are_the_sessions_and_positions_are_checked(root: Path) -> None:
    neovim = FakeNeovim()
    tools = NeovimTools(neovim, [str(root)])
    await tools.call("hover", {"path": "a.py", "line": 2, "column": 3})
    assert neovim.asked == [("textDocument/hover", str(root / "a.py"), 2, 3, None)]
    for bad in [{"line": 0, "column": 1}, {"line": 1, "column": True}, {"line": "1", "column": 1}]:
        with pytest.raises(ToolError, match="must be a whole number"):
            await tools.call("definition", {"path": "a.py", **bad})


async def test_diagnostics_outside_are_counted_not_shown_and_severity_filters(root: Path) -> None:
    neovim = FakeNeovim()
    inside = str(root / "a.py")
    neovim.diagnostics_found = [
        diagnostic(inside, 2, "warning"),
        diagnostic(inside, 1),
        diagnostic("/elsewhere/x.py", 1),
        diagnostic(inside, 3, "hint"),
    ]
    tools = NeovimTools(neovim, [str(root)])
    result = await tools.call("diagnostics", {"severity": "warning"})
    assert result.structured_content == {
        "diagnostics": [
            {**d, "source": None, "code": None}
            for d in [
                {
                    "path": inside,
                    "line": 1,
                    "column": 1,
                    "end_line": 1,
                    "end_column": 2,
                    "severity": "error",
                    "message": "bad 1",
                },
                {
                    "path": inside,
                    "line": 2,
                    "column": 1,
                    "end_line": 2,
                    "end_column": 2,
                    "severity": "warning",
                    "message": "bad 2",
                },
            ]
        ]
    }
    text = result.content[0].text
    assert text.startswith(
        "2 diagnostics in the open files (1 in files outside the session's folders left out)"
    )
    assert "/elsewhere" not in text
    with pytest.raises(ToolError, match="severity"):
        await tools.call("diagnostics", {"severity": "fatal"})


async def test_locations_outside_are_left_out_and_a_missing_server_is_said(root: Path) -> None:
    neovim = FakeNeovim()
    inside = str(root / "a.py")
    neovim.answer = LspAnswer(
        ok=True,
        results=[
            LspResult(server="s", items=[LspItem(filename=inside, lnum=1, col=1, text="x = 1")]),
            LspResult(server="t", items=[LspItem(filename="/usr/lib/python3/os.py", lnum=9, col=1)]),
            LspResult(server="u", error="crashed"),
        ],
    )
    tools = NeovimTools(neovim, [str(root)])
    result = await tools.call("references", {"path": inside, "line": 1, "column": 1})
    assert result.content[0].text.splitlines() == [
        "1 location (1 outside the session's folders left out)",
        f"{inside}:1:1: x = 1",
        "u: crashed",
    ]
    neovim.answer = Unreachable("no_server")
    with pytest.raises(ToolError, match=f"no language server is attached to {inside} in Neovim"):
        await tools.call("definition", {"path": inside, "line": 1, "column": 1})


async def test_the_selection_and_buffers_outside_say_nothing_of_them(root: Path) -> None:
    tools = NeovimTools(FakeNeovim(), [str(root)])
    with pytest.raises(ToolError, match="outside the session's folders"):
        await tools.call("selection", {})
    assert (await tools.call("open_buffers", {})).structured_content == {"buffers": []}


async def test_only_the_chosen_tools_are_offered_and_served(root: Path) -> None:
    tools = NeovimTools(FakeNeovim(), [str(root)], ["hover", "nonsense"])
    assert [tool.name for tool in tools.tools] == ["hover"]
    with pytest.raises(ToolError, match="turned off"):
        await tools.call("diagnostics", {})
    assert sorted(CATALOG) == sorted(TOOL_NAMES)

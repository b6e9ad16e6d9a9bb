"""Properties of the line diff behind every agent write (`acp_nvim.editor.fs.diff`), drawn by hypothesis and
applied to a real buffer: whether it walks a long range line by line (a few lines changed in place) or hands
the range to xdiff (a shift), its hunks turn the buffer's lines into the new text, and an in-place change
touches only the lines it changed."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# The buffer's lines after `fs.apply_hunks` of `fs.diff(old, new)`, and the lines the hunks touched.
APPLIED = """
local old, new = ...
local fs = require("acp_nvim.editor.fs")
local buf = vim.api.nvim_create_buf(false, true)
vim.api.nvim_buf_set_lines(buf, 0, -1, false, old)
local touched = fs.apply_hunks(buf, fs.diff(old, new), new)
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
vim.api.nvim_buf_delete(buf, { force = true })
return { lines = lines, touched = touched }
"""

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Few distinct lines, so that repeats give xdiff and the walk alignments to get wrong.
long_text = st.lists(st.sampled_from(["a", "b", "c", "", "d e"]), min_size=60, max_size=300)


@st.composite
def edited(draw: st.DrawFn) -> tuple[list[str], list[str], int]:
    """A long text, the same with some lines changed, inserted or deleted, and how many lines were changed
    in place (-1 when a line was inserted or deleted)."""
    old = draw(long_text)
    new = list(old)
    in_place = True
    for _ in range(draw(st.integers(1, 12))):
        i = draw(st.integers(0, len(new) - 1))
        op = draw(st.sampled_from(["change", "change", "change", "insert", "delete"]))
        if op == "change":
            new[i] = f"x{draw(st.integers(0, 3))}"
        elif op == "insert":
            new.insert(i, f"y{draw(st.integers(0, 3))}")
            in_place = False
        elif len(new) > 1:
            del new[i]
            in_place = False
    differing = sum(1 for a, b in zip(old, new, strict=False) if a != b) if in_place else -1
    return old, new, differing


@st.composite
def changed_in_place(draw: st.DrawFn) -> tuple[list[str], list[str], int]:
    """A long text with a few lines changed in place, the first and the last among them (so that the range
    between the unchanged head and tail is the whole text, long enough to be walked), some side by side."""
    old = draw(st.lists(st.sampled_from(["a", "b", "c", "", "d e"]), min_size=100, max_size=300))
    new = list(old)
    places = {0, len(old) - 1}
    for _ in range(draw(st.integers(0, 4))):
        places.add(draw(st.integers(0, len(old) - 1)))
    for i in places:
        new[i] = f"x{draw(st.integers(0, 3))}"
    return old, new, sum(1 for a, b in zip(old, new, strict=True) if a != b)


@SETTINGS
@given(st.one_of(edited(), changed_in_place()))
def test_the_hunks_turn_the_old_lines_into_the_new(
    nvim_clean: Any, case: tuple[list[str], list[str], int]
) -> None:
    old, new, differing = case
    got = nvim_clean.exec_lua(APPLIED, old, new)
    assert got["lines"] == new
    if differing >= 0:
        assert got["touched"] <= differing


def test_a_line_deleted_at_the_top_and_one_added_at_the_end_touch_two_lines(nvim_clean: Any) -> None:
    """Same line count, every line shifted: the walk must give way to xdiff, which sees two lines."""
    old = [f"line {i}" for i in range(1000)]
    new = [*old[1:], "added"]
    got = nvim_clean.exec_lua(APPLIED, old, new)
    assert got["lines"] == new
    assert got["touched"] == 2


# An agent's write of `text` onto the clean buffer of a real file: the file's bytes and the buffer's lines.
WRITTEN = """
local path, text = ...
local out = assert(io.open(path, "wb"))
out:write("before\\n")
out:close()
vim.cmd("silent! bwipeout! " .. vim.fn.fnameescape(path))
vim.cmd("silent edit " .. vim.fn.fnameescape(path))
local buf = vim.api.nvim_get_current_buf()
local answer = require("acp_nvim.editor.fs").write(path, text, {})
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local file = assert(io.open(path, "rb"))
local bytes = file:read("*a")
file:close()
vim.cmd("silent! bwipeout! " .. vim.fn.fnameescape(path))
return { ok = answer.ok, lines = lines, bytes = bytes, collecting = collectgarbage("isrunning") }
"""


@SETTINGS
@given(st.lists(st.sampled_from(["a", "b c", "", "\n", "\n\n", " "]), max_size=40).map("".join))
def test_the_file_holds_the_agents_text_and_the_buffer_its_lines(
    nvim_clean: Any, tmp_path: Any, text: str
) -> None:
    """The agent's text split into the buffer's lines (a final newline ends the last line, it makes no empty
    one) and saved byte for byte, its own bytes being the file's; the Lua collector runs again after."""
    got = nvim_clean.exec_lua(WRITTEN, str(tmp_path / "written.txt"), text)
    assert got["ok"]
    assert got["bytes"] == text
    body = text[:-1] if text.endswith("\n") else text
    assert got["lines"] == (body.split("\n") if text else [""])
    assert got["collecting"] is True

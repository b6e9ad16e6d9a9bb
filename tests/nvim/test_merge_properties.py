"""Properties of the three-way merge (`lua/acp_nvim/editor/fs/merge.lua`), drawn by hypothesis and merged in a
real headless Neovim: a side that equals the base yields the other, the same change is taken once, a change
one side made over the other's is taken without a conflict, and nothing the user typed is lost."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MERGE3 = "return require('acp_nvim.editor.fs.merge').merge3(...)"

# One Neovim for every example: the merge keeps no state between calls.
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

lines_of = st.lists(st.sampled_from(["a", "b", "c", "d", ""]), max_size=12)


def merge3(nvim: Any, base: list[str], ours: list[str], theirs: list[str]) -> tuple[list[str], int]:
    got = nvim.exec_lua(MERGE3, base, ours, theirs)
    return got["lines"], len(got["conflicts"])


@st.composite
def edited(draw: st.DrawFn, base: list[str], tag: str) -> list[str]:
    out = list(base)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(out)))
        op = draw(st.sampled_from(["change", "insert", "delete"]))
        if op == "insert" or not out:
            out.insert(i, f"{tag}{draw(st.integers(0, 3))}")
        elif op == "change":
            out[min(i, len(out) - 1)] = f"{tag}{draw(st.integers(0, 3))}"
        else:
            del out[min(i, len(out) - 1)]
    return out


@st.composite
def three(draw: st.DrawFn) -> tuple[list[str], list[str], list[str]]:
    base = draw(lines_of)
    return base, draw(edited(base, "u")), draw(edited(base, "t"))


@SETTINGS
@given(three())
def test_a_side_equal_to_the_base_yields_the_other(nvim_clean: Any, case: tuple[list[str], ...]) -> None:
    base, ours, theirs = case
    assert merge3(nvim_clean, base, base, theirs) == (theirs, 0)
    assert merge3(nvim_clean, base, ours, base) == (ours, 0)
    assert merge3(nvim_clean, base, ours, ours) == (ours, 0)


@SETTINGS
@given(three())
def test_nothing_the_user_typed_is_lost(nvim_clean: Any, case: tuple[list[str], ...]) -> None:
    base, ours, theirs = case
    lines, _ = merge3(nvim_clean, base, ours, theirs)
    for line in set(ours) - set(base):
        assert line in lines


@st.composite
def changes_over_changes(draw: st.DrawFn) -> tuple[list[str], list[int], list[int]]:
    """A base of distinct lines, the lines both sides change alike, and those only one side changes."""
    n = draw(st.integers(1, 30))
    both = draw(st.sets(st.integers(0, n - 1), min_size=1))
    more = draw(st.sets(st.integers(0, n - 1)).map(lambda s: s - both))
    return [f"line {i}" for i in range(n)], sorted(both), sorted(more)


@SETTINGS
@given(changes_over_changes())
def test_a_change_over_the_other_sides_is_taken(
    nvim_clean: Any, case: tuple[list[str], list[int], list[int]]
) -> None:
    """One side made the other's changes and more (e.g. the agent read the user's line and changed the next
    one): the fuller side is the result, without a conflict, whichever side it is."""
    base, both, more = case
    smaller = [f"same {i}" if i in both else line for i, line in enumerate(base)]
    fuller = [f"more {i}" if i in more else line for i, line in enumerate(smaller)]
    assert merge3(nvim_clean, base, smaller, fuller) == (fuller, 0)
    assert merge3(nvim_clean, base, fuller, smaller) == (fuller, 0)


def test_the_issue_example(nvim_clean: Any) -> None:
    assert merge3(nvim_clean, ["a", "b", "c"], ["a", "B", "c"], ["a", "B", "C"]) == (["a", "B", "C"], 0)

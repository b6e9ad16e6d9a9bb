"""The review's notes kept per session: added, shown, edited, removed, listed, sent into the prompt once, and
gone with their session (no Neovim: the fake port records what Lua would be handed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_nvim.app.review.note import MarkSpan, NoteFact, ReviewRequest
from tests.unit.app.fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


def comment(path: str, start: int, text: str, **fields: object) -> ReviewRequest:
    fact = NoteFact(kind="comment", path=path, start=start, end=start, text=text, **fields)  # type: ignore[arg-type]
    return ReviewRequest(action="add", note=fact)


async def test_a_note_is_kept_shown_edited_listed_and_removed(tmp_path: Path) -> None:
    app = App()
    _, session = await app.start("a", FakeAgent())
    (tmp_path / "a.py").write_text("")
    await app.review.command(
        comment(f"{tmp_path}/a.py", 3, "  use a constant  ", new=["x = 1"], filetype="python")
    )
    (note,) = session.review_notes
    assert (note.text, note.start) == ("use a constant", 3)
    assert [(m.id, m.shown, m.start) for m in app.port.review_shown] == [(note.id, "use a constant", 3)]

    # The lines moved since: the list says where the mark is now.
    spans = [MarkSpan(id=note.id, start=5, end=6)]
    await app.review.command(ReviewRequest(action="list", spans=spans))
    ((title, items),) = app.port.review_lists
    assert title == "ACP review notes (1)"
    assert [(i.filename, i.lnum, i.end_lnum, i.text) for i in items] == [
        (f"{tmp_path}/a.py", 5, 6, "comment: use a constant")
    ]

    await app.review.command(ReviewRequest(action="edit", note_id=note.id, text="a named constant"))
    assert app.port.review_shown[-1].text == "a named constant"
    # A comment emptied goes.
    await app.review.command(ReviewRequest(action="edit", note_id=note.id, text=" "))
    assert session.review_notes == [] and app.port.review_dropped == [note.id]


async def test_a_comment_needs_words_and_a_session() -> None:
    app = App()
    await app.review.command(comment("/p/a.py", 1, "words"))
    assert app.port.notes[-1][0].startswith("no session to review with")
    # A reject with no session and no reason to keep is only a reject: nothing more is said.
    silent = NoteFact(kind="rejection", path="/p/a.py", start=1, end=1, hunk=True)
    await app.review.command(ReviewRequest(action="add", note=silent))
    assert len(app.port.notes) == 1
    _, session = await app.start("a", FakeAgent())
    await app.review.command(comment("/p/a.py", 1, "   "))
    assert app.port.notes[-1][0] == "a comment needs words: nothing was added"
    await app.review.command(comment("", 1, "on a scratch buffer"))
    assert app.port.notes[-1][0] == "this buffer has no file for the agent to find: nothing was added"
    assert session.review_notes == [] and app.port.review_shown == []


async def test_send_composes_the_unsent_notes_per_file_with_references(tmp_path: Path) -> None:
    app = App()
    _, session = await app.start("a", FakeAgent(), cwd=str(tmp_path))
    cwd = session.cwd.rstrip("/")
    b, a = f"{cwd}/b.py", f"{cwd}/a.py"
    for path in (a, b):
        Path(path).write_text("")
    rejection = NoteFact(
        kind="rejection", path=b, start=8, end=8, text="keep it", old=["8"], new=["EIGHT"], hunk=True
    )
    await app.review.command(ReviewRequest(action="add", note=rejection))
    await app.review.command(comment(a, 2, "why ```this```?", old=["2"], new=["TWO"], hunk=True))
    await app.review.command(comment(b, 1, "and here", new=["one"], filetype="python"))
    await app.review.command(ReviewRequest(action="send"))
    ((sid, text, references),) = app.port.drafts
    assert sid == session.session_id
    assert text == (
        "Here is my review of your changes. Please address each note:\n\n"
        "## b.py\n\n"
        "b.py:1: and here\n```python\none\n```\n\n"
        "b.py:8: rejected (the old lines are back): keep it\n```diff\n-8\n+EIGHT\n```\n\n"
        "## a.py\n\n"
        "a.py:2: why ```this```?\n```diff\n-2\n+TWO\n```"
    )
    assert references == [
        {"kind": "reference", "path": b, "start": 1, "end": 1},
        {"kind": "reference", "path": b, "start": 8, "end": 8},
        {"kind": "reference", "path": a, "start": 2, "end": 2},
    ]
    # Marked in a prompt; the next send takes only what came since, and all again when nothing did.
    assert all(m.shown.endswith("(in a prompt)") for m in app.port.review_shown[-3:])
    await app.review.command(comment(a, 4, "later"))
    await app.review.command(ReviewRequest(action="send"))
    assert "a.py:4: later" in app.port.drafts[-1][1] and "keep it" not in app.port.drafts[-1][1]
    await app.review.command(ReviewRequest(action="send"))
    assert len(app.port.drafts[-1][2]) == 4


async def test_the_notes_go_with_their_session() -> None:
    app = App()
    _, session = await app.start("a", FakeAgent())
    await app.review.command(comment("/p/a.py", 1, "one"))
    ids = [note.id for note in session.review_notes]
    await app.commands.close_session(session.session_id)
    assert session.review_notes == [] and app.port.review_dropped == ids


async def test_a_note_follows_its_buffer_renamed_and_a_file_gone_is_named_so(tmp_path: Path) -> None:
    app = App()
    _, session = await app.start("a", FakeAgent(), cwd=str(tmp_path))
    a, b, gone = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "gone.py"
    a.write_text("")
    await app.review.command(comment(str(a), 2, "on a", new=["x"]))
    await app.review.command(comment(str(gone), 1, "on gone", new=["y"]))
    moved, stays = session.review_notes
    # The buffer of a.py is b.py now (`:saveas`): the note there names b.py, its lines where Lua says.
    b.write_text("")
    span = MarkSpan(id=moved.id, start=4, end=4)
    await app.review.command(ReviewRequest(action="renamed", path=str(b), spans=[span]))
    assert (moved.path, moved.start, stays.path) == (str(b), 4, str(gone))

    await app.review.command(ReviewRequest(action="list"))
    assert [i.text for i in app.port.review_lists[-1][1]] == [
        "comment: on a",
        "comment: on gone (not on disk now)",
    ]
    await app.review.command(ReviewRequest(action="send"))
    ((_, text, references),) = app.port.drafts
    assert "## b.py\n\nb.py:4: on a" in text
    assert "## gone.py (not on disk now)\n\ngone.py:1: on gone" in text
    # No link to a path that leads nowhere.
    assert references == [{"kind": "reference", "path": str(b), "start": 4, "end": 4}]

"""Elicitation answered by its service on an in-memory editor: a form's content validated against the
requested schema (asked once more with the problems, then cancelled), a URL completed while its question is
open. No Neovim."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import anyio
import msgspec
import pytest

from acp_nvim.app.editor.elicitation import ElicitationBroker
from acp_nvim.app.editor.port import ElicitationAnswer
from acp_nvim.protocol import schema as s
from tests.unit.app.editor.fake_port import FakeEditorPort

FORM = {
    "mode": "form",
    "sessionId": "s",
    "message": "Deploy?",
    "requestedSchema": {
        "type": "object",
        "properties": {"count": {"type": "integer", "title": "Count", "minimum": 1}},
        "required": ["count"],
    },
}
URL = {
    "mode": "url",
    "sessionId": "s",
    "elicitationId": "e1",
    "url": "https://example.com/login",
    "message": "Log in",
}


def request(raw: Mapping[str, object]) -> s.CreateElicitationRequest:
    answer: s.CreateElicitationRequest = msgspec.convert(raw, s.CreateElicitationRequest)
    return answer


@asynccontextmanager
async def asking(
    raw: Mapping[str, object],
) -> AsyncIterator[tuple[FakeEditorPort, ElicitationBroker, list[s.CreateElicitationResponse]]]:
    """The broker asking `raw` in a task of its own; its answer is in the list once the block ends."""
    editor = FakeEditorPort()
    broker = ElicitationBroker(editor)
    answers: list[s.CreateElicitationResponse] = []

    async def ask() -> None:
        answers.append(await broker.ask(request(raw)))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(ask)
        yield editor, broker, answers


@pytest.mark.anyio
async def test_a_form_is_asked_again_with_its_problems_then_cancelled() -> None:
    async with asking(FORM) as (editor, _, answers):
        (await editor.asked(1)).give(ElicitationAnswer(action="accept", content={"count": 0}))
        again = await editor.asked(2)
        assert isinstance(again.view, dict)
        assert again.view["values"] == {"count": 0} and "count" in again.view["errors"]
        again.give(ElicitationAnswer(action="accept", content={"count": 0}))
    assert answers == [s.CreateElicitationResponseCancel()]


@pytest.mark.anyio
async def test_a_valid_form_is_accepted_with_its_content() -> None:
    async with asking(FORM) as (editor, _, answers):
        (await editor.asked(1)).give(ElicitationAnswer(action="accept", content={"count": 2}))
    assert answers == [s.CreateElicitationResponseAccept(content={"count": 2})]


@pytest.mark.anyio
async def test_a_url_completed_while_asked_is_accepted_and_its_question_closed() -> None:
    async with asking(URL) as (editor, broker, answers):
        question = await editor.asked(1)
        broker.complete("e1")
    assert answers == [s.CreateElicitationResponseAccept()]
    assert question.closed
    assert editor.notified == [("acp.nvim: done: Log in", 2)]
    broker.complete("e1")  # already completed: ignored
    assert len(editor.notified) == 1

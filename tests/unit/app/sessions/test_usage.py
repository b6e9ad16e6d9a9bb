"""A turn's usage (`app/sessions/usage.py`): one compact line after the turn, and `status().turn_usage`."""

from __future__ import annotations

import pytest

from acp_nvim.app.sessions.usage import usage_line
from acp_nvim.app.views import TurnUsage
from acp_nvim.client.session.transcript import NoticeItem, Usage
from acp_nvim.protocol import schema as s
from acp_nvim.protocol import unstable as u

from ..fakes import App, FakeAgent

pytestmark = pytest.mark.anyio


def test_the_line_says_the_turns_tokens_and_the_sessions_cost() -> None:
    turn = u.Usage(
        total_tokens=12_345,
        input_tokens=10_000,
        output_tokens=2_000,
        thought_tokens=345,
        cached_read_tokens=8_000,
    )
    cost = Usage(used=1, size=2, cost_amount=0.031, cost_currency="USD")
    assert usage_line(turn, cost) == (
        "Usage: 12.3k tokens (10.0k in, 2.0k out, 345 thought, 8.0k cached) · 0.03 USD so far"
    )
    assert usage_line(u.Usage(total_tokens=15, input_tokens=10, output_tokens=5), None) == (
        "Usage: 15 tokens (10 in, 5 out)"
    )
    assert usage_line(None, cost) == "Usage: 0.03 USD so far"
    # A context figure without a cost is the winbar's, not a line of the chat.
    assert usage_line(None, Usage(used=1, size=2)) is None


async def test_a_turn_with_usage_ends_with_its_line_and_the_status_has_it() -> None:
    app = App()
    agent = FakeAgent()
    agent.usage = u.Usage(total_tokens=15, input_tokens=10, output_tokens=5, cached_read_tokens=0)
    _, session = await app.start("a", agent)
    await app.turns.prompt("hello")
    notices = [item.text for item in session.state.items if isinstance(item, NoticeItem)]
    assert notices == ["Usage: 15 tokens (10 in, 5 out)"]
    assert app.port.statuses[-1].turn_usage == TurnUsage(total=15, input=10, output=5, cached_read=0)


async def test_a_turn_without_usage_adds_no_line() -> None:
    app = App()
    agent = FakeAgent()
    _, session = await app.start("a", agent)
    session.state.apply(s.SessionUpdateUsageUpdate(used=100, size=1000))
    await app.turns.prompt("hello")
    assert not [item for item in session.state.items if isinstance(item, NoticeItem)]
    assert app.port.statuses[-1].turn_usage is None

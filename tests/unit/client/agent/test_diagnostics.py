"""Diagnostics: one message per kind of trouble, then rate-limited summaries."""

from __future__ import annotations

import pytest

from acp_nvim.client.agent.diagnostics import Diagnostics
from acp_nvim.jsonrpc import ProtocolError
from tests.trouble_log import troubles_by_kind


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(interval: float = 10.0) -> tuple[Diagnostics, list[str], Clock]:
    messages: list[str] = []
    clock = Clock()
    return Diagnostics("Gem", messages.append, interval=interval, clock=clock), messages, clock


def test_a_burst_is_one_message_and_its_count_goes_to_the_log(caplog: pytest.LogCaptureFixture) -> None:
    diagnostics, messages, clock = make()
    for _ in range(1000):
        diagnostics.report("unreadable")
        clock.now += 0.001
    diagnostics.flush()
    diagnostics.flush()
    assert messages == ["agent Gem sent a line that is not JSON (see :AcpLog)"]
    assert caplog.text.count("agent Gem sent 999 more lines that are not JSON") == 1
    assert troubles_by_kind(caplog.messages) == {"unreadable": 1000}


def test_each_kind_has_its_own_first_message() -> None:
    diagnostics, messages, _ = make()
    diagnostics.report("unreadable")
    diagnostics.report("unknown_session")
    diagnostics.report("unreadable")
    assert len(messages) == 2 and "not open" in messages[1]


def test_a_long_burst_gets_one_summary_per_interval() -> None:
    diagnostics, messages, clock = make(interval=10)
    diagnostics.report("oversized")  # t=100: first
    for _ in range(5):
        clock.now += 1
        diagnostics.report("oversized")  # t=101..105: counted
    clock.now = 111
    diagnostics.report("oversized")  # interval over: summary of these 6
    clock.now = 112
    diagnostics.report("oversized")
    diagnostics.flush()
    # Trouble that goes on past the interval is news: one count per interval, never one per line.
    assert messages[1:] == ["agent Gem sent 6 more oversized messages (dropped) (see :AcpLog)"]


def test_after_a_quiet_interval_trouble_is_news_again() -> None:
    diagnostics, messages, clock = make(interval=10)
    diagnostics.report("malformed_update", "Expected `str`")
    clock.now += 60
    diagnostics.report("malformed_update", "Expected `int`")
    assert [m.split(": ", 1)[1] for m in messages] == [
        "Expected `str` (see :AcpLog)",
        "Expected `int` (see :AcpLog)",
    ]


def test_detail_is_one_short_line() -> None:
    diagnostics, messages, _ = make()
    diagnostics.report("malformed_update", "a\nb\r\n" + "x" * 1000)
    (message,) = messages
    assert "\n" not in message and len(message) < 300 and "a b x" in message


def test_protocol_errors_are_grouped_as_the_user_sees_them(caplog: pytest.LogCaptureFixture) -> None:
    diagnostics, messages, _ = make()
    diagnostics.protocol_error(ProtocolError("not_utf8", "the agent sent a line that is not UTF-8: \ufffd"))
    diagnostics.protocol_error(ProtocolError("not_json", "the agent sent a line that is not JSON: x"))
    diagnostics.protocol_error("a plain string from an older hook")
    assert len(messages) == 2
    diagnostics.flush()
    assert troubles_by_kind(caplog.messages) == {"unreadable": 2, "not_jsonrpc": 1}
    assert isinstance(ProtocolError("oversized", "text"), str)


def test_a_failing_sink_is_contained(caplog: pytest.LogCaptureFixture) -> None:
    def sink(message: str) -> None:
        raise RuntimeError("notify failed")

    diagnostics = Diagnostics("Gem", sink)
    diagnostics.report("unreadable")
    assert "trouble sink failed" in caplog.text

"""Every request the hostile agent sends is answered exactly once, whatever its shape or size: nested deeper
than the decoder goes, over the size cap, or naming a session that does not exist. The agent's journal tells
which answers it got; the session goes on afterwards."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import anyio
import pytest

from acp_nvim.jsonrpc import InternalError
from tests.process.test_hostile import (
    SHOW_DEADLINE,
    MiB,
    answer_key,
    hostile,
    report,
    rss_mib,
    survives,
    wire,
)
from tests.trouble_log import troubles_by_kind
from tests.wire_check import WireCheck

pytestmark = pytest.mark.anyio

__all__ = ["wire"]  # the fixture, used by name

TOO_DEEP_TROUBLE = "agent Hostile sent a message nested too deeply to read; it was refused (see :AcpLog)"


async def test_deep_nesting_is_answered_and_the_session_goes_on(
    tmp_path: Path, wire: WireCheck, caplog: pytest.LogCaptureFixture
) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "deepnest")
    # Two requests and two notifications per depth (1,000 and 100,000), each reported for the log.
    assert troubles_by_kind(caplog.messages) == {"too_deep": 8}
    for index, depth in enumerate((1000, 100_000)):
        for where in ("first", "after"):
            (answer,) = answers[answer_key(f"deep{index}-{depth}-{where}")]
            assert answer["error"] == {
                "code": -32602,
                "message": "Invalid params: nested too deeply to decode",
            }
    # Neither deep update reached the chat; the 100-deep read was served.
    assert "deep" not in h.editor.agent_text()
    assert h.editor.reads >= 3
    assert h.troubles == [TOO_DEEP_TROUBLE]
    wire.assert_valid()


async def test_oversized_requests_are_answered_under_their_id_or_null(
    tmp_path: Path, wire: WireCheck
) -> None:
    async with hostile(tmp_path, wire, env={"HOSTILE_OVERSIZED_MB": "2"}, max_message_size=MiB) as h:
        answers = await survives(h, "oversized")
    (under_id,) = [a for key, v in answers.items() if key != "null" for a in v if "error" in a]
    assert under_id["error"]["data"]["limit"] == MiB and under_id["error"]["data"]["size"] > 2 * MiB
    assert "over the 1 MiB limit" in under_id["error"]["message"]
    (under_null,) = answers["null"]
    assert under_null["error"]["code"] == -32600
    assert len(h.troubles) == 1 and "over the size limit" in h.troubles[0]
    wire.assert_valid()


async def test_a_65_mib_request_against_the_default_cap(tmp_path: Path) -> None:
    async with hostile(tmp_path) as h:
        rss_before = rss_mib()
        tracemalloc.start()
        try:
            started = time.monotonic()
            await survives(h, "oversized")
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rss_growth = rss_mib() - rss_before
    report(
        f"two 65 MiB requests over the 64 MiB cap: both answered, turn took {elapsed:.1f} s; "
        f"traced peak {peak / MiB:.1f} MiB; peak RSS growth {rss_growth:.1f} MiB"
    )
    # As for any line over the cap: at most the cap is buffered, the 4 KiB head kept, the rest dropped.
    assert peak < 80 * MiB
    assert rss_growth < 80


async def test_an_oversized_answer_fails_our_request_instead_of_hanging(tmp_path: Path) -> None:
    async with hostile(tmp_path, env={"HOSTILE_OVERSIZED_MB": "2"}, max_message_size=MiB) as h:
        with anyio.fail_after(SHOW_DEADLINE), pytest.raises(InternalError) as caught:
            await h.agent.connection.request("_hostile/oversized_answer")
        assert "was dropped" in caught.value.message and "over 1 MiB" in caught.value.message
        # The connection is fine afterwards.
        await survives(h, "none")


async def test_permission_and_elicitation_for_an_unknown_session_are_errors(
    tmp_path: Path, wire: WireCheck
) -> None:
    async with hostile(tmp_path, wire) as h:
        answers = await survives(h, "permissionunknown")
    errors = [a["error"] for v in answers.values() for a in v if a.get("error", {}).get("code") == -32002]
    assert errors == [
        {
            "code": -32002,
            "message": "unknown session: no-such-session",
            "data": {"sessionId": "no-such-session"},
        }
    ]
    # Nobody was asked.
    assert h.editor.permission_requests == []
    assert h.troubles == []
    wire.assert_valid()

"""One agent's lifecycle: the phases a start, a login's reconnect, a failure and a stop go through."""

from __future__ import annotations

import anyio
import pytest

from acp_nvim.app.lifecycle import Lifecycle, Phase

pytestmark = pytest.mark.anyio


async def test_a_start_with_a_session_is_starting_until_that_session_opens() -> None:
    life = Lifecycle()
    assert (life.phase, life.phase.shown) == (Phase.CONNECTING, "starting")
    life.connected(open_first_session=True)
    assert (life.phase, life.phase.shown) == (Phase.OPENING, "starting")
    life.first_session_done(ready=True)
    assert (life.phase, life.phase.shown) == (Phase.READY, "ready")


async def test_a_start_only_to_list_sessions_is_ready_once_connected() -> None:
    life = Lifecycle()
    life.connected(open_first_session=False)
    assert life.phase is Phase.READY


async def test_a_login_reconnect_while_the_first_session_opens_keeps_it_opening() -> None:
    life = Lifecycle()
    life.connected(open_first_session=True)
    life.reconnecting()
    life.connected(open_first_session=False)
    assert life.phase is Phase.OPENING
    life.first_session_done(ready=True)
    assert life.phase is Phase.READY


async def test_a_reconnect_of_a_ready_agent_starts_and_comes_back_ready() -> None:
    life = Lifecycle()
    life.connected(open_first_session=False)
    life.reconnecting()
    assert life.phase.shown == "starting"
    life.connected(open_first_session=False)
    assert life.phase is Phase.READY


async def test_a_failed_first_session_is_an_error_that_a_login_can_turn_into_a_session() -> None:
    life = Lifecycle()
    life.connected(open_first_session=True)
    life.fail("s requires authentication")
    life.first_session_done(ready=False)
    assert (life.phase.shown, life.error) == ("error", "s requires authentication")
    life.opening()
    assert (life.phase.shown, life.error) == ("starting", None)
    life.first_session_done(ready=True)
    assert life.phase is Phase.READY


async def test_a_first_session_that_did_not_open_leaves_the_agent_starting() -> None:
    life = Lifecycle()
    life.connected(open_first_session=True)
    life.first_session_done(ready=False)
    assert life.phase.shown == "starting"
    assert life.phase is not Phase.OPENING


async def test_a_failure_on_the_way_down_does_not_undo_the_stop() -> None:
    life = Lifecycle()
    life.connected(open_first_session=False)
    life.stopping("s was stopped")
    life.fail("s stopped: exit 1")
    assert life.stop_asked and life.stop_notice == "s was stopped"
    life.stopped()
    assert (life.phase.shown, life.error) == ("stopped", None)


async def test_a_reconnect_asked_wakes_the_run_and_its_end_wakes_the_asker() -> None:
    life = Lifecycle()
    life.connected(open_first_session=False)
    attempt = life.ask_reconnect()
    with anyio.fail_after(1):
        await life.wait_reconnect_asked()
    assert not attempt.is_set()
    life.reconnecting()
    life.connected(open_first_session=False)
    with anyio.fail_after(1):
        await attempt.wait()
    life.finish()
    with anyio.fail_after(1):
        await life.wait_done()

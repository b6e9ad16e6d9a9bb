"""The host's anyio loop thread takes work from pynvim's thread without making it wait."""

from __future__ import annotations

import threading

from acp_nvim.nvim.loop_thread import LoopThread

DEADLINE = 5.0


def test_work_submitted_from_another_thread_never_waits_for_the_loop_to_take_it() -> None:
    loop = LoopThread()
    loop.start()
    assert loop.portal is not None
    busy, ran = threading.Event(), threading.Event()
    try:
        # The loop is held (a long decode, say): handing it a command must not hold the caller too, as a
        # portal's start_task_soon does (it waits until the loop has taken the task).
        loop.call_soon(lambda: busy.wait(DEADLINE))

        async def command() -> None:
            ran.set()

        loop.submit(command)
        assert not ran.is_set()
        busy.set()
        assert ran.wait(DEADLINE)
    finally:
        busy.set()
        loop.portal.call(loop.portal.stop)

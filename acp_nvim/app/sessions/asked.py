"""A session the user asked for — `:AcpNew`'s, one picked in `:AcpSessions` (loaded or resumed),
`:AcpFork`'s — opened the one way: while it is being opened it is the current one for a prompt from no chat
(`Runs.asking`), which waits for it and goes to it once it is open, or back to the user when it does not open
(`Turns.opened`).

Without it such a prompt went to the session in use before (a fork's source, the chat `:AcpNew` left), or,
for a load or a resume, to the new chat's session before the agent had it open.

The sessions a restart reopens (`:AcpRestart`, a terminal login's reconnect) wait the same way
(`reopen_asked`): a prompt from a chat being reopened waits for its session's load or resume, and one from no
chat for the current session while it is reopened, or, while none is current, for the session reopened last
(the current one once all are back), rather than go out ahead of it or be refused while the agent starts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable

from acp_nvim.app.runs import AgentRun, ChatSession, NoChat, Opening, Runs
from acp_nvim.app.sessions.turns import Turns


async def open_asked(
    runs: Runs,
    turns: Turns,
    agent: str,
    cwd: str,
    opening: Callable[[], Awaitable[ChatSession | None]],
    session_id: str | None = None,
    directories: list[str] | None = None,
) -> ChatSession | None:
    """The session `opening` opens on `agent` (in `cwd` and `directories`, where a waiting prompt's `@diff` is
    taken), or None.
    `session_id`, a stored session's: the prompts of its own chat wait too (its chat is there before the
    agent has it open). The turn of the first prompt that waited is run before this returns, as a prompt's
    own call would run it."""
    session: ChatSession | None = None
    with runs.asking(agent, cwd, session_id, directories) as asked:
        try:
            session = await opening()
        finally:
            # Before `asking` ends, with no wait between: no prompt can come in between and be lost.
            begun = turns.opened(asked, session)
    await turns.run(begun)
    return session


async def reopen_asked(
    runs: Runs,
    turns: Turns,
    run: AgentRun,
    sessions: list[ChatSession],
    reopen: Callable[[ChatSession], Awaitable[ChatSession | None]],
) -> ChatSession | None:
    """`sessions` reopened one after the other on `run` by `reopen` (which returns the session reopened, or
    None); returns the first one reopened. Each one's prompts wait for it from the start (its chat is there
    all along), and those from no chat while it is current; the last one's also while none is current
    (another agent's session, or one reopened already, takes them at once). The turn of the first prompt
    that waited runs in a task of the run's own: the next reopen, and the run's first session done, do not
    wait for it. What waited for a session that does not come back goes back to the user."""
    first: ChatSession | None = None
    with contextlib.ExitStack() as all_asked:
        asked: list[tuple[ChatSession, Opening]] = []
        for old in sessions:
            no_chat: NoChat = "none_current" if old is sessions[-1] else "none"
            asked.append(
                (
                    old,
                    all_asked.enter_context(
                        runs.asking(run.name, old.cwd, old.session_id, old.directories, no_chat)
                    ),
                )
            )
        try:
            while asked and run.connection is not None:
                old, opening = asked[0]
                reopened = await reopen(old)
                # With no wait between (no prompt can come in between and be lost); one opened meanwhile by
                # :AcpSessions (`reopen` left it): its prompts go to it all the same.
                del asked[0]
                begun = turns.opened(opening, reopened or runs.sessions.get(old.session_id))
                runs.asked_done(opening)
                first = first or reopened
                if begun is not None and run.tasks is not None:
                    run.tasks.start_soon(turns.run, begun)
                else:
                    await turns.run(begun)
        finally:
            # Cut short (the agent gone, an error): what waited for the rest goes back to the user.
            for _, opening in asked:
                turns.opened(opening, None)
    return first

"""A session the user asked for — `:AcpNew`'s, one picked in `:AcpSessions` (loaded or resumed),
`:AcpFork`'s — opened the one way: while it is being opened it is the current one for a prompt from no chat
(`Runs.asking`), which waits for it and goes to it once it is open, or back to the user when it does not open
(`Turns.opened`).

Without it such a prompt went to the session in use before (a fork's source, the chat `:AcpNew` left), or,
for a load or a resume, to the new chat's session before the agent had it open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from acp_nvim.app.runs import ChatSession, Runs
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

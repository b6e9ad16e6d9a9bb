"""What the user may want to know of while looking elsewhere (issue 30): a turn's end, a question waiting for
them, an agent's failure. Decided and worded here; Lua fires `User AcpNvimTurnEnd`, `AcpNvimWaiting` and
`AcpNvimError` with the facts and, with `opts.attention.notify`, tells the user when the chat is out of view
or Neovim out of focus (`lua/acp_nvim/ui/attention.lua`).
"""

from __future__ import annotations

from acp_nvim.app.views import Attention

# Of what a question is about, the characters a notification shows.
ABOUT_CHARS = 120


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= ABOUT_CHARS else line[:ABOUT_CHARS] + "…"


def turn_ended(agent: str, session_id: str, stop_reason: str) -> Attention:
    how = "" if stop_reason == "end_turn" else f" ({stop_reason.replace('_', ' ')})"
    return Attention(
        event="TurnEnd",
        agent=agent,
        session_id=session_id,
        session_ids=[session_id],
        stop_reason=stop_reason,
        message=f"{agent}: turn ended{how}",
        # The user ended it themselves.
        notify=stop_reason != "cancelled",
    )


def waiting(agent: str, session_id: str | None, kind: str, about: str) -> Attention:
    what = "asks permission" if kind == "permission" else "asks"
    return Attention(
        event="Waiting",
        agent=agent,
        session_id=session_id,
        session_ids=[session_id] if session_id is not None else [],
        kind=kind,
        about=about,
        message=f"{agent} {what}: {_short(about)}" if about else f"{agent} {what}",
    )


def failed(
    agent: str, message: str, session_ids: list[str], session_id: str | None = None, *, told: bool = False
) -> Attention:
    """`told`: the message was already shown with vim.notify (`StatusBoard.fail`)."""
    return Attention(
        event="Error",
        agent=agent,
        session_id=session_id,
        session_ids=session_ids,
        message=message,
        told=told,
    )

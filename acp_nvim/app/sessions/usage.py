"""A turn's usage as the chat shows it after the turn: one compact line of the tokens the agent reported for
the turn (the unstable schema's `PromptResponse.usage`) and the session's cost where the agent gives one
(`usage_update`). The context window's figure is the winbar's (`app/chat/view.py`'s `header_text`)."""

from __future__ import annotations

from acp_nvim.client.session.transcript import Usage
from acp_nvim.protocol import unstable as u


def short_count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def usage_line(turn: u.Usage | None, session: Usage | None) -> str | None:
    """`Usage: 1.2k tokens (1.0k in, 200 out, 50 thought, 800 cached) · 0.03 USD so far`, or None when the
    agent reported neither tokens for the turn nor a cost."""
    parts: list[str] = []
    if turn is not None:
        details = [f"{short_count(turn.input_tokens)} in", f"{short_count(turn.output_tokens)} out"]
        if turn.thought_tokens:
            details.append(f"{short_count(turn.thought_tokens)} thought")
        cached = (turn.cached_read_tokens or 0) + (turn.cached_write_tokens or 0)
        if cached:
            details.append(f"{short_count(cached)} cached")
        parts.append(f"{short_count(turn.total_tokens)} tokens ({', '.join(details)})")
    if session is not None and session.cost_amount is not None:
        currency = f" {session.cost_currency}" if session.cost_currency else ""
        parts.append(f"{session.cost_amount:.2f}{currency} so far")
    return "Usage: " + " · ".join(parts) if parts else None

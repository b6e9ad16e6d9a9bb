"""What the application hands Neovim to show: the status, a chat's agent, a permission question.

Plain msgspec Structs, decided here and drawn by Lua; `acp_nvim/nvim/lua_api.py` turns them into tables.
"""

from __future__ import annotations

from typing import Literal

import msgspec

#: The `state` of status(): decided here only (`status.py`; before the host answers, `status_facts.json`).
State = Literal["stopped", "starting", "ready", "running", "awaiting_permission", "error"]


class AgentIdentity(msgspec.Struct, frozen=True):
    """Who the agent says it is (`initialize`), or only its configured name before it answered."""

    name: str
    title: str | None = None
    version: str | None = None


class UsageCost(msgspec.Struct, frozen=True):
    amount: float
    currency: str | None


class Usage(msgspec.Struct, frozen=True):
    """The context window's use, as the agent last reported it."""

    used: int
    size: int
    cost: UsageCost | None = None


class TurnUsage(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The tokens of the session's last turn, as the agent reported them (unstable `PromptResponse.usage`)."""

    total: int
    input: int
    output: int
    thought: int | None = None
    cached_read: int | None = None
    cached_write: int | None = None


class Status(msgspec.Struct, frozen=True, kw_only=True):
    """What `status.set` receives (`AcpStatus` in lua/acp_nvim/ui/status.lua), which drops the None fields."""

    agent: AgentIdentity | None
    agent_name: str | None
    state: State
    session_id: str | None
    mode: str | None
    # What a person reads of the mode and the model: their names (the ids when the agent gave none).
    mode_name: str | None
    model: str | None
    model_name: str | None
    title: str | None
    usage: Usage | None
    turn_usage: TurnUsage | None
    sessions: int
    # The unstable session methods the agent advertises, of "fork", "title" (rename), "archive".
    session_features: list[str]
    auth_methods: list[str]
    protocol_version: int | None
    error: str | None
    # A permission question waiting in a session other than the current one, in words ("codex awaits
    # permission"): the statusline shows it whichever session is current.
    waiting: str | None = None


class ChatInfo(msgspec.Struct, frozen=True):
    """What `chat.create` and `chat.reset` show of a session's agent."""

    agent: str
    display_name: str
    cwd: str


class PermissionChoice(msgspec.Struct, frozen=True):
    id: str
    name: str
    kind: str


class PermissionView(msgspec.Struct, frozen=True):
    """A permission question as `permission.ask` shows it, next to the tool call (`item_id`) in the chat."""

    session_id: str
    item_id: str
    title: str
    kind: str | None
    options: list[PermissionChoice]
    # The command the request runs, on one line with its newlines and other invisible characters written out
    # (`\n`, `\u2028`, …): what is asked about, whatever the title says.
    command: str | None = None
    # The subagent that asks (its name), when the request is a subagent's (unstable child sessions).
    subagent: str | None = None
    # The picker's question when it is not "Allow KIND: TITLE?" (a plan to approve).
    question: str | None = None


class QueueView(msgspec.Struct, frozen=True):
    """The prompts queued in a chat, drawn under its last item (not part of the transcript): `lines` as the
    chat shows them (each a list of [text, highlight group]), and for each queued prompt by position its id
    and whole text (what `:AcpQueue edit` opens). `steer`: the agent takes a prompt into its running turn."""

    lines: list[list[tuple[str, str]]]
    ids: list[int]
    texts: list[str]
    steer: bool


#: What `User AcpNvim<event>` says happened: a turn ended, a question waits for the user, an agent failed.
AttentionEvent = Literal["TurnEnd", "Waiting", "Error"]


class Attention(msgspec.Struct, frozen=True, kw_only=True):
    """Something the user may want to know of while looking elsewhere, decided here (`app/attention.py`):
    Lua fires `User AcpNvim<event>` with these fields as its `data` and, with `opts.attention.notify`, tells
    the user `message` when none of `session_ids`' chats is in view of the current tab or Neovim is not
    focused (and `notify`)."""

    event: AttentionEvent
    # The configured name of the agent (an `opts.agents` key or a preset's).
    agent: str
    # The session it happened in (None: the agent's, before or outside a session).
    session_id: str | None = None
    # The chats where it shows: the session's, or an agent's error in each of its sessions.
    session_ids: list[str] = []
    # TurnEnd: the agent's stopReason ("end_turn", "max_tokens", "refusal", "cancelled", ...).
    stop_reason: str | None = None
    # Waiting: "permission" or "elicitation", and what it is about (the tool call, the form's message).
    kind: str | None = None
    about: str | None = None
    # The one line a notification says.
    message: str
    # Whether it is worth a notification (a turn the user cancelled is not).
    notify: bool = True
    # The message was already shown as a notification of Neovim's (an agent's failure): not again.
    told: bool = False

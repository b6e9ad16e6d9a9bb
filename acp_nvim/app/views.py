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
    sessions: int
    auth_methods: list[str]
    protocol_version: int | None
    error: str | None


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

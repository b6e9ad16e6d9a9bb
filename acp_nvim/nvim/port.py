"""The Neovim side of `acp_nvim.app.port.NeovimPort`: what the application shows and asks, on the bridge."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from acp_nvim.app.editor.permission import PermissionBroker
from acp_nvim.app.port import CheckpointBuffers, CheckpointQuickfix, Choice, Spawn
from acp_nvim.app.review.note import NoteItem, NoteMark
from acp_nvim.app.views import Attention, ChatInfo, PermissionView, QueueView, Status
from acp_nvim.client.session.state import SessionState
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.lua_values import LuaValue, to_lua
from acp_nvim.nvim.render import ChatRenderer
from acp_nvim.nvim.ui import Ui
from acp_nvim.protocol import schema as s


class NvimPort:
    def __init__(
        self,
        bridge: Bridge,
        spawn: Spawn,
        ui: Ui,
        broker: PermissionBroker,
        session_ended: Callable[[str], None],
    ) -> None:
        self._bridge = bridge
        self._spawn = spawn
        self._lua = LuaApi(bridge)
        self._ui = ui
        self._broker = broker
        self._session_ended = session_ended

    def notify(self, message: str, level: int) -> None:
        self._lua.notify("acp.nvim: " + message, level)

    def show_status(self, status: Status) -> None:
        self._lua.status_set(status)

    def attention(self, fact: Attention) -> None:
        self._lua.attention(fact)

    async def sent(self) -> None:
        await self._bridge.sent()

    def chat_create(self, session_id: str, info: ChatInfo, *, reset: bool = False) -> None:
        if reset:
            self._lua.chat_reset(session_id, info)
        else:
            self._lua.chat_create(session_id, info)

    def chat_destroy(self, session_id: str) -> None:
        self._lua.chat_destroy(session_id)

    def chat_open(self, session_id: str) -> None:
        self._lua.chat_open(session_id)

    def chat_view(self, state: SessionState, agent_name: str) -> ChatRenderer:
        return ChatRenderer(self._bridge, state, agent_name, self._spawn)

    def prompt_refused(self, message: str, text: str, attachments: LuaValue) -> None:
        self._lua.prompt_refused(message, text, attachments)

    def show_queue(self, session_id: str, view: QueueView) -> None:
        self._lua.chat_queue(session_id, view)

    def session_ended(self, session_id: str) -> None:
        self._session_ended(session_id)

    def review_marks(self, marks: list[NoteMark]) -> None:
        self._lua.review_marks(marks)

    def review_drop(self, ids: list[int]) -> None:
        self._lua.review_drop(ids)

    def review_list(self, title: str, items: list[NoteItem]) -> None:
        self._lua.review_list(title, items)

    def prompt_draft(self, session_id: str, text: str, attachments: LuaValue) -> None:
        self._lua.prompt_draft(session_id, text, attachments)

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        return await self._ui.select(prompt, choices, kind)

    async def ask_text(self, prompt: str, default: str) -> str | None:
        return await self._ui.ask_text(prompt, default)

    async def run_login(self, title: str, argv: Sequence[str], env: dict[str, str]) -> int:
        return await self._ui.terminal(title, argv, env)

    async def ask_permission(
        self, request: s.RequestPermissionRequest, view: PermissionView
    ) -> s.RequestPermissionOutcome:
        return await self._broker.ask(request, view)

    def cancel_permissions(self, session_id: str) -> None:
        self._broker.cancel_session(session_id)

    async def checkpoint(self, action: str, payload: CheckpointBuffers | CheckpointQuickfix) -> LuaValue:
        return await self._lua.checkpoint(action, to_lua(payload))


class CatalogPort:
    """The Neovim side of `app/registry/catalog.py`'s `CatalogPort`: the registry's ids for completion, a
    start by name, and the notifications and pickers of the main port."""

    def __init__(self, port: NvimPort, lua: LuaApi) -> None:
        self._port = port
        self._lua = lua

    def notify(self, message: str, level: int) -> None:
        self._port.notify(message, level)

    async def select(self, prompt: str, choices: Sequence[Choice], kind: str) -> str | None:
        return await self._port.select(prompt, choices, kind)

    def show_catalog(self, ids: list[str]) -> None:
        self._lua.agents_catalog(ids)

    def start_agent(self, name: str) -> None:
        self._lua.start_agent(name)

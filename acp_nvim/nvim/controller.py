"""The composition of the application (`acp_nvim/app/`) with Neovim.

The application decides (which session a command is for, what the status says, what each command does) and
runs each agent's process (`app/agent_runs.py`); this module builds it on Neovim's port and editor services,
and is the host its runs need (`RunHost`: the Neovim editor, the ACP Registry's command, Neovim quitting).
Neovim is reached only through the `Bridge`: `status()` lives in Lua and is pushed on every change, so no
Neovim call ever waits for this side. Everything here runs on the anyio thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_nvim.app.agent_runs import AgentRuns
from acp_nvim.app.application import Application
from acp_nvim.app.editor.permission import PermissionBroker
from acp_nvim.app.editor.services import Advertise, AgentEditor, EditorServices
from acp_nvim.app.port import ERROR, Spawn
from acp_nvim.app.runs import AgentRun, AgentSpec, ChatSession, Runs
from acp_nvim.client.files.agent_edits import AgentEdits
from acp_nvim.nvim.bridge import Bridge
from acp_nvim.nvim.editor import NvimEditorPort
from acp_nvim.nvim.lua_api import LuaApi
from acp_nvim.nvim.port import CatalogPort, NvimPort
from acp_nvim.nvim.ui import Ui

if TYPE_CHECKING:
    from acp_nvim.app.registry.agents import RegistryAgents
    from acp_nvim.app.registry.catalog import Catalog

__all__ = ["Controller", "Spawn"]


class Controller:
    def __init__(self, bridge: Bridge, spawn: Spawn) -> None:
        self._spawn = spawn
        self.runs = Runs()
        self.lua = LuaApi(bridge)
        self.ui = Ui(bridge.lua)
        self.editor_port = NvimEditorPort(self.lua, self.ui)
        self.broker = PermissionBroker(self.editor_port, lambda busy: self.app.status.push())
        self.services = EditorServices(
            self.editor_port, self.runs.roots, self.runs.agent_info, self.runs.owner_id
        )
        self.port = NvimPort(bridge, spawn, self.ui, self.broker, self.services.session_ended)
        # The agent's own edits on disk, followed into buffers and the review (client/files/agent_edits.py).
        self.agent_edits = AgentEdits(
            self.lua,
            self.runs.roots,
            lambda: self.services.options.max_buffer_bytes,
            lambda: self.services.options.follow,
        )
        self.app = Application(self.runs, self.port, self, self.agent_edits)
        self.agent_runs = AgentRuns(self.app, self, spawn)
        self.status, self.chats, self.sessions = self.app.status, self.app.chats, self.app.sessions
        # Neovim is quitting (set from pynvim's thread): an agent ending now was ended on purpose.
        self.leaving = False
        self._registry_parts: tuple[Catalog, RegistryAgents] | None = None

    def _registry(self) -> tuple[Catalog, RegistryAgents]:
        """The ACP Registry's list and agents (`app/registry/`: `catalog.py`, `agents.py`), built when first
        used: their modules (urllib, ssl, tarfile, zipfile: ~30 ms) stay out of the host's start."""
        if self._registry_parts is None:
            from acp_nvim.app.registry.agents import RegistryAgents
            from acp_nvim.app.registry.catalog import Catalog

            port = CatalogPort(self.port, self.lua)
            catalog = Catalog(port, self._spawn)
            self._registry_parts = (catalog, RegistryAgents(catalog, port, self))
        return self._registry_parts

    @property
    def catalog(self) -> Catalog:
        return self._registry()[0]

    @property
    def registry_agents(self) -> RegistryAgents:
        return self._registry()[1]

    def notify(self, message: str, level: int = ERROR) -> None:
        self.port.notify(message, level)

    # ---- the runs (app/agent_runs.py), on this host -------------------------------------------------

    def launch(self, spec: AgentSpec, reopen: list[ChatSession] | None = None) -> AgentRun:
        return self.agent_runs.launch(spec, reopen)

    async def stop_run(self, run: AgentRun, notice: str | None = None) -> None:
        await self.agent_runs.stop_run(run, notice)
        self.status.push()

    def running(self) -> list[AgentRun]:
        return [run for run in self.runs.agents.values() if run.alive]

    async def shutdown(self) -> None:
        await self.agent_runs.shutdown()

    def editor(self, advertise: Advertise) -> AgentEditor:
        # What the agent sends about a session goes straight to the application (`app/sessions/incoming.py`):
        # the stream's bulk passes through no extra call.
        return AgentEditor(self.services, self.app.incoming, advertise)

    async def registry_spec(self, spec: AgentSpec) -> AgentSpec:
        return await self.registry_agents.resolve(spec)

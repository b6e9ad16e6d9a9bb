# mypy: disable-error-code="untyped-decorator"
"""pynvim declarations only; every handler is one line into `acp_nvim.nvim.host`.

Registered by the Lua layer (`lua/acp_nvim/host/init.lua`), not by :UpdateRemotePlugins. Lua spawns the host
and sends `acp_bootstrap` at once, without waiting: the host answers it with a Lua call once loaded. The
synchronous `AcpNvimBootstrap` (versions included) is for :checkhealth. Everything else arrives as `rpcnotify`
on the host's channel.
"""

from __future__ import annotations

from typing import Any

import pynvim

from acp_nvim.nvim import agent_log
from acp_nvim.nvim.host import Host


@pynvim.plugin
class AcpNvimPlugin:
    def __init__(self, nvim: Any) -> None:
        self._host = Host(nvim)

    @pynvim.function("AcpNvimBootstrap", sync=True)
    def bootstrap(self, args: list[Any]) -> dict[str, Any]:
        return self._host.bootstrap(args[0] if args else None, versions=True)

    @pynvim.rpc_export("acp_bootstrap")
    def announce(self, options: Any = None) -> None:
        self._host.announce(options)

    @pynvim.rpc_export("acp_start")
    def start(self, spec: Any) -> None:
        self._host.start(spec)

    @pynvim.rpc_export("acp_stop")
    def stop(self, session_id: str | None = None) -> None:
        self._host.stop(session_id)

    @pynvim.rpc_export("acp_restart")
    def restart(self, spec: Any) -> None:
        self._host.restart(spec)

    @pynvim.rpc_export("acp_prompt")
    def prompt(self, text: str, selections: Any = None, session_id: str | None = None) -> None:
        self._host.prompt(text, selections, session_id)

    @pynvim.rpc_export("acp_cancel")
    def cancel(self, session_id: str | None = None) -> None:
        self._host.cancel(session_id)

    @pynvim.rpc_export("acp_sessions")
    def sessions(self, spec: Any, action: str, everywhere: bool, session_id: str | None = None) -> None:
        self._host.sessions(spec, action, everywhere, session_id)

    @pynvim.rpc_export("acp_mode")
    def mode(self, session_id: str | None, mode_id: str | None = None) -> None:
        self._host.mode(session_id, mode_id)

    @pynvim.rpc_export("acp_config")
    def config(self, session_id: str | None, option_id: str | None = None, value: str | None = None) -> None:
        self._host.config(session_id, option_id, value)

    @pynvim.rpc_export("acp_auth")
    def auth(self, session_id: str | None, method_id: str | None = None) -> None:
        self._host.auth(session_id, method_id)

    @pynvim.rpc_export("acp_logout")
    def logout(self, session_id: str | None = None) -> None:
        self._host.logout(session_id)

    @pynvim.rpc_export("acp_add_dir")
    def add_dir(self, session_id: str | None, directory: str) -> None:
        self._host.add_dir(session_id, directory)

    @pynvim.rpc_export("acp_disk_changed")
    def disk_changed(self, session_id: str, paths: list[str]) -> None:
        self._host.disk_changed(session_id, paths)

    @pynvim.rpc_export("acp_close")
    def close(self, session_id: str) -> None:
        self._host.close(session_id)

    @pynvim.rpc_export("acp_focus")
    def focus(self, session_id: str) -> None:
        self._host.focus(session_id)

    @pynvim.rpc_export("acp_reply")
    def reply(self, token: Any, value: Any = None) -> None:
        self._host.reply(token, value)

    @pynvim.rpc_export("acp_editor_options")
    def editor_options(self, options: Any) -> None:
        self._host.editor_options(options)

    @pynvim.rpc_export("acp_registry_load")
    def registry_load(self, options: Any) -> None:
        self._host.registry_load(options)

    @pynvim.rpc_export("acp_registry_pick")
    def registry_pick(self, options: Any, configured: list[str], default: str | None = None) -> None:
        self._host.registry_pick(options, configured, default)

    @pynvim.rpc_export("acp_registry_agents")
    def registry_agents(self, options: Any, action: str = "", agent_id: str = "") -> None:
        self._host.registry_agents(options, action, agent_id)

    @pynvim.rpc_export("acp_registry_health", sync=True)
    def registry_health(self, options: Any, default_agent: str | None = None) -> dict[str, Any]:
        return self._host.registry_health(options, default_agent)

    # ---- :AcpLog (synchronous: Lua shows the answer at once) ---------------------------------------

    @pynvim.rpc_export("acp_log_view", sync=True)
    def log_view(self, agent_name: str | None = None) -> dict[str, Any]:
        return agent_log.view(agent_name or None)

    @pynvim.rpc_export("acp_log_save", sync=True)
    def log_save(self, agent_name: str | None, path: str) -> dict[str, Any]:
        return agent_log.save(agent_name or None, path)

    @pynvim.rpc_export("acp_log_names", sync=True)
    def log_names(self) -> list[str]:
        return agent_log.names()
